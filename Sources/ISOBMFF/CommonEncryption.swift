import MediaCore

/// Common encryption (ISO/IEC 23001-7, 3rd edition) boxes: what the init segment says about a protected track
/// (`sinf` in an `encv`/`enca` sample entry, `pssh` in `moov`) and what a fragment says about its samples (`senc`,
/// `saiz`, `saio`). The cipher itself is ContentProtection's: this module writes boxes only.
///
/// ```
/// |encv| or |enca|               the original sample entry, renamed, with one more child at its end:
///   … (|avcC| |pasp| …)
///   |sinf|                       ISO/IEC 14496-12 §8.12.1
///     |frma|                     original format (avc1, hvc1, mp4a, …) §8.12.2
///     |schm|                     scheme_type cenc/cbcs, scheme_version 0x00010000 §8.12.5
///     |schi|                     §8.12.6
///       |tenc|                   ISO/IEC 23001-7 §8.2
/// ```
public enum ProtectionScheme: String, Sendable, Equatable, CaseIterable {
    /// AES-CTR, full-sample (audio) or subsample (video) encryption, per-sample IVs (ISO/IEC 23001-7 §10.1).
    case cenc
    /// AES-CBC with a 1:9 pattern for video and whole blocks for audio, one constant IV (ISO/IEC 23001-7 §10.4).
    case cbcs

    public var fourCC: FourCC { FourCC(rawValue) }
}

/// What `tenc` states for a track (ISO/IEC 23001-7 §8.2.2):
///
/// ```
/// unsigned int(8) reserved = 0;
/// if (version == 0) unsigned int(8) reserved = 0;
/// else { unsigned int(4) default_crypt_byte_block; unsigned int(4) default_skip_byte_block; }
/// unsigned int(8) default_isProtected;
/// unsigned int(8) default_Per_Sample_IV_Size;
/// unsigned int(8)[16] default_KID;
/// if (default_isProtected == 1 && default_Per_Sample_IV_Size == 0) {
///     unsigned int(8) default_constant_IV_size; unsigned int(8)[default_constant_IV_size] default_constant_IV; }
/// ```
/// Version 1 carries the pattern, which `cbcs` needs (§10.4.1); `cenc` uses version 0.
public struct TrackEncryption: Sendable, Equatable {
    public var scheme: ProtectionScheme
    /// The 16-byte key ID (default_KID).
    public var keyID: [UInt8]
    /// 8 or 16 for `cenc` (an IV per sample in `senc`), 0 for `cbcs` (the constant IV).
    public var perSampleIVSize: UInt8
    /// The 16-byte constant IV of `cbcs`.
    public var constantIV: [UInt8]?
    /// Encrypted and skipped 16-byte blocks of the pattern (`cbcs` video 1:9; audio 0:0, every whole block).
    public var cryptByteBlock: UInt8
    public var skipByteBlock: UInt8
    /// `isProtected`: 0 only in a `seig` entry whose samples are clear (a clear lead); no KID, IV or pattern then.
    public var isProtected = true

    /// The `seig` entry of samples left clear in a protected track (ISO/IEC 23001-7 §6: isProtected 0, KID zeros).
    public static func unprotected(_ scheme: ProtectionScheme) -> TrackEncryption {
        var e = TrackEncryption(scheme: scheme, keyID: [UInt8](repeating: 0, count: 16), perSampleIVSize: 8)
        e.isProtected = false
        e.perSampleIVSize = 0
        return e
    }

    public init(scheme: ProtectionScheme, keyID: [UInt8], perSampleIVSize: UInt8, constantIV: [UInt8]? = nil,
                cryptByteBlock: UInt8 = 0, skipByteBlock: UInt8 = 0) {
        precondition(keyID.count == 16, "a KID is 16 bytes")
        precondition(perSampleIVSize == 0 || perSampleIVSize == 8 || perSampleIVSize == 16, "IV size 0, 8 or 16")
        precondition(perSampleIVSize != 0 || constantIV?.count == 16 || constantIV?.count == 8, "a constant IV when no per-sample IV")
        precondition(cryptByteBlock < 16 && skipByteBlock < 16, "pattern fields are 4 bits")
        self.scheme = scheme
        self.keyID = keyID
        self.perSampleIVSize = perSampleIVSize
        self.constantIV = constantIV
        self.cryptByteBlock = cryptByteBlock
        self.skipByteBlock = skipByteBlock
    }

    /// `cenc` with 8-byte per-sample IVs (§9.1 allows 8 or 16; 8 leaves a 64-bit block counter).
    public static func cenc(keyID: [UInt8]) -> TrackEncryption {
        TrackEncryption(scheme: .cenc, keyID: keyID, perSampleIVSize: 8)
    }

    /// `cbcs` with a constant IV; the 1:9 pattern for video (§10.4.2 recommends it for NAL-structured video), 0:0 for
    /// audio (every whole block of the sample; the partial last block stays clear, §10.4.2).
    public static func cbcs(keyID: [UInt8], constantIV: [UInt8], video: Bool) -> TrackEncryption {
        TrackEncryption(scheme: .cbcs, keyID: keyID, perSampleIVSize: 0, constantIV: constantIV,
                        cryptByteBlock: video ? 1 : 0, skipByteBlock: video ? 9 : 0)
    }

    /// `tenc` version: 1 when a pattern is stated (`cbcs`), 0 otherwise.
    var version: UInt8 { scheme == .cbcs ? 1 : 0 }
}

/// `tenc`, ISO/IEC 23001-7 §8.2.
public enum TrackEncryptionBox {
    public static let type: FourCC = "tenc"

    public static func write(to w: inout BoxWriter, _ e: TrackEncryption) throws {
        try w.fullBox(type, version: e.version, flags: 0) { w in
            w.write(UInt8(0))                                             // reserved
            w.write(e.version == 0 ? UInt8(0) : e.cryptByteBlock << 4 | e.skipByteBlock)
            w.write(UInt8(1))                                             // default_isProtected
            w.write(e.perSampleIVSize)                                    // default_Per_Sample_IV_Size
            w.write(bytes: e.keyID)                                       // default_KID
            if e.perSampleIVSize == 0, let iv = e.constantIV {
                w.write(UInt8(iv.count))                                  // default_constant_IV_size
                w.write(bytes: iv)                                        // default_constant_IV
            }
        }
    }
}

/// `sinf` (ISO/IEC 14496-12 §8.12.1) with `frma`, `schm` (version 0x00010000 for both schemes, ISO/IEC 23001-7 §4.1)
/// and `schi`/`tenc`.
public enum ProtectionSchemeInfoBox {
    public static let type: FourCC = "sinf"
    public static let schemeVersion: UInt32 = 0x0001_0000

    public static func write(to w: inout BoxWriter, originalFormat: FourCC, encryption e: TrackEncryption) throws {
        try w.box(type) { w in
            try w.box("frma") { w in w.write(originalFormat) }           // data_format
            try w.fullBox("schm", version: 0, flags: 0) { w in
                w.write(e.scheme.fourCC)                                  // scheme_type
                w.write(schemeVersion)                                    // scheme_version
            }
            try w.box("schi") { w in try TrackEncryptionBox.write(to: &w, e) }
        }
    }
}

/// A protected sample entry (ISO/IEC 14496-12 §8.12, ISO/IEC 23001-7 §4.1): the clear entry written as usual, its
/// type replaced by `encv` (video) or `enca` (audio) and `sinf` appended as its last child, the original type kept
/// in `frma`.
public enum ProtectedSampleEntry {
    /// `entry`: one complete sample entry box as `stsd` holds it.
    public static func protect(_ entry: [UInt8], isVideo: Bool, encryption: TrackEncryption) throws -> [UInt8] {
        precondition(entry.count >= 8, "a sample entry box")
        let original = FourCC(rawValue: UInt32(entry[4]) << 24 | UInt32(entry[5]) << 16 | UInt32(entry[6]) << 8 | UInt32(entry[7]))
        var w = BoxWriter(reservingCapacity: entry.count + 80)
        try w.box(isVideo ? "encv" : "enca") { w in
            w.write(bytes: entry[8...])
            try ProtectionSchemeInfoBox.write(to: &w, originalFormat: original, encryption: encryption)
        }
        return w.bytes
    }
}

/// A `pssh` (ISO/IEC 23001-7 §8.1): a DRM system's initialization data. Version 1 lists the KIDs it applies to (the
/// W3C "common" system `1077efec-…` of the Common PSSH Box Format carries only them).
public struct ProtectionSystemHeader: Sendable, Equatable {
    public var systemID: [UInt8]
    public var keyIDs: [[UInt8]]
    public var data: [UInt8]

    public init(systemID: [UInt8], keyIDs: [[UInt8]] = [], data: [UInt8] = []) {
        precondition(systemID.count == 16 && keyIDs.allSatisfy { $0.count == 16 }, "16-byte system and key IDs")
        self.systemID = systemID
        self.keyIDs = keyIDs
        self.data = data
    }

    /// The whole box:
    /// ```
    /// aligned(8) class ProtectionSystemSpecificHeaderBox extends FullBox('pssh', version, flags=0) {
    ///     unsigned int(8)[16] SystemID;
    ///     if (version > 0) { unsigned int(32) KID_count; { unsigned int(8)[16] KID; } [KID_count]; }
    ///     unsigned int(32) DataSize; unsigned int(8)[DataSize] Data; }
    /// ```
    public func box() throws -> [UInt8] {
        var w = BoxWriter(reservingCapacity: 32 + 16 * keyIDs.count + data.count)
        try write(to: &w)
        return w.bytes
    }

    public func write(to w: inout BoxWriter) throws {
        try w.fullBox("pssh", version: keyIDs.isEmpty ? 0 : 1, flags: 0) { w in
            w.write(bytes: systemID)
            if !keyIDs.isEmpty {
                w.write(UInt32(keyIDs.count))
                for k in keyIDs { w.write(bytes: k) }
            }
            w.write(UInt32(data.count))
            w.write(bytes: data)
        }
    }
}

/// One subsample of a protected sample (ISO/IEC 23001-7 §7.2.2): clear bytes, then protected bytes.
public struct SubsampleEntry: Sendable, Equatable, CustomStringConvertible {
    public var clearBytes: UInt16
    public var protectedBytes: UInt32

    public init(clear: UInt16, protected: UInt32) {
        clearBytes = clear
        protectedBytes = protected
    }

    public var description: String { "\(clearBytes)+\(protectedBytes)" }
}

/// The sample auxiliary information of one protected sample (its `senc` entry): its IV (empty with a constant IV)
/// and its subsamples (empty: the whole sample is protected).
public struct SampleEncryptionEntry: Sendable, Equatable {
    public var iv: [UInt8]
    public var subsamples: [SubsampleEntry]

    public init(iv: [UInt8], subsamples: [SubsampleEntry] = []) {
        self.iv = iv
        self.subsamples = subsamples
    }

    /// Its size as `saiz` states it: the IV, then with subsamples a 16-bit count and 6 bytes each.
    func auxiliarySize(useSubsamples: Bool) -> Int { iv.count + (useSubsamples ? 2 + 6 * subsamples.count : 0) }
}

/// `senc`, `saiz` and `saio` of one track fragment (ISO/IEC 23001-7 §7.2; ISO/IEC 14496-12 §8.7.8, §8.7.9).
///
/// ```
/// |senc|   flags 0x2 (UseSubSampleEncryption) when any sample has subsamples; sample_count;
///          per sample: IV (per_sample_IV_size bytes), [subsample_count(16), {clear(16), protected(32)}…]
/// |saiz|   flags 0 (aux_info_type is the scheme's); default_sample_info_size, or 0 and one size per sample
///          (entries of 0 bytes, cbcs audio's, are listed: a default of 0 would say the list follows)
/// |saio|   flags 0, version 0, entry_count 1: the offset of the first sample's entry inside senc
/// ```
/// `saio`'s offset counts, like `trun`'s `data_offset`, from the enclosing `moof` (ISO/IEC 14496-12 §8.7.9.3: with
/// default-base-is-moof the base is the moof's first byte), so it is patched once `senc`'s place in `moof` is known.
public enum SampleEncryptionBoxes {
    public static let sencFlagUseSubsamples: UInt32 = 0x2

    /// Writes the three boxes into a `traf`; returns where `saio`'s offset field is and the offset it must hold
    /// relative to the buffer's start (the `moof` start when the buffer begins with it).
    public static func write(to w: inout BoxWriter, entries: [SampleEncryptionEntry]) throws -> (saioOffsetAt: Int, dataAt: Int) {
        let useSubsamples = entries.contains { !$0.subsamples.isEmpty }
        var dataAt = 0
        try w.fullBox("senc", version: 0, flags: useSubsamples ? sencFlagUseSubsamples : 0) { w in
            w.write(UInt32(entries.count))
            dataAt = w.count
            for e in entries {
                w.write(bytes: e.iv)
                if useSubsamples {
                    w.write(UInt16(e.subsamples.count))
                    for s in e.subsamples { w.write(s.clearBytes); w.write(s.protectedBytes) }
                }
            }
        }
        let sizes = entries.map { $0.auxiliarySize(useSubsamples: useSubsamples) }
        guard sizes.allSatisfy({ $0 <= 0xFF }) else {
            throw MP4Error.invalidConfiguration("a sample's encryption entry exceeds 255 bytes (too many subsamples)")
        }
        // A size of 0 cannot be the default (0 there means "one size per sample follows"): entries of no bytes (cbcs
        // audio: constant IV, no subsamples) are listed one by one.
        let uniform = sizes.allSatisfy { $0 == sizes.first } && sizes.first != 0
        try w.fullBox("saiz", version: 0, flags: 0) { w in
            w.write(UInt8(uniform ? (sizes.first ?? 0) : 0))               // default_sample_info_size
            w.write(UInt32(entries.count))                                 // sample_count
            if !uniform { for s in sizes { w.write(UInt8(s)) } }
        }
        var saioOffsetAt = 0
        try w.fullBox("saio", version: 0, flags: 0) { w in
            w.write(UInt32(1))                                             // entry_count
            saioOffsetAt = w.count
            w.write(UInt32(0))                                             // offset, patched by the caller
        }
        return (saioOffsetAt, dataAt)
    }
}

/// Key rotation by sample groups (ISO/IEC 23001-7 §6, ISO/IEC 14496-12 §8.9): a `sbgp` mapping every sample of the
/// `traf` to the first entry of a `traf`-local `sgpd` of grouping type `seig`, a CencSampleEncryptionInformationGroupEntry
/// naming the fragment's KID (and pattern, IV size, constant IV), which overrides the `tenc` defaults.
///
/// ```
/// |sbgp|   v0, grouping_type seig, entry_count 1: sample_count, group_description_index 0x10001 (this traf's entry 1)
/// |sgpd|   v1, grouping_type seig, default_length, entry_count 1:
///          reserved(8) crypt(4) skip(4) isProtected(8) Per_Sample_IV_Size(8) KID(128) [constant_IV_size(8) IV]
/// ```
public enum SampleGroupEncryptionBoxes {
    public static let groupingType: FourCC = "seig"

    public static func write(to w: inout BoxWriter, sampleCount: Int, encryption e: TrackEncryption) throws {
        try w.fullBox("sbgp", version: 0, flags: 0) { w in
            w.write(groupingType)
            w.write(UInt32(1))                                             // entry_count
            w.write(UInt32(sampleCount))                                   // sample_count
            w.write(UInt32(0x1_0001))                                      // group_description_index: local entry 1
        }
        let constant = e.perSampleIVSize == 0 && e.isProtected ? (e.constantIV ?? []) : []
        let length = 20 + (e.perSampleIVSize == 0 && e.isProtected ? 1 + constant.count : 0)
        try w.fullBox("sgpd", version: 1, flags: 0) { w in
            w.write(groupingType)
            w.write(UInt32(length))                                        // default_length
            w.write(UInt32(1))                                             // entry_count
            w.write(UInt8(0))                                              // reserved
            w.write(e.cryptByteBlock << 4 | e.skipByteBlock)
            w.write(UInt8(e.isProtected ? 1 : 0))                          // isProtected
            w.write(e.perSampleIVSize)
            w.write(bytes: e.keyID)
            if e.perSampleIVSize == 0 && e.isProtected {
                w.write(UInt8(constant.count))
                w.write(bytes: constant)
            }
        }
    }
}
