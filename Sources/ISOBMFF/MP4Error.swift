import MediaCore

/// Errors of the ISO-BMFF writer and of the H.264 / AAC bitstream helpers.
///
/// Data problems throw one of these; programmer errors (a FullBox flag wider than 24 bits) are preconditions.
public enum MP4Error: Error, Equatable, Sendable {
    /// A box (or the `mdat` payload) does not fit its 32-bit size field.
    case boxTooLarge(FourCC)
    /// A decode time below zero cannot be written to `tfdt` (ISO/IEC 14496-12 §8.8.12).
    case negativeDecodeTime
    /// A `trun` `data_offset` does not fit its signed 32-bit field (ISO/IEC 14496-12 §8.8.8).
    case dataOffsetOutOfRange(trackID: UInt32)
    /// Track list or track format that cannot be written (duplicate IDs, 0x0 video, bad language, ...).
    case invalidConfiguration(String)
    /// An H.264 parameter set or access unit that cannot be parsed.
    case invalidH264(String)
    /// An H.265 parameter set or configuration record that cannot be parsed.
    case invalidHEVC(String)
    /// An AV1 configuration record that cannot be used.
    case invalidAV1(String)
    /// An ADTS header that is not valid (ISO/IEC 14496-3 §1.A.2.2).
    case invalidADTS(String)
    /// An Opus identification header or packet that is not valid (RFC 7845 §5.1, RFC 6716 §3.1).
    case invalidOpus(String)
    /// An AC-3 or E-AC-3 sync frame header that is not valid (ETSI TS 102 366 §4.3, Annex E.1).
    case invalidAC3(String)
    /// FLAC metadata (STREAMINFO) or a frame header that is not valid (RFC 9639 §8, §9.1).
    case invalidFLAC(String)
}

extension MP4Error: CustomStringConvertible {
    public var description: String {
        switch self {
        case .boxTooLarge(let type): "the '\(type)' box does not fit its 32-bit size"
        case .negativeDecodeTime: "a decode time below zero cannot be written to tfdt"
        case .dataOffsetOutOfRange(let id): "track \(id): a trun data offset does not fit 32 bits"
        case .invalidConfiguration(let what): "cannot write this track configuration: \(what)"
        case .invalidH264(let what): "invalid H.264 data: \(what)"
        case .invalidHEVC(let what): "invalid H.265 data: \(what)"
        case .invalidAV1(let what): "invalid AV1 data: \(what)"
        case .invalidADTS(let what): "invalid ADTS header: \(what)"
        case .invalidOpus(let what): "invalid Opus data: \(what)"
        case .invalidAC3(let what): "invalid AC-3 / E-AC-3 data: \(what)"
        case .invalidFLAC(let what): "invalid FLAC data: \(what)"
        }
    }
}
