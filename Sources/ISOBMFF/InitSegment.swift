import MediaCore

/// The CMAF header / HLS `EXT-X-MAP` resource: `ftyp` + `moov` with empty sample tables and an `mvex`.
///
/// ```
/// |ftyp|
/// |moov|
///   |mvhd|
///   (|pssh|)                     one per DRM system, when protected
///   |trak|                       one per track, in the order given
///     |tkhd|
///     |mdia|
///       |mdhd|
///       |hdlr|
///       |minf|
///         |vmhd| or |smhd|
///         |dinf| |dref| |url |
///         |stbl|
///           |stsd| |avc1| |avcC| (|pasp|)  or  |hvc1| |hvcC| …  or  |av01| |av1C| …
///                  or  |mp4a| |esds|  or  |Opus| |dOps|, |ac-3| |dac3|, |ec-3| |dec3|, |fLaC| |dfLa|
///                  (protected: |encv| / |enca| with the same children and |sinf| last)
///           |stts| |stsc| |stsz| |stco|      (empty: samples live in fragments)
///   |mvex|
///     |trex|                     one per track
/// ```
public enum InitSegment {
    /// Movie timescale of `mvhd`; every track keeps its own media timescale in `mdhd`.
    public static let movieTimescale: UInt32 = 1000

    /// `ftyp` + `moov` for the given tracks (1 video and/or 1 audio, any order; track IDs from `TrackFormat.trackID`).
    /// With `protection` (ISO/IEC 23001-7), each track named in it gets a protected sample entry (`encv`/`enca` with
    /// `sinf`, `CommonEncryption.swift`) and `moov` the `pssh` boxes of `systems`, after `mvhd`.
    public static func make(tracks: [TrackFormat], protection: [UInt32: TrackEncryption] = [:],
                            systems: [ProtectionSystemHeader] = []) throws -> [UInt8] {
        try validate(tracks)
        var w = BoxWriter(reservingCapacity: 1024)
        try FileTypeBox.write(to: &w)
        try w.box("moov") { w in
            try MovieHeaderBox.write(to: &w, nextTrackID: (tracks.map(\.trackID).max() ?? 0) + 1)
            for s in systems { try s.write(to: &w) }
            for t in tracks { try writeTrack(t, protection: protection[t.trackID], to: &w) }
            try w.box("mvex") { w in
                for t in tracks { try TrackExtendsBox.write(to: &w, trackID: t.trackID) }
            }
        }
        return w.bytes
    }

    static func validate(_ tracks: [TrackFormat]) throws {
        guard !tracks.isEmpty else { throw MP4Error.invalidConfiguration("no tracks") }
        guard tracks.filter({ $0.kind == .video }).count <= 1, tracks.filter({ $0.kind == .audio }).count <= 1 else {
            throw MP4Error.invalidConfiguration("at most one video and one audio track")
        }
        guard Set(tracks.map(\.trackID)).count == tracks.count, !tracks.contains(where: { $0.trackID == 0 }) else {
            throw MP4Error.invalidConfiguration("track IDs must be unique and non-zero")
        }
        for t in tracks {
            guard t.timescale > 0 else { throw MP4Error.invalidConfiguration("track \(t.trackID): timescale \(t.timescale)") }
            switch (t.kind, t.codec) {
            case (.video, .h264(let avcC)):
                guard (1...0xFFFF).contains(t.width), (1...0xFFFF).contains(t.height) else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): video size \(t.width)x\(t.height)")
                }
                guard avcC.count >= 7, avcC[0] == 1 else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): avcC is not an AVCDecoderConfigurationRecord")
                }
            case (.video, .hevc(let record)), (.video, .av1(let record)):
                guard (1...0xFFFF).contains(t.width), (1...0xFFFF).contains(t.height) else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): video size \(t.width)x\(t.height)")
                }
                guard record.count >= 4 else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): a \(record.count)-byte configuration record")
                }
            case (.audio, .aac(let asc)):
                guard (1...0xFFFF).contains(t.channelCount), t.sampleRate > 0 else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): \(t.channelCount) channels at \(t.sampleRate) Hz")
                }
                guard asc.count >= 2, asc.count <= 127 else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): AudioSpecificConfig of \(asc.count) bytes")
                }
            case (.audio, .opus(let c)):
                guard c.channelMappingFamily == 0 || c.channelMapping.count == Int(c.outputChannelCount) else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): Opus channel mapping of \(c.channelMapping.count) for \(c.outputChannelCount) channels")
                }
            case (.audio, .ac3), (.audio, .eac3(_)):
                if case .eac3(let c) = t.codec, !(1...8).contains(c.independentSubstreams.count) {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): E-AC-3 with \(c.independentSubstreams.count) independent substreams")
                }
            case (.audio, .flac(let c)):
                guard t.timescale == Int32(clamping: c.sampleRate) else {
                    throw MP4Error.invalidConfiguration("track \(t.trackID): FLAC at \(c.sampleRate) Hz in timescale \(t.timescale)")
                }
            default:
                throw MP4Error.invalidConfiguration("track \(t.trackID): \(t.kind) track with codec \(t.codec)")
            }
        }
    }

    static func writeTrack(_ t: TrackFormat, protection: TrackEncryption? = nil, to w: inout BoxWriter) throws {
        let isVideo = t.kind == .video
        try writeTrack(header: { w in try TrackHeaderBox.write(to: &w, track: t) }, timescale: UInt32(t.timescale),
                       language: t.language, handler: isVideo ? "vide" : "soun",
                       handlerName: isVideo ? "VideoHandler" : "SoundHandler", to: &w,
                       mediaHeader: { w in
            if isVideo {
                // ISO/IEC 14496-12 §12.1.2: VideoMediaHeaderBox, flags = 1, graphicsmode copy, opcolor 0.
                try w.fullBox("vmhd", version: 0, flags: 1) { w in w.writeZeros(8) }
            } else {
                // ISO/IEC 14496-12 §12.2.2: SoundMediaHeaderBox, balance 0 (centre), reserved 0.
                try w.fullBox("smhd", version: 0, flags: 0) { w in w.writeZeros(4) }
            }
        }, sampleEntry: { w in
            guard let protection else { return try writeSampleEntry(t, to: &w) }
            var entry = BoxWriter(reservingCapacity: 256)
            try writeSampleEntry(t, to: &entry)
            w.write(bytes: try ProtectedSampleEntry.protect(entry.bytes, isVideo: isVideo, encryption: protection))
        })
    }

    /// One `trak` of a fragmented file: `header` writes its `tkhd`, `mediaHeader` its `vmhd`/`smhd`/`nmhd`,
    /// `sampleEntry` the one entry of its `stsd`; the sample tables are empty (samples live in fragments).
    static func writeTrack(header: (inout BoxWriter) throws -> Void, timescale: UInt32, language: String, handler: FourCC,
                           handlerName: String, to w: inout BoxWriter, mediaHeader: (inout BoxWriter) throws -> Void,
                           sampleEntry: (inout BoxWriter) throws -> Void) throws {
        try w.box("trak") { w in
            try header(&w)
            try w.box("mdia") { w in
                try MediaHeaderBox.write(to: &w, timescale: timescale, language: language)
                try HandlerBox.write(to: &w, handler: handler, name: handlerName)
                try w.box("minf") { w in
                    try mediaHeader(&w)
                    // ISO/IEC 14496-12 §8.7.1/§8.7.2: one self-contained data reference (url  flag 1 = same file).
                    try w.box("dinf") { w in
                        try w.fullBox("dref", version: 0, flags: 0) { w in
                            w.write(UInt32(1))
                            try w.fullBox("url ", version: 0, flags: 1) { _ in }
                        }
                    }
                    try w.box("stbl") { w in
                        // ISO/IEC 14496-12 §8.5.2: SampleDescriptionBox with one entry.
                        try w.fullBox("stsd", version: 0, flags: 0) { w in
                            w.write(UInt32(1))
                            try sampleEntry(&w)
                        }
                        // §8.6.1.2 stts, §8.7.4 stsc, §8.7.3 stsz, §8.7.5 stco: all empty in a fragmented file.
                        try w.fullBox("stts", version: 0, flags: 0) { w in w.write(UInt32(0)) }
                        try w.fullBox("stsc", version: 0, flags: 0) { w in w.write(UInt32(0)) }
                        try w.fullBox("stsz", version: 0, flags: 0) { w in w.write(UInt32(0)); w.write(UInt32(0)) }
                        try w.fullBox("stco", version: 0, flags: 0) { w in w.write(UInt32(0)) }
                    }
                }
            }
        }
    }
}

extension InitSegment {
    static func writeSampleEntry(_ t: TrackFormat, to w: inout BoxWriter) throws {
        switch t.codec {
        case .h264(let avcC): try AVCSampleEntry.write(to: &w, track: t, avcC: avcC)
        case .hevc(let hvcC): try HEVCSampleEntry.write(to: &w, track: t, hvcC: hvcC)
        case .av1(let av1C): try AV1SampleEntry.write(to: &w, track: t, av1C: av1C)
        case .aac(let asc): try MP4AudioSampleEntry.write(to: &w, track: t, audioSpecificConfig: asc)
        case .opus(let c): try OpusSampleEntry.write(to: &w, config: c)
        case .ac3(let c): try AC3SampleEntry.write(to: &w, config: c)
        case .eac3(let c): try EC3SampleEntry.write(to: &w, config: c)
        case .flac(let c): try FLACSampleEntry.write(to: &w, config: c)
        }
    }
}

/// The identity transformation matrix of `mvhd`/`tkhd` (ISO/IEC 14496-12 §8.2.2.3): 16.16 and 2.30 fixed point.
let unityMatrix: [UInt32] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000]

/// `ftyp`, ISO/IEC 14496-12 §4.3.
///
/// Major brand `iso6`: the file uses features of the 2012 edition (`tfdt`, `trun` version 1 with signed
/// composition offsets, `styp`), which `iso6` covers. Compatible brands: `iso6`; `cmfc`, the CMAF track brand of
/// ISO/IEC 23000-19 §7.2 (the header carries it so a CMAF reader accepts the track); `iso5` (the same features minus
/// signed offsets, what FFmpeg's HLS muxer declares, so older readers that look for it stay happy); `mp41` for
/// legacy MP4 readers.
public enum FileTypeBox {
    public static let type: FourCC = "ftyp"
    public static let majorBrand: FourCC = "iso6"
    public static let minorVersion: UInt32 = 0
    public static let compatibleBrands: [FourCC] = ["iso6", "cmfc", "iso5", "mp41"]

    public static func write(to w: inout BoxWriter) throws {
        try w.box(type) { w in
            w.write(majorBrand)
            w.write(minorVersion)
            for b in compatibleBrands { w.write(b) }
        }
    }
}

/// `mvhd`, ISO/IEC 14496-12 §8.2.2: version 0, times 0, timescale 1000, duration 0 (unknown: fragmented).
public enum MovieHeaderBox {
    public static let type: FourCC = "mvhd"

    public static func write(to w: inout BoxWriter, nextTrackID: UInt32) throws {
        try w.fullBox(type, version: 0, flags: 0) { w in
            w.write(UInt32(0))                        // creation_time
            w.write(UInt32(0))                        // modification_time
            w.write(InitSegment.movieTimescale)       // timescale
            w.write(UInt32(0))                        // duration
            w.write(UInt32(0x0001_0000))              // rate 1.0 (16.16)
            w.write(UInt16(0x0100))                   // volume 1.0 (8.8)
            w.writeZeros(2 + 8)                       // reserved 16 + 2x32
            for m in unityMatrix { w.write(m) }       // matrix
            w.writeZeros(6 * 4)                       // pre_defined
            w.write(nextTrackID)                      // next_track_ID
        }
    }
}

/// `tkhd`, ISO/IEC 14496-12 §8.3.2: version 0, flags track_enabled | track_in_movie | track_in_preview (3).
///
/// Width and height are the *display* size in 16.16: video width is stretched by the pixel aspect ratio
/// (§8.3.2.3 "the visual presentation size"), audio writes 0x0. Volume is 1.0 for audio, 0 otherwise.
public enum TrackHeaderBox {
    public static let type: FourCC = "tkhd"

    public static func write(to w: inout BoxWriter, track t: TrackFormat) throws {
        let isAudio = t.kind == .audio
        let (width, height) = isAudio ? (UInt32(0), UInt32(0)) : displaySize16_16(t)
        try write(to: &w, trackID: t.trackID, volume: isAudio ? 0x0100 : 0, width: width, height: height)
    }

    /// `volume` in 8.8 (0x0100 for audio, 0 otherwise), `width` and `height` in 16.16 (0 for audio and text).
    public static func write(to w: inout BoxWriter, trackID: UInt32, volume: UInt16, width: UInt32, height: UInt32) throws {
        try w.fullBox(type, version: 0, flags: 0x000003) { w in
            w.write(UInt32(0))                        // creation_time
            w.write(UInt32(0))                        // modification_time
            w.write(trackID)                          // track_ID
            w.write(UInt32(0))                        // reserved
            w.write(UInt32(0))                        // duration
            w.writeZeros(8)                           // reserved 2x32
            w.write(Int16(0))                         // layer
            w.write(Int16(0))                         // alternate_group
            w.write(volume)                           // volume (8.8)
            w.write(UInt16(0))                        // reserved
            for m in unityMatrix { w.write(m) }       // matrix
            w.write(width)                            // width 16.16
            w.write(height)                           // height 16.16
        }
    }

    /// Display size in 16.16 fixed point: `width * sarNum / sarDen` (truncated to 1/65536), height unchanged.
    static func displaySize16_16(_ t: TrackFormat) -> (UInt32, UInt32) {
        let sar = t.sampleAspectRatio.isValid ? t.sampleAspectRatio : Rational(1, 1)
        let w = (Int64(t.width) * Int64(sar.numerator) << 16) / Int64(sar.denominator)
        return (UInt32(clamping: w), UInt32(clamping: Int64(t.height) << 16))
    }
}

/// `mdhd`, ISO/IEC 14496-12 §8.4.2: version 0, media timescale, duration 0, packed ISO-639-2/T language.
public enum MediaHeaderBox {
    public static let type: FourCC = "mdhd"

    public static func write(to w: inout BoxWriter, timescale: UInt32, language: String) throws {
        try w.fullBox(type, version: 0, flags: 0) { w in
            w.write(UInt32(0))                        // creation_time
            w.write(UInt32(0))                        // modification_time
            w.write(timescale)                        // timescale
            w.write(UInt32(0))                        // duration
            w.write(packedLanguage(language))         // pad(1) + language 3x5 bits
            w.write(UInt16(0))                        // pre_defined
        }
    }

    /// ISO-639-2/T code packed as three 5-bit values `char - 0x60` (§8.4.2.3). Anything that is not three
    /// lowercase ASCII letters becomes `und`.
    public static func packedLanguage(_ code: String) -> UInt16 {
        var letters = Array(code.utf8)
        if letters.count != 3 || !letters.allSatisfy({ (0x61...0x7A).contains($0) }) { letters = Array("und".utf8) }
        return letters.reduce(UInt16(0)) { $0 << 5 | UInt16($1 - 0x60) }
    }
}

/// `hdlr`, ISO/IEC 14496-12 §8.4.3: handler type (`vide`/`soun`) and a null-terminated UTF-8 name.
public enum HandlerBox {
    public static let type: FourCC = "hdlr"

    public static func write(to w: inout BoxWriter, handler: FourCC, name: String) throws {
        try w.fullBox(type, version: 0, flags: 0) { w in
            w.write(UInt32(0))                        // pre_defined
            w.write(handler)                          // handler_type
            w.writeZeros(12)                          // reserved 3x32
            w.write(bytes: name.utf8)                 // name
            w.write(UInt8(0))                         // terminator
        }
    }
}

/// `trex`, ISO/IEC 14496-12 §8.8.3: defaults for the track's fragments (sample description 1, everything
/// else carried per sample in `trun`).
public enum TrackExtendsBox {
    public static let type: FourCC = "trex"

    public static func write(to w: inout BoxWriter, trackID: UInt32) throws {
        try w.fullBox(type, version: 0, flags: 0) { w in
            w.write(trackID)                          // track_ID
            w.write(UInt32(1))                        // default_sample_description_index
            w.write(UInt32(0))                        // default_sample_duration
            w.write(UInt32(0))                        // default_sample_size
            w.write(UInt32(0))                        // default_sample_flags
        }
    }
}
