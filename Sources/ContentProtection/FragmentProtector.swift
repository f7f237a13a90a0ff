import ISOBMFF
import MediaCore

/// How one track of a rendition is protected: how its samples divide into subsamples, and its `tenc` facts under a key.
public struct ProtectedTrack: Sendable {
    public var scheme: ProtectionScheme
    public var isVideo: Bool
    /// NAL-structured video (H.264, H.265): subsamples per NAL unit; `nil`: the whole sample is protected.
    public var coding: SubsampleLayout.VideoCoding?
    public var nalLengthSize: Int
    /// Sizes each slice's header from the `avcC`'s / `hvcC`'s parameter sets (kept clear).
    public var sliceHeaders: (any SliceHeaderSizing)?

    /// The protection of `format` under `scheme`. Throws for a codec whose subsample rules are not written here (AV1's
    /// OBU rules, §9.7 of AV1-ISOBMFF).
    public init(_ format: TrackFormat, scheme: ProtectionScheme) throws {
        self.scheme = scheme
        isVideo = format.kind == .video
        switch format.codec {
        case .h264(let avcC): coding = .h264; sliceHeaders = AVCSliceHeaderReader(avcC: avcC)
        case .hevc(let hvcC): coding = .hevc; sliceHeaders = HEVCSliceHeaderReader(hvcC: hvcC)
        case .av1: throw CENCError.unsupportedCodec("AV1")
        default: coding = nil
        }
        nalLengthSize = SubsampleLayout.nalLengthSize(format.codec) ?? 4
    }

    /// The track's `tenc` (or `seig` entry) under `keyID` (and, for `cbcs`, its constant IV).
    public func encryption(keyID: [UInt8], constantIV: [UInt8]) -> TrackEncryption {
        scheme == .cenc ? .cenc(keyID: keyID) : .cbcs(keyID: keyID, constantIV: constantIV, video: isVideo)
    }
}

public enum CENCError: Error, Equatable, CustomStringConvertible {
    case unsupportedCodec(String)

    public var description: String {
        switch self {
        case .unsupportedCodec(let c): "\(c) cannot be sample-encrypted yet (cenc/cbcs cover H.264, H.265 and audio)"
        }
    }
}

/// Rewrites the fragments of a part with common encryption: each sample encrypted in place in the new fragment's own
/// buffer (its media bytes copied once, then transformed there), each `traf` written again with `senc`, `saiz` and
/// `saio` (`MediaSegmentBoxes.fragmentHeader`).
///
/// Per-sample IVs (`cenc`, 8 bytes) are a function of the timeline, so two redundant origins write the same bytes and
/// no IV repeats under one key: byte 0 the rendition's index, byte 1 the track ID, bytes 2-7 the sample's decode time
/// in its track's ticks (48 bits: 99 years at 90 kHz). Decode times increase within a track, and the first two bytes
/// keep renditions and tracks (which share the key) apart.
///
/// With key rotation each fragment states its key in every `traf` (a `seig` sample group, overriding `tenc`'s default
/// KID) and carries the key's `pssh` boxes in its `moof`.
public struct FragmentProtector: Sendable {
    public let tracks: [UInt32: ProtectedTrack]
    public let rendition: Int

    public init(tracks: [UInt32: ProtectedTrack], rendition: Int) {
        self.tracks = tracks
        self.rendition = rendition
    }

    /// The IV of the sample decoded at `dts` on `trackID` (`cenc`).
    public static func sampleIV(rendition: Int, trackID: UInt32, dts: UInt64) -> [UInt8] {
        var iv: [UInt8] = [UInt8(truncatingIfNeeded: rendition), UInt8(truncatingIfNeeded: trackID)]
        for shift in stride(from: 40, through: 0, by: -8) { iv.append(UInt8(truncatingIfNeeded: dts >> UInt64(shift))) }
        return iv
    }

    /// The protected bytes of `clear` (whole fragments, as the segmenter wrote them), and where each fragment went:
    /// its clear range (with any `styp` before it) and its new one.
    /// `key`: the protection of the fragments' key period; `rotating`: state it in each fragment (sample groups, pssh).
    /// `clearLead`: leave the samples clear, each `traf` saying so (a `seig` entry with isProtected 0, no `senc`).
    public func protect(_ clear: [UInt8], key: SampleProtection, rotating: Bool = false, clearLead: Bool = false)
        throws -> (bytes: [UInt8], fragments: [(clear: Range<Int>, protected: Range<Int>)]) {
        if clearLead { return try unprotected(clear, scheme: key.scheme) }
        let cipher = SampleCipher(scheme: key.scheme, key: key.key.bytes)
        let encryptions = tracks.mapValues { $0.encryption(keyID: key.keyID, constantIV: key.constantIV) }
        let systems = rotating ? key.systemHeaders : []
        var out: [UInt8] = []
        out.reserveCapacity(clear.count + clear.count / 64 + 256)
        var map: [(clear: Range<Int>, protected: Range<Int>)] = []
        for f in try WrittenFragment.read(clear) {
            let start = out.count
            out.append(contentsOf: clear[f.prefix])
            var trafs = f.tracks
            // Sample ranges in `clear`, then their subsamples and IVs.
            var samples: [(track: Int, range: Range<Int>, entry: SampleEncryptionEntry)] = []
            var at = f.payload.lowerBound
            for (i, t) in trafs.enumerated() {
                guard let p = tracks[t.trackID], let e = encryptions[t.trackID] else { throw WrittenFragment.notProtected(t.trackID) }
                trafs[i].isVideo = p.isVideo
                if rotating { trafs[i].sampleGroupEncryption = e }
                var entries: [SampleEncryptionEntry] = []
                entries.reserveCapacity(t.samples.count)
                var dts = t.baseMediaDecodeTime
                for s in t.samples {
                    let range = at..<(at + Int(s.size))
                    let subsamples = p.coding.map {
                        SubsampleLayout.video(clear[range], coding: $0, nalLengthSize: p.nalLengthSize, scheme: cipher.scheme,
                                              sliceHeaders: p.sliceHeaders)
                    } ?? []
                    let iv = e.perSampleIVSize == 0 ? [] : Self.sampleIV(rendition: rendition, trackID: t.trackID, dts: dts)
                    let entry = SampleEncryptionEntry(iv: iv, subsamples: subsamples)
                    entries.append(entry)
                    samples.append((i, range, entry))
                    at = range.upperBound
                    dts &+= UInt64(s.duration)
                }
                trafs[i].encryption = entries
            }
            out.append(contentsOf: try MediaSegmentBoxes.fragmentHeader(sequenceNumber: f.sequenceNumber, tracks: trafs, systems: systems))
            let payloadStart = out.count
            out.append(contentsOf: clear[f.payload])
            for s in samples {
                let e = encryptions[trafs[s.track].trackID]!
                let range = (s.range.lowerBound - f.payload.lowerBound + payloadStart)..<(s.range.upperBound - f.payload.lowerBound + payloadStart)
                try cipher.encrypt(in: &out, sample: range, iv: e.constantIV ?? s.entry.iv, subsamples: s.entry.subsamples,
                                   crypt: Int(e.cryptByteBlock), skip: Int(e.skipByteBlock))
            }
            map.append((f.prefix.lowerBound..<f.payload.upperBound, start..<out.count))
        }
        return (out, map)
    }
}

extension FragmentProtector {
    /// The fragments written again with their samples marked clear, the media bytes as they were.
    func unprotected(_ clear: [UInt8], scheme: ProtectionScheme)
        throws -> (bytes: [UInt8], fragments: [(clear: Range<Int>, protected: Range<Int>)]) {
        var out: [UInt8] = []
        out.reserveCapacity(clear.count + 128)
        var map: [(clear: Range<Int>, protected: Range<Int>)] = []
        for f in try WrittenFragment.read(clear) {
            let start = out.count
            out.append(contentsOf: clear[f.prefix])
            var trafs = f.tracks
            for i in trafs.indices {
                guard let p = tracks[trafs[i].trackID] else { throw WrittenFragment.notProtected(trafs[i].trackID) }
                trafs[i].isVideo = p.isVideo
                trafs[i].sampleGroupEncryption = .unprotected(scheme)
            }
            out.append(contentsOf: try MediaSegmentBoxes.fragmentHeader(sequenceNumber: f.sequenceNumber, tracks: trafs))
            out.append(contentsOf: clear[f.payload])
            map.append((f.prefix.lowerBound..<f.payload.upperBound, start..<out.count))
        }
        return (out, map)
    }
}

extension WrittenFragment {
    static func notProtected(_ trackID: UInt32) -> MP4Error {
        .invalidConfiguration("track \(trackID) has no protection (its init segment was not seen)")
    }
}
