/// A sidecar subtitle file read into cues: WebVTT (W3C WebVTT §4, the file format) or SubRip (`.srt`). Our own small
/// parser of the parts a sidecar uses: a cue's identifier, timings, settings and text; WebVTT `NOTE`, `STYLE` and
/// `REGION` blocks are skipped. Times are milliseconds (`timescale` 1000), exactly as written.
///
/// A file that is not one (no `WEBVTT` signature, no cue at all) throws one line; a cue whose timing line is
/// malformed, or that ends before it starts, is skipped with a warning (`warnings`, one line each, with its line
/// number), the rest is read.
public struct SubtitleFile: Sendable, Equatable {
    public enum Format: String, Sendable {
        case webVTT = "vtt"
        case subRip = "srt"

        /// The format a file name's extension says (`.vtt`, `.srt`), or `nil`.
        public init?(path: String) {
            let ext = path.split(separator: ".").last.map { $0.lowercased() }
            guard path.contains("."), let ext, let f = Format(rawValue: ext) else { return nil }
            self = f
        }
    }

    public var cues: [SubtitleCue]
    public var warnings: [String]

    public static let timescale: Int32 = 1000

    public init(cues: [SubtitleCue], warnings: [String] = []) {
        self.cues = cues
        self.warnings = warnings
    }

    /// Reads `text` (the file's bytes as UTF-8; a byte order mark is ignored).
    public init(parsing text: String, format: Format) throws(SubtitleFileError) {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = first.dropFirst() }
        var index = 0
        if format == .webVTT {
            // §4.1: "The string "WEBVTT"", then a space, a tab or the end of the line.
            guard let first = lines.first, first.hasPrefix("WEBVTT"),
                  first.count == 6 || first.dropFirst(6).first == " " || first.dropFirst(6).first == "\t" else {
                throw SubtitleFileError("not a WebVTT file: it does not start with WEBVTT")
            }
            index = 1
            // The header runs to the first blank line.
            while index < lines.count, !lines[index].isBlank { index += 1 }
        }
        var cues: [SubtitleCue] = []
        var warnings: [String] = []
        while index < lines.count {
            while index < lines.count, lines[index].isBlank { index += 1 }
            guard index < lines.count else { break }
            let blockStart = index
            var block: [Substring] = []
            while index < lines.count, !lines[index].isBlank {
                block.append(lines[index])
                index += 1
            }
            if format == .webVTT, let head = block.first,
               head == "NOTE" || head.hasPrefix("NOTE ") || head.hasPrefix("NOTE\t") || head == "STYLE" || head == "REGION" {
                continue
            }
            // The timing line is the first or (after an identifier / SRT's counter) the second.
            guard let timingAt = block.prefix(2).firstIndex(where: { $0.contains("-->") }) else {
                warnings.append("line \(blockStart + 1): no cue timing (HH:MM:SS.mmm --> HH:MM:SS.mmm): block skipped")
                continue
            }
            let line = blockStart + timingAt + 1
            guard let (start, end, settings) = Self.timing(block[timingAt], format: format) else {
                warnings.append("line \(line): malformed cue timing '\(block[timingAt].prefix(80))': cue skipped")
                continue
            }
            guard end > start else {
                warnings.append("line \(line): cue ends before it starts: cue skipped")
                continue
            }
            let text = SubtitleCue.payload(block[(timingAt + 1)...].joined(separator: "\n"))
            guard !text.isEmpty else {
                warnings.append("line \(line): cue without text: skipped")
                continue
            }
            let id: String? = timingAt == 1 && format == .webVTT ? String(block[0]) : nil
            cues.append(SubtitleCue(start: MediaTime(value: start, timescale: Self.timescale),
                                    end: MediaTime(value: end, timescale: Self.timescale), text: text, id: id,
                                    settings: settings))
        }
        guard !cues.isEmpty else {
            throw SubtitleFileError("no cue in the file" + (warnings.first.map { " (\($0))" } ?? ""))
        }
        // Cues in order of their start (WebVTT §4.1 requires it; a SubRip file may not keep it).
        self.init(cues: cues.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element),
                  warnings: warnings)
    }

    /// `start --> end [settings]`: milliseconds and the WebVTT settings (none for SubRip, whose optional `X1:…`
    /// coordinates are dropped).
    static func timing(_ line: Substring, format: Format) -> (Int64, Int64, String?)? {
        guard let arrow = line.firstRange(of: "-->") else { return nil }
        let left = line[..<arrow.lowerBound].trimmingCharacters(of: " \t")
        let right = line[arrow.upperBound...].trimmingCharacters(of: " \t")
        let rightParts = right.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
        guard let endText = rightParts.first, let start = timestamp(left, format: format),
              let end = timestamp(endText, format: format) else { return nil }
        let settings = format == .webVTT && rightParts.count > 1 ? String(rightParts[1].trimmingCharacters(of: " \t")) : ""
        return (start, end, settings.isEmpty ? nil : settings)
    }

    /// Milliseconds of a timestamp: WebVTT §4.5 `[hh…:]mm:ss.ttt` (hours: two or more digits, minutes and seconds
    /// below 60); SubRip `hh:mm:ss,ttt` (a `.` is read too, as many files use it).
    public static func timestamp(_ s: Substring, format: Format) -> Int64? {
        let fractionMark: Character = format == .subRip && s.contains(",") ? "," : "."
        let halves = s.split(separator: fractionMark, omittingEmptySubsequences: false)
        guard halves.count == 2, halves[1].count == 3, let millis = digits(halves[1]) else { return nil }
        let fields = halves[0].split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3 else { return nil }
        // SubRip always writes hours; WebVTT may leave them out.
        if format == .subRip && fields.count == 2 { return nil }
        var hours: Int64 = 0
        if fields.count == 3 {
            guard fields[0].count >= 2 || format == .subRip, fields[0].count <= 9, let h = digits(fields[0]) else { return nil }
            hours = h
        }
        let mm = fields[fields.count - 2], ss = fields[fields.count - 1]
        guard mm.count == 2, ss.count == 2, let m = digits(mm), let sec = digits(ss), m < 60, sec < 60 else { return nil }
        return ((hours * 60 + m) * 60 + sec) * 1000 + millis
    }

    private static func digits(_ s: Substring) -> Int64? {
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(s)
    }
}

public struct SubtitleFileError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension Substring {
    var isBlank: Bool { allSatisfy { $0 == " " || $0 == "\t" } }

    func trimmingCharacters(of set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}

/// A subtitle rendition asked for by option (`--subtitles LANG[=PATH]`): its language and, for a sidecar file, where
/// it is (its format is the file's extension, `.vtt` or `.srt`); without a file, its cues come from the live cue API.
public struct SubtitleSidecar: Sendable, Hashable, CustomStringConvertible {
    public var language: LanguageTag
    /// The sidecar file and its format; `nil`: no file (cues posted to the stream only).
    public var file: (path: String, format: SubtitleFile.Format)? {
        guard let path, let format else { return nil }
        return (path, format)
    }
    private var path: String?
    private var format: SubtitleFile.Format?

    /// `LANG=PATH` (`en=movie.en.srt`) or `LANG` (`en`), or what is wrong.
    public static func parse(_ text: String) -> Result<SubtitleSidecar, SubtitleFileError> {
        let kv = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !kv[0].isEmpty, kv.count == 1 || !kv[1].isEmpty else {
            return .failure(SubtitleFileError("takes LANG=PATH (a sidecar file, e.g. en=movie.en.srt) or LANG (cues posted to the stream)"))
        }
        guard let language = LanguageTag(kv[0]) else {
            return .failure(SubtitleFileError("'\(kv[0])' is not a language tag (BCP 47 such as fr, or ISO 639-2 such as fra)"))
        }
        guard kv.count == 2 else { return .success(SubtitleSidecar(language: language)) }
        guard let format = SubtitleFile.Format(path: kv[1]) else {
            return .failure(SubtitleFileError("'\(kv[1])' is neither a .vtt nor a .srt file"))
        }
        return .success(SubtitleSidecar(language: language, path: kv[1], format: format))
    }

    public init(language: LanguageTag, path: String, format: SubtitleFile.Format) {
        self.language = language
        self.path = path
        self.format = format
    }

    /// A rendition without a file: its cues are posted (`POST /NAME/subtitles`).
    public init(language: LanguageTag) {
        self.language = language
    }

    public var description: String { language.bcp47 + (path.map { "=" + $0 } ?? "") }
}
