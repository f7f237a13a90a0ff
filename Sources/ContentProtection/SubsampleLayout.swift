import ISOBMFF
import MediaCore

/// Which bytes of a sample common encryption protects (ISO/IEC 23001-7 §9.5 for NAL-structured video, §9.6 and
/// §10.4.2 for the rest), as `senc` subsample entries.
///
/// Video (H.264, H.265): one subsample per VCL NAL unit. Its length prefix and NAL unit header stay clear (§9.5.1:
/// "the NAL length field and the NAL unit header shall be unencrypted"), and its slice header too
/// (`AVCSliceHeaderReader`, `HEVCSliceHeaderReader`; §9.5.2.2 "only video data in slice NALs SHOULD be encrypted"); the rest of its payload is
/// protected. Every other NAL unit (SEI, AUD, parameter sets) stays clear whole, counted into the next subsample's
/// clear bytes.
/// - `cenc`: the protected range of each subsample is a whole number of 16-byte blocks (§9.5.1 for AVC and HEVC in
///   the 3rd edition, as Shaka Packager and GPAC write it): the odd bytes, `payload % 16`, join the clear bytes
///   right after the NAL header.
/// - `cbcs`: the protected range is the whole payload after the header; the pattern encrypts 1 block in 10 of it and
///   leaves its last partial block clear (§10.4.2).
///
/// A clear run longer than a subsample's 16-bit field is split into subsamples with no protected bytes.
public enum SubsampleLayout {
    public enum VideoCoding: Sendable, Equatable {
        case h264, hevc

        /// Bytes of the NAL unit header (ISO/IEC 14496-10 §7.3.1: 1; ITU-T H.265 §7.3.1.2: 2).
        var headerSize: Int { self == .h264 ? 1 : 2 }

        /// Whether the NAL unit starting with `first` is a coded slice (H.264 types 1-5, H.265 types 0-31).
        func isVCL(_ first: UInt8) -> Bool {
            switch self {
            case .h264: (1...5).contains(first & 0x1F)
            case .hevc: (first >> 1) & 0x3F < 32
            }
        }
    }

    /// The subsamples of one length-prefixed video sample; they add up to `sample.count`. A length that overruns the
    /// sample ends the walk, the rest counted clear.
    public static func video(_ sample: [UInt8], coding: VideoCoding, nalLengthSize: Int,
                             scheme: ProtectionScheme, sliceHeaders: (any SliceHeaderSizing)? = nil) -> [SubsampleEntry] {
        video(sample[...], coding: coding, nalLengthSize: nalLengthSize, scheme: scheme, sliceHeaders: sliceHeaders)
    }

    /// `sliceHeaders` (H.264, H.265): each slice's header stays clear too (§9.5.2.2: "only video data in slice NALs SHOULD be
    /// encrypted"); a slice it cannot size keeps only its NAL header clear.
    public static func video(_ sample: ArraySlice<UInt8>, coding: VideoCoding, nalLengthSize: Int,
                             scheme: ProtectionScheme, sliceHeaders: (any SliceHeaderSizing)? = nil) -> [SubsampleEntry] {
        var out: [SubsampleEntry] = []
        var clear = 0
        var i = sample.startIndex
        func emit(protected: Int) {
            while clear > Int(UInt16.max) {
                out.append(SubsampleEntry(clear: .max, protected: 0))
                clear -= Int(UInt16.max)
            }
            out.append(SubsampleEntry(clear: UInt16(clear), protected: UInt32(protected)))
            clear = 0
        }
        while i + nalLengthSize <= sample.endIndex {
            var length = 0
            for k in 0..<nalLengthSize { length = length << 8 | Int(sample[i + k]) }
            let nal = i + nalLengthSize
            guard length > 0, nal + length <= sample.endIndex else { break }
            if length > coding.headerSize, coding.isVCL(sample[nal]) {
                let header = sliceHeaders?.headerSize(nal: sample[nal..<(nal + length)]) ?? coding.headerSize
                let payload = length - header
                let odd = scheme == .cenc ? payload % 16 : 0
                clear += nalLengthSize + header + odd
                if payload - odd > 0 { emit(protected: payload - odd) }
            } else {
                clear += nalLengthSize + length
            }
            i = nal + length
        }
        clear += sample.endIndex - i
        if clear > 0 || out.isEmpty { emit(protected: 0) }
        return out
    }

    /// The NAL length size an `avcC` / `hvcC` states (`lengthSizeMinusOne + 1`), 4 when the record is too short.
    public static func nalLengthSize(_ codec: TrackFormat.Codec) -> Int? {
        switch codec {
        case .h264(let avcC): avcC.count > 4 ? Int(avcC[4] & 3) + 1 : 4
        case .hevc(let hvcC): hvcC.count > 21 ? Int(hvcC[21] & 3) + 1 : 4
        default: nil
        }
    }
}
