import MediaCore

/// One sample of a track fragment as `trun` records it.
public struct FragmentSample: Sendable, Equatable {
    /// Ticks of the track timescale until the next sample's decode time.
    public var duration: UInt32
    /// Payload bytes in `mdat`.
    public var size: UInt32
    /// A sync sample (IDR, or any audio frame).
    public var isSync: Bool
    /// `pts - dts` in ticks; negative values are allowed (`trun` version 1).
    public var compositionOffset: Int32

    public init(duration: UInt32, size: UInt32, isSync: Bool, compositionOffset: Int32 = 0) {
        self.duration = duration
        self.size = size
        self.isSync = isSync
        self.compositionOffset = compositionOffset
    }
}

/// The samples of one track inside one `moof`.
public struct TrackFragment: Sendable {
    public var trackID: UInt32
    /// Decode time of the first sample in track ticks (`tfdt`).
    public var baseMediaDecodeTime: UInt64
    public var samples: [FragmentSample]
    /// Selects the sample flags: video non-sync samples depend on others and are non-sync;
    /// sync video samples and all audio samples depend on nothing (see `SampleFlags`).
    public var isVideo: Bool
    /// Common encryption (ISO/IEC 23001-7): one `senc` entry per sample, written with `saiz` and `saio`; `nil`: clear.
    public var encryption: [SampleEncryptionEntry]? = nil
    /// With key rotation: this fragment's key (KID, pattern, IVs) as a `seig` sample group (`sbgp` + `sgpd`).
    public var sampleGroupEncryption: TrackEncryption? = nil

    public init(trackID: UInt32, baseMediaDecodeTime: UInt64, samples: [FragmentSample], isVideo: Bool) {
        self.trackID = trackID
        self.baseMediaDecodeTime = baseMediaDecodeTime
        self.samples = samples
        self.isVideo = isVideo
    }

    /// A fragment whose first decode time comes as signed ticks (a `Sample.dts`); `tfdt` cannot hold a negative
    /// time (ISO/IEC 14496-12 §8.8.12), so a DTS below zero throws `MP4Error.negativeDecodeTime`.
    public init(trackID: UInt32, decodeTime: Int64, samples: [FragmentSample], isVideo: Bool) throws {
        guard decodeTime >= 0 else { throw MP4Error.negativeDecodeTime }
        self.init(trackID: trackID, baseMediaDecodeTime: UInt64(decodeTime), samples: samples, isVideo: isVideo)
    }

    /// Sum of the sample sizes: the bytes this track contributes to `mdat`.
    public var payloadSize: Int { samples.reduce(0) { $0 + Int($1.size) } }
}

/// The 32-bit sample flags of ISO/IEC 14496-12 §8.8.3.1:
/// `reserved(4) is_leading(2) sample_depends_on(2) sample_is_depended_on(2) sample_has_redundancy(2)
///  sample_padding_value(3) sample_is_non_sync_sample(1) sample_degradation_priority(16)`.
public struct SampleFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// sample_depends_on = 1: this sample does depend on others (not an I picture).
    public static let dependsOnOthers = SampleFlags(rawValue: 1 << 24)
    /// sample_depends_on = 2: this sample does not depend on others (I picture, audio frame).
    public static let dependsOnNoOthers = SampleFlags(rawValue: 2 << 24)
    /// sample_is_non_sync_sample = 1.
    public static let isNonSync = SampleFlags(rawValue: 1 << 16)

    /// 0x02000000 for sync video and all audio, 0x01010000 for non-sync video.
    public static func forSample(isSync: Bool, isVideo: Bool) -> SampleFlags {
        (isVideo && !isSync) ? [.dependsOnOthers, .isNonSync] : .dependsOnNoOthers
    }
}

/// `tr_flags` of `trun`, ISO/IEC 14496-12 §8.8.8.1.
public struct TrackRunFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let dataOffsetPresent = TrackRunFlags(rawValue: 0x000001)
    public static let firstSampleFlagsPresent = TrackRunFlags(rawValue: 0x000004)
    public static let sampleDurationPresent = TrackRunFlags(rawValue: 0x000100)
    public static let sampleSizePresent = TrackRunFlags(rawValue: 0x000200)
    public static let sampleFlagsPresent = TrackRunFlags(rawValue: 0x000400)
    public static let sampleCompositionTimeOffsetsPresent = TrackRunFlags(rawValue: 0x000800)
}

/// `tf_flags` of `tfhd`, ISO/IEC 14496-12 §8.8.7.1.
public struct TrackFragmentHeaderFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let baseDataOffsetPresent = TrackFragmentHeaderFlags(rawValue: 0x000001)
    public static let defaultSampleFlagsPresent = TrackFragmentHeaderFlags(rawValue: 0x000020)
    public static let defaultBaseIsMoof = TrackFragmentHeaderFlags(rawValue: 0x020000)
}

/// `mfhd`, ISO/IEC 14496-12 §8.8.5.
public enum MovieFragmentHeaderBox {
    public static let type: FourCC = "mfhd"
    public static func write(to w: inout BoxWriter, sequenceNumber: UInt32) throws {
        try w.fullBox(type, version: 0, flags: 0) { w in w.write(sequenceNumber) }
    }
}

/// `tfhd`, ISO/IEC 14496-12 §8.8.7: only the track ID, with default-base-is-moof (§8.8.7.1) so `trun`
/// data offsets count from the start of the enclosing `moof`.
public enum TrackFragmentHeaderBox {
    public static let type: FourCC = "tfhd"
    public static func write(to w: inout BoxWriter, trackID: UInt32) throws {
        try w.fullBox(type, version: 0, flags: TrackFragmentHeaderFlags.defaultBaseIsMoof.rawValue) { w in
            w.write(trackID)
        }
    }
}

/// `tfdt`, ISO/IEC 14496-12 §8.8.12: version 1, 64-bit baseMediaDecodeTime.
public enum TrackFragmentBaseMediaDecodeTimeBox {
    public static let type: FourCC = "tfdt"
    public static func write(to w: inout BoxWriter, baseMediaDecodeTime: UInt64) throws {
        try w.fullBox(type, version: 1, flags: 0) { w in w.write(baseMediaDecodeTime) }
    }
}

/// `trun`, ISO/IEC 14496-12 §8.8.8: version 1 (signed composition offsets), data offset plus per-sample
/// duration, size, flags and composition offset. Returns the buffer offset of `data_offset` for back-patching.
public enum TrackRunBox {
    public static let type: FourCC = "trun"
    public static let flags: TrackRunFlags = [.dataOffsetPresent, .sampleDurationPresent, .sampleSizePresent,
                                              .sampleFlagsPresent, .sampleCompositionTimeOffsetsPresent]

    @discardableResult
    public static func write(to w: inout BoxWriter, samples: [FragmentSample], isVideo: Bool) throws -> Int {
        var dataOffsetAt = 0
        try w.fullBox(type, version: 1, flags: flags.rawValue) { w in
            w.write(UInt32(samples.count))                       // sample_count
            dataOffsetAt = w.count
            w.write(Int32(0))                                    // data_offset, patched once mdat is placed
            let sync = SampleFlags.forSample(isSync: true, isVideo: isVideo).rawValue
            let nonSync = SampleFlags.forSample(isSync: false, isVideo: isVideo).rawValue
            for s in samples {
                w.write(s.duration)                              // sample_duration
                w.write(s.size)                                  // sample_size
                w.write(s.isSync ? sync : nonSync)               // sample_flags
                w.write(s.compositionOffset)                     // sample_composition_time_offset (signed, v1)
            }
        }
        return dataOffsetAt
    }
}

/// The boxes in front of a media segment's sample payloads.
public enum MediaSegmentBoxes {
    /// Major brand of `styp`: `msdh`, the DASH media segment brand (ISO/IEC 23009-1 §6.3.4.2). Not `msix`:
    /// the segments carry no `sidx`.
    public static let stypMajorBrand: FourCC = "msdh"
    /// `msdh`; `cmfs`, the CMAF segment brand (ISO/IEC 23000-19 §7.3.2 / Table 11 — every segment here is one
    /// CMAF fragment starting with a sync sample); `iso6`, the ISO-BMFF feature set used (tfdt, trun v1).
    public static let stypCompatibleBrands: [FourCC] = ["msdh", "cmfs", "iso6"]

    /// `styp` (ISO/IEC 14496-12 §8.16.2) for a media segment.
    public static func styp() -> [UInt8] {
        var w = BoxWriter(reservingCapacity: 8 + 8 + 4 * stypCompatibleBrands.count)
        // Cannot throw: a 28-byte box always fits its size field.
        _ = try? w.box("styp") { w in
            w.write(stypMajorBrand)
            w.write(UInt32(0))
            for b in stypCompatibleBrands { w.write(b) }
        }
        return w.bytes
    }

    /// `moof` followed by the `mdat` header. The caller appends the sample payloads right after: all samples
    /// of `tracks[0]` in order, then `tracks[1]`, ...
    ///
    /// ```
    /// |moof|
    ///   |mfhd|                      sequence_number
    ///   (|pssh|)                    key rotation: the fragment's key's initialization data
    ///   |traf|                      one per track, in the order given
    ///     |tfhd|                    track_ID, default-base-is-moof
    ///     |tfdt|                    v1 baseMediaDecodeTime
    ///     |trun|                    v1 data_offset + duration/size/flags/cts per sample
    ///     (|sbgp| |sgpd|)           key rotation: the fragment's KID as a seig sample group
    ///     (|senc| |saiz| |saio|)    protected tracks: IVs and subsamples, saio pointing into senc from the moof
    /// |mdat| header only            8 bytes, or 16 (largesize) when the payload exceeds UInt32
    /// ```
    /// Each `trun` `data_offset` points at its track's first payload byte, relative to the `moof` start.
    /// `systems`: `pssh` boxes in the `moof`, after `mfhd` (a rotated key's initialization data).
    public static func fragmentHeader(sequenceNumber: UInt32, tracks: [TrackFragment],
                                      systems: [ProtectionSystemHeader] = []) throws -> [UInt8] {
        let sampleCount = tracks.reduce(0) { $0 + $1.samples.count }
        var w = BoxWriter(reservingCapacity: 8 + 16 + tracks.count * (8 + 16 + 20 + 20) + sampleCount * 16 + 16)
        var dataOffsetAt: [Int] = []
        dataOffsetAt.reserveCapacity(tracks.count)
        try w.box("moof") { w in
            try MovieFragmentHeaderBox.write(to: &w, sequenceNumber: sequenceNumber)
            for p in systems { try p.write(to: &w) }
            for t in tracks {
                try w.box("traf") { w in
                    try TrackFragmentHeaderBox.write(to: &w, trackID: t.trackID)
                    try TrackFragmentBaseMediaDecodeTimeBox.write(to: &w, baseMediaDecodeTime: t.baseMediaDecodeTime)
                    dataOffsetAt.append(try TrackRunBox.write(to: &w, samples: t.samples, isVideo: t.isVideo))
                    if let e = t.sampleGroupEncryption {
                        try SampleGroupEncryptionBoxes.write(to: &w, sampleCount: t.samples.count, encryption: e)
                    }
                    if let entries = t.encryption {
                        precondition(entries.count == t.samples.count, "one senc entry per sample")
                        let at = try SampleEncryptionBoxes.write(to: &w, entries: entries)
                        // The buffer starts with this moof: an offset in it is an offset from the moof.
                        w.patch(UInt32(at.dataAt), at: at.saioOffsetAt)
                    }
                }
            }
        }
        let moofSize = w.count
        let payload = tracks.reduce(UInt64(0)) { $0 + UInt64($1.payloadSize) }
        let headerSize: UInt64
        if payload + 8 <= UInt64(UInt32.max) {
            headerSize = 8
            w.write(UInt32(payload + 8))
            w.write(FourCC("mdat"))
        } else {
            // ISO/IEC 14496-12 §4.2: size 1 means a 64-bit largesize follows the type.
            headerSize = 16
            w.write(UInt32(1))
            w.write(FourCC("mdat"))
            w.write(payload + 16)
        }
        var offset = UInt64(moofSize) + headerSize
        for (i, t) in tracks.enumerated() {
            guard let dataOffset = Int32(exactly: offset) else { throw MP4Error.dataOffsetOutOfRange(trackID: t.trackID) }
            w.patch(dataOffset, at: dataOffsetAt[i])
            offset += UInt64(t.payloadSize)
        }
        return w.bytes
    }

    /// Size of the `mdat` header `fragmentHeader` ends with for a payload of `payloadSize` bytes (8 or 16).
    public static func mdatHeaderSize(payloadSize: UInt64) -> Int { payloadSize + 8 <= UInt64(UInt32.max) ? 8 : 16 }
}
