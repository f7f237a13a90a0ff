import MediaCore

/// `emsg` (ISO/IEC 23009-1 §5.10.3.3), version 1: an event message in a media segment, timed on the media timeline
/// (`presentation_time` absolute, in its own `timescale`). Carries ID3 timed metadata (AOM "Carriage of ID3 Timed
/// Metadata in CMAF": scheme `https://aomedia.org/emsg/ID3`, version 1) in front of a segment's first `moof`.
///
/// ```
/// |emsg| v1
///   timescale u32, presentation_time u64, event_duration u32 (0xFFFFFFFF: unknown), id u32,
///   scheme_id_uri (null-terminated), value (null-terminated), message_data
/// ```
public struct EventMessage: Sendable, Equatable {
    public static let type: FourCC = "emsg"
    public static let id3Scheme = TimedEvent.id3Scheme

    public var schemeIdUri: String
    public var value: String
    public var timescale: UInt32
    public var presentationTime: UInt64
    /// `nil`: unknown (0xFFFFFFFF).
    public var duration: UInt32?
    public var id: UInt32
    public var data: [UInt8]

    public init(schemeIdUri: String, value: String = "", timescale: UInt32, presentationTime: UInt64,
                duration: UInt32? = nil, id: UInt32, data: [UInt8]) {
        self.schemeIdUri = schemeIdUri
        self.value = value
        self.timescale = timescale
        self.presentationTime = presentationTime
        self.duration = duration
        self.id = id
        self.data = data
    }

    /// The box's bytes.
    public func bytes() throws -> [UInt8] {
        var w = BoxWriter()
        try w.fullBox(Self.type, version: 1, flags: 0) { w in
            w.write(timescale)
            w.write(presentationTime)
            w.write(duration ?? 0xFFFF_FFFF)
            w.write(id)
            w.write(bytes: Array(schemeIdUri.utf8) + [0])
            w.write(bytes: Array(value.utf8) + [0])
            w.write(bytes: data)
        }
        return w.bytes
    }
}
