internal import CFFmpeg
import MediaCore

/// Decodes one text subtitle stream (mov_text, subrip, ass/ssa, webvtt, …) to cues with libavcodec's own subtitle
/// decoders, which all give each event as an ASS dialogue line; its text is read with the override tags stripped
/// (`SubtitleCue.text(fromASS:)`). Times are the packet's, in 90 kHz ticks of the input's timeline. Not `Sendable`:
/// one task owns it.
public final class SubtitleDecoder {
    private let core: DecoderCore
    private let timeBase: Rational
    public static let timescale: Int32 = 90_000

    public var streamIndex: Int { core.streamIndex }

    init(parameters: UnsafePointer<AVCodecParameters>, streamIndex: Int, timeBase: Rational) throws {
        core = try DecoderCore(parameters: parameters, streamIndex: streamIndex, timeBase: timeBase, kind: "subtitle")
        self.timeBase = timeBase
    }

    /// The cues of one packet: from its `pts` plus the event's display start to its display end (or the packet's
    /// duration when the decoder gives none). A packet without a time or without text gives none.
    public func decode(_ input: Packet) throws -> [SubtitleCue] {
        guard let ctx = core.ctx, let packet = core.packet, let pts = input.pts else { return [] }
        try core.load(input, into: packet)
        defer { av_packet_unref(packet) }
        var sub = AVSubtitle()
        var got: Int32 = 0
        try check(avcodec_decode_subtitle2(ctx, &sub, &got, packet), "avcodec_decode_subtitle2", core.context)
        guard got != 0 else { return [] }
        defer { avsubtitle_free(&sub) }
        var texts: [String] = []
        for i in 0..<Int(sub.num_rects) {
            guard let rect = sub.rects[i], rect.pointee.type == SUBTITLE_ASS, let ass = rect.pointee.ass else { continue }
            let text = SubtitleCue.text(fromASS: String(cString: ass))
            if !text.isEmpty { texts.append(text) }
        }
        guard !texts.isEmpty else { return [] }
        let base = MediaTime.rescale(pts, timeBase: timeBase, to: Self.timescale)
        let start = base + Int64(sub.start_display_time) * Int64(Self.timescale) / 1000
        var end = base + Int64(sub.end_display_time) * Int64(Self.timescale) / 1000
        if sub.end_display_time == 0 || sub.end_display_time == UInt32.max {
            end = base + MediaTime.rescale(max(0, input.duration), timeBase: timeBase, to: Self.timescale)
        }
        guard end > start else { return [] }
        return [SubtitleCue(start: MediaTime(value: start, timescale: Self.timescale),
                            end: MediaTime(value: end, timescale: Self.timescale), text: texts.joined(separator: "\n"))]
    }
}

extension Demuxer {
    /// A decoder for a text subtitle stream (`StreamInfo.isTextSubtitle`).
    public func makeSubtitleDecoder(stream: Int) throws -> SubtitleDecoder {
        let par = try codecParameters(stream: stream, kind: .subtitle)
        return try SubtitleDecoder(parameters: par, streamIndex: stream, timeBase: streams[stream].timeBase)
    }
}
