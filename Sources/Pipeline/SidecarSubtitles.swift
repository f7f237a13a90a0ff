import Foundation
import Logging
import MediaCore

/// A sidecar subtitle file read at startup (`--subtitles LANG=PATH`): its cues and how its rendition is offered. A
/// file that cannot be read, or is not WebVTT or SubRip, is one error line naming it; a malformed cue is a warning
/// line and is skipped.
struct SidecarSubtitles {
    var label: SubtitleLabel
    var cues: [SubtitleCue]

    static func load(_ sidecars: [SubtitleSidecar], logger: Logger) throws -> [SidecarSubtitles] {
        var names: [String] = []
        return try sidecars.enumerated().map { i, s in
            let flag = "--subtitles \(s)"
            // NAME: the language's own name, unique in the group (§4.4.6.1.1).
            var name = s.language.nativeName ?? s.language.bcp47
            if names.contains(name) { name += " (\(i + 1))" }
            names.append(name)
            // DEFAULT=NO, AUTOSELECT=YES: a player turns them on by the viewer's language or choice, not by itself.
            let label = SubtitleLabel(language: s.language, name: name)
            guard let (path, format) = s.file else {
                logger.info("\(flag): cues posted to the stream (POST …/subtitles)")
                return SidecarSubtitles(label: label, cues: [])
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PipelineError.invalidOption("\(flag): cannot read '\(path)'")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw PipelineError.invalidOption("\(flag): not UTF-8 text")
            }
            let file: SubtitleFile
            do {
                file = try SubtitleFile(parsing: text, format: format)
            } catch {
                throw PipelineError.invalidOption("\(flag): \(error)")
            }
            for w in file.warnings { logger.warning("\(flag): \(w)") }
            logger.info("\(flag): \(file.cues.count) cues")
            return SidecarSubtitles(label: label, cues: file.cues)
        }
    }
}
