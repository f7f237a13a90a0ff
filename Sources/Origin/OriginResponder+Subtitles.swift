import Foundation
import Hummingbird
import MediaCore
import MediaPresentation

/// `POST /NAME/subtitles`: a live subtitle cue for one of the stream's subtitle renditions (docs/subtitles.md), behind
/// the same credential as `POST /NAME/events` (`authorizedPost`). The body is JSON:
///
/// ```
/// {"language": "en", "text": "Hello", "duration": 2.5, "delay": 1}
/// ```
/// 201 `{"language": "en"}`; 400 a malformed body or value (naming its field), 422 no subtitle rendition in that
/// language. The cue starts `delay` seconds (default 0) after the live edge and is in the next segments it shows in.
extension OriginResponder {
    func postSubtitle(_ request: Request, _ presentation: LivePresentation) async -> Response {
        await authorizedPost(request) { body in
            do throws(EventRequest.Refusal) {
                let languages = (presentation.layout?.renditions ?? []).filter(\.isWebVTTSubtitles).compactMap(\.language)
                let posted = try SubtitleRequest.cue(body, languages: languages)
                presentation.eventInbox.post(posted)
                return send(Self.apiJSON(.created, Self.encode(SubtitleRequest.Accepted(language: posted.language))), request)
            } catch {
                return send(Self.apiError(error.status, APIError(error: error.message, field: error.field)), request)
            }
        }
    }
}

/// The body of `POST /NAME/subtitles`, read and checked (pure: `OriginTests` test it without a server).
struct SubtitleRequest: Decodable {
    var language: String?
    var text: String
    /// Seconds the cue shows.
    var duration: Double
    /// Seconds after the live edge (`0`: now).
    var delay: Double?
    var id: String?
    /// WebVTT cue settings (`line:0 align:start`).
    var settings: String?

    struct Accepted: Encodable {
        var language: String
    }

    /// The longest a cue may show, how far ahead it may start, and the most text it may carry.
    static let maxDuration = 60.0
    static let maxDelay = 3_600.0
    static let maxText = 4096

    /// The cue `body` posts to one of `languages` (the stream's subtitle renditions, BCP 47; a body without
    /// `language` goes to the first); `EventRequest.Refusal` says why not.
    static func cue(_ body: [UInt8], languages: [String]) throws(EventRequest.Refusal) -> PostedCue {
        let r: SubtitleRequest
        do {
            r = try JSONDecoder().decode(SubtitleRequest.self, from: Data(body))
        } catch {
            throw EventRequest.Refusal(status: .badRequest, message: "the body is not a cue: \(EventRequest.describe(error))")
        }
        guard let first = languages.first else {
            throw EventRequest.Refusal(status: .unprocessableContent, message: "the stream has no subtitle rendition (serve it with --subtitles LANG)")
        }
        var language = first
        if let text = r.language {
            guard let tag = LanguageTag(text) else {
                throw EventRequest.Refusal(status: .badRequest, message: "language must be a language tag (en, fra)", field: "language")
            }
            guard languages.contains(tag.bcp47) else {
                throw EventRequest.Refusal(status: .unprocessableContent,
                                           message: "the stream has no subtitle rendition in \(tag.bcp47) (it has \(languages.joined(separator: ", ")))",
                                           field: "language")
            }
            language = tag.bcp47
        }
        let text = SubtitleCue.payload(r.text)
        guard !text.isEmpty, r.text.utf8.count <= maxText else {
            throw EventRequest.Refusal(status: .badRequest, message: "text must be 1 to \(maxText) bytes of text", field: "text")
        }
        guard r.duration.isFinite, r.duration > 0, r.duration <= maxDuration else {
            throw EventRequest.Refusal(status: .badRequest, message: "duration must be seconds above 0, at most \(Int(maxDuration))", field: "duration")
        }
        let delay = r.delay ?? 0
        guard delay.isFinite, delay >= 0, delay <= maxDelay else {
            throw EventRequest.Refusal(status: .badRequest, message: "delay must be 0 to \(Int(maxDelay)) seconds", field: "delay")
        }
        for (value, field) in [(r.id, "id"), (r.settings, "settings")] {
            if let value, value.isEmpty || value.utf8.count > 256 || value.contains(where: \.isNewline) || value.contains("-->") {
                throw EventRequest.Refusal(status: .badRequest, message: "\(field) must be one line of 1 to 256 bytes without -->", field: field)
            }
        }
        let start = Int64((delay * 1000).rounded()), end = start + max(1, Int64((r.duration * 1000).rounded()))
        return PostedCue(language: language, cue: SubtitleCue(start: .milliseconds(start), end: .milliseconds(end), text: text,
                                                                id: r.id, settings: r.settings))
    }
}
