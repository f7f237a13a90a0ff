import MediaCore

/// A parsed ADTS frame header, ISO/IEC 14496-3 §1.A.2.2.1 (`adts_fixed_header` + `adts_variable_header`).
public struct ADTSHeader: Sendable, Equatable {
    /// The 2-bit profile field; the MPEG-4 Audio Object Type is `profile + 1` (1 = AAC LC -> AOT 2).
    public var profile: UInt8
    public var samplingFrequencyIndex: UInt8
    /// Hz, from `samplingFrequencyIndex` (Table 1.18).
    public var sampleRate: Int
    public var channelConfiguration: UInt8
    /// Length of the whole frame including the header, in bytes.
    public var frameLength: Int
    /// 7 bytes, or 9 when a CRC follows (`protection_absent` = 0).
    public var headerLength: Int
    /// `number_of_raw_data_blocks_in_frame` + 1.
    public var rawDataBlocks: Int

    /// The MPEG-4 Audio Object Type (ISO/IEC 14496-3 §1.5.1.1).
    public var audioObjectType: UInt8 { profile + 1 }

    /// Sampling frequencies by index, ISO/IEC 14496-3 Table 1.18.
    public static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// Parses the first 7 bytes of `bytes` (9 are not needed: the CRC is not checked).
    public init(_ bytes: some Collection<UInt8>) throws {
        let b = Array(bytes.prefix(7))
        guard b.count == 7 else { throw MP4Error.invalidADTS("header needs 7 bytes, got \(b.count)") }
        guard b[0] == 0xFF, b[1] & 0xF0 == 0xF0 else { throw MP4Error.invalidADTS("no sync word") }
        guard b[1] & 0x06 == 0 else { throw MP4Error.invalidADTS("layer is not 0") }
        let protectionAbsent = b[1] & 0x01 == 1
        profile = b[2] >> 6
        samplingFrequencyIndex = (b[2] >> 2) & 0x0F
        guard Int(samplingFrequencyIndex) < ADTSHeader.sampleRates.count else {
            throw MP4Error.invalidADTS("sampling_frequency_index \(samplingFrequencyIndex)")
        }
        sampleRate = ADTSHeader.sampleRates[Int(samplingFrequencyIndex)]
        channelConfiguration = (b[2] & 0x01) << 2 | b[3] >> 6
        frameLength = Int(b[3] & 0x03) << 11 | Int(b[4]) << 3 | Int(b[5] >> 5)
        headerLength = protectionAbsent ? 7 : 9
        rawDataBlocks = Int(b[6] & 0x03) + 1
        guard frameLength > headerLength else { throw MP4Error.invalidADTS("frame_length \(frameLength)") }
    }
}

/// AAC in ADTS framing (ISO/IEC 14496-3 §1.A.2): raw .aac files and MPEG-TS audio.
public enum ADTS {
    /// Whether `data` starts with an ADTS sync word (12 bits set, layer 0).
    public static func isADTS(_ data: [UInt8]) -> Bool {
        data.count >= 2 && data[0] == 0xFF && data[1] & 0xF6 == 0xF0
    }

    /// Splits an ADTS byte run (one or more frames) into raw AAC frames; throws on a bad sync word or a
    /// frame that overruns the data. Frames with several raw data blocks are rejected (each MP4 sample
    /// must be one 1024-sample access unit).
    public static func frames(in data: [UInt8]) throws -> [(header: ADTSHeader, payload: ArraySlice<UInt8>)] {
        var result: [(header: ADTSHeader, payload: ArraySlice<UInt8>)] = []
        result.reserveCapacity(data.count / 128 + 1)
        var i = 0
        while i < data.count {
            let header = try ADTSHeader(data[i...])
            guard header.rawDataBlocks == 1 else {
                throw MP4Error.invalidADTS("\(header.rawDataBlocks) raw data blocks in one frame")
            }
            guard header.frameLength <= data.count - i else {
                throw MP4Error.invalidADTS("frame of \(header.frameLength) bytes overruns the data at \(i)")
            }
            result.append((header, data[(i + header.headerLength)..<(i + header.frameLength)]))
            i += header.frameLength
        }
        return result
    }

    /// The 2-byte AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1) for an ADTS header:
    /// audioObjectType(5) samplingFrequencyIndex(4) channelConfiguration(4) GASpecificConfig 0 0 0.
    public static func audioSpecificConfig(for header: ADTSHeader) -> [UInt8] {
        let aot = header.audioObjectType, sfi = header.samplingFrequencyIndex, ch = header.channelConfiguration
        return [aot << 3 | sfi >> 1, (sfi & 1) << 7 | (ch & 0x0F) << 3]
    }
}
