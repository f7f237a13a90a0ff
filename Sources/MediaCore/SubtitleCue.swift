/// One subtitle cue: text shown from `start` to `end` (W3C WebVTT §3.3 "WebVTT cue"), in integer ticks of a timescale
/// like every time in the chain (a sidecar file's cues in milliseconds, an input track's in its stream time base
/// converted once). A cue travels forward as it is: every output (a WebVTT segment, a `vttc` sample) is written from it.
public struct SubtitleCue: Sendable, Hashable {
    public var start: MediaTime
    public var end: MediaTime
    /// The cue payload: plain text with WebVTT's own markup (`<i>`, `<b>`), lines separated by `\n`, never empty and
    /// never containing a blank line or `-->` (WebVTT §4.1: a cue's text ends at the first blank line).
    public var text: String
    /// The WebVTT cue identifier (`iden`), when the source gave one.
    public var id: String?
    /// The WebVTT cue settings (`line:0 align:start`, `sttg`), when the source gave them.
    public var settings: String?

    public init(start: MediaTime, end: MediaTime, text: String, id: String? = nil, settings: String? = nil) {
        self.start = start
        self.end = end
        self.text = text
        self.id = id
        self.settings = settings
    }

    /// The cue `offset` later (a looped input's next pass).
    public func shifted(by offset: MediaTime) -> SubtitleCue {
        var c = self
        c.start = start + offset
        c.end = end + offset
        return c
    }

    /// The cue shifted by `offset` and rescaled to `timescale` (both ends rounded to nearest, so a cue never grows
    /// or shrinks by more than one tick).
    public func placed(shift offset: MediaTime, timescale: Int32) -> SubtitleCue {
        var c = self
        c.start = start.converted(to: timescale, rounding: .nearest) + offset.converted(to: timescale, rounding: .nearest)
        c.end = end.converted(to: timescale, rounding: .nearest) + offset.converted(to: timescale, rounding: .nearest)
        return c
    }

    /// Whether the cue shows at some time in `[from, to)`.
    public func overlaps(from: MediaTime, to: MediaTime) -> Bool { start < to && end > from }

    /// `text` as a WebVTT cue payload allows it: lines split at CR, LF or CRLF and joined with `\n`, blank lines
    /// dropped (one would end the cue), `-->` written `--&gt;` (WebVTT §4.1: "The cue payload … must not contain
    /// the substring '-->'").
    public static func payload(_ text: String) -> String {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingTrailingSpaces() }.filter { !$0.isEmpty }
        return replacingArrows(lines.joined(separator: "\n"))
    }

    static func replacingArrows(_ s: String) -> String {
        guard s.contains("-->") else { return s }
        var out = ""
        var rest = Substring(s)
        while let r = rest.firstRange(of: "-->") {
            out += rest[..<r.lowerBound] + "--&gt;"
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

extension Substring {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// How a subtitle rendition is offered among the subtitle languages (RFC 8216bis §4.4.6.1 `NAME`, `DEFAULT`,
/// `AUTOSELECT`, `FORCED`; the DASH `Role`).
public struct SubtitleLabel: Sendable, Hashable {
    public var language: LanguageTag?
    /// `NAME`: readable, unique in the group ("English", "Français").
    public var name: String
    public var isDefault: Bool
    public var autoselect: Bool
    /// `FORCED=YES`: only the text a viewer needs whatever they chose (a foreign-language line), §4.4.6.1.
    public var forced: Bool

    public init(language: LanguageTag?, name: String, isDefault: Bool = false, autoselect: Bool = true, forced: Bool = false) {
        self.language = language
        self.name = name
        self.isDefault = isDefault
        self.autoselect = autoselect || isDefault
        self.forced = forced
    }
}

/// A WebVTT file of one HLS subtitle segment (RFC 8216 §3.5 "WebVTT", W3C WebVTT §4):
///
/// ```
/// WEBVTT
/// X-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000
///
/// 00:00:04.000 --> 00:00:06.500 line:85%
/// Hello
///
/// ```
///
/// RFC 8216 §3.5: "each WebVTT segment MUST contain all subtitle cues that are intended to be displayed during the
/// period indicated by the segment EXTINF duration", so a cue that spans a boundary is written whole in every
/// segment it overlaps (players drop the repeat: hls.js by its start, end and text), and a segment with no cue is the
/// header alone. Cue times are on the media timeline of the video's `tfdt` (seconds of it), and the
/// `X-TIMESTAMP-MAP` says so: `LOCAL:00:00:00.000` is `tfdt` 0, whose 90 kHz value is `MPEGTS:0` (§3.5: "the
/// MPEGTS media timestamp … the LOCAL cue time"). A client that applies the map and one that ignores it (FFmpeg's
/// WebVTT demuxer) place the cues at the same time.
public enum WebVTTSegment {
    /// The bytes of the segment `[from, to)`: the cues of `cues` (on the media timeline) that show in it, in order.
    public static func make(_ cues: [SubtitleCue], from: MediaTime, to: MediaTime) -> [UInt8] {
        var out = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n"
        for c in cues where c.overlaps(from: from, to: to) {
            out += "\n"
            if let id = c.id { out += SubtitleCue.replacingArrows(id) + "\n" }
            out += timestamp(c.start) + " --> " + timestamp(c.end)
            if let s = c.settings { out += " " + s }
            out += "\n" + c.text + "\n"
        }
        // A blank line at the end: a reader that joins the segments into one stream (FFmpeg's HLS demuxer) then sees
        // the next segment's header as a block of its own, not as more text of this segment's last cue.
        return Array((out + "\n").utf8)
    }

    /// WebVTT §4.5 `hh:mm:ss.ttt` (hours two digits or more), rounded to the nearest millisecond; before 0 as 0.
    public static func timestamp(_ t: MediaTime) -> String {
        let ms = max(0, MediaTime.rescale(t.value, from: t.timescale, to: 1000, rounding: .nearest))
        let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, f = ms % 1000
        func pad(_ v: Int64, _ n: Int) -> String { String(repeating: "0", count: max(0, n - String(v).count)) + String(v) }
        return pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + "." + pad(f, 3)
    }
}

extension SubtitleCue {
    /// The text of an ASS dialogue event as libavcodec's subtitle decoders give it (`ReadOrder,Layer,Style,Name,
    /// MarginL,MarginR,MarginV,Effect,Text`, or a whole `Dialogue:` line): the Text field with its override blocks
    /// (`{\i1}`, `{\pos(10,20)}`) removed, `\N` and `\n` as line breaks, `\h` as a space, as a WebVTT payload.
    public static func text(fromASS line: String) -> String {
        var rest = Substring(line)
        var fields = 8
        if rest.hasPrefix("Dialogue:") {
            // `Dialogue: Layer,Start,End,Style,Name,MarginL,MarginR,MarginV,Effect,Text`: nine before the text.
            rest = rest.dropFirst("Dialogue:".count)
            fields = 9
        }
        for _ in 0..<fields {
            guard let comma = rest.firstIndex(of: ",") else { return "" }
            rest = rest[rest.index(after: comma)...]
        }
        var out = ""
        var inBlock = false
        var i = rest.startIndex
        while i < rest.endIndex {
            let c = rest[i]
            if inBlock {
                if c == "}" { inBlock = false }
            } else if c == "{" {
                inBlock = true
            } else if c == "\\", rest.index(after: i) < rest.endIndex,
                      let escape = Optional(rest[rest.index(after: i)]), "Nnh".contains(escape) {
                out += escape == "h" ? " " : "\n"
                i = rest.index(after: i)
            } else {
                out.append(c)
            }
            i = rest.index(after: i)
        }
        return payload(out)
    }
}
