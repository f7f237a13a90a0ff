import FFmpegBridge
import ISOBMFF
import MediaCore

/// Finds the closed captions a video input carries (ATSC A/53 `cc_data` in its H.264 or H.265 SEI, or in its MPEG-2
/// pictures' user data) in its first access units, before the stream starts: the first packet with captions decides,
/// else the first keyframe decides there are none. What the output signals is known before its first segment;
/// captions that begin later are carried (the bytes are copied or re-encoded with them) but not signalled unless
/// `--captions` names them.
struct CaptionProbe {
    private enum Syntax { case h264, hevc, mpeg2 }
    /// `nil`: the codec carries no A/53 data the probe reads (nothing to find).
    private let syntax: Syntax?
    private(set) var decided: Bool
    /// The services found (empty: none).
    private(set) var found: [CaptionService] = []

    init(stream: StreamInfo) {
        syntax = stream.isH264 ? .h264 : stream.isHEVC ? .hevc : stream.isMPEG2Video ? .mpeg2 : nil
        decided = syntax == nil
    }

    /// Reads one packet of the input while undecided. True when this packet found captions (the formats change).
    mutating func look(at packet: Packet) -> Bool {
        guard !decided, let syntax else { return false }
        let presence = syntax == .mpeg2 ? MPEG2Video.captions(inPicture: packet.data)
            : SEI.captions(inAccessUnit: packet.data, hevc: syntax == .hevc)
        if !presence.isEmpty {
            found = presence.services
            decided = true
            return true
        }
        if packet.isKeyframe { decided = true }
        return false
    }
}

extension TrackFormat {
    /// This format with `services` signalled when its codec carries them in its pictures (H.264 and H.265 SEI; not AV1,
    /// whose encoder here drops frame side data).
    func carrying(_ services: [CaptionService]) -> TrackFormat {
        var f = self
        switch codec {
        case .h264, .hevc: f.captions = services
        default: f.captions = []
        }
        return f
    }
}
