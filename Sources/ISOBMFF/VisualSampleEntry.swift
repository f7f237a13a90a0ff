import MediaCore

/// The fields every video sample entry shares (ISO/IEC 14496-12 §12.1.3 VisualSampleEntry), and the optional boxes
/// after its configuration record: `pasp` (§12.1.4), `colr` (§12.1.5, `nclx`), and the HDR static metadata boxes
/// `mdcv` and `clli` (ISO/IEC 14496-12:2022 §12.1.6, §12.1.7; the bodies of the H.265 SEI messages of the same name).
///
/// ```
/// |avc1| |avcC| (|pasp|)                          H.264
/// |hvc1| |hvcC| (|pasp|) (|colr|) (|mdcv|) (|clli|)   H.265
/// |av01| |av1C| (|pasp|) (|colr|) (|mdcv|) (|clli|)   AV1
/// ```
public enum VisualSampleEntry {
    /// Writes `type` with its configuration box (`configType` holding `configuration`) and the optional boxes.
    /// `compressorName` is the informative name the codec's binding recommends.
    public static func write(to w: inout BoxWriter, type: FourCC, track t: TrackFormat, compressorName: String,
                             configType: FourCC, configuration: [UInt8], writeColour: Bool) throws {
        try w.box(type) { w in
            w.writeZeros(6)                           // SampleEntry reserved
            w.write(UInt16(1))                        // data_reference_index
            w.write(UInt16(0))                        // pre_defined
            w.write(UInt16(0))                        // reserved
            w.writeZeros(12)                          // pre_defined 3x32
            w.write(UInt16(t.width))                  // width
            w.write(UInt16(t.height))                 // height
            w.write(UInt32(0x0048_0000))              // horizresolution 72 dpi
            w.write(UInt32(0x0048_0000))              // vertresolution 72 dpi
            w.write(UInt32(0))                        // reserved
            w.write(UInt16(1))                        // frame_count
            let name = Array(compressorName.utf8.prefix(31))
            w.write(UInt8(name.count))                // compressorname: Pascal string in 32 bytes
            w.write(bytes: name)
            w.writeZeros(31 - name.count)
            w.write(UInt16(0x0018))                   // depth: colour, no alpha
            w.write(Int16(-1))                        // pre_defined
            try w.box(configType) { w in w.write(bytes: configuration) }
            let sar = t.sampleAspectRatio
            if sar.isValid && sar.numerator != sar.denominator {
                try w.box("pasp") { w in
                    w.write(UInt32(sar.numerator))    // hSpacing
                    w.write(UInt32(sar.denominator))  // vSpacing
                }
            }
            if writeColour, let c = t.colour { try writeColourBoxes(c, to: &w) }
            if let dv = t.dolbyVision {
                // "Dolby Vision Streams Within the ISO Base Media File Format" §3.2: the configuration box after the
                // codec's own.
                try w.box(FourCC(dv.boxType)) { w in w.write(bytes: dv.record) }
            }
        }
    }

    /// `colr` of type `nclx` (§12.1.5.2: primaries, transfer, matrix, full_range_flag and 7 reserved bits), then
    /// `mdcv` and `clli` when the input carried them.
    static func writeColourBoxes(_ c: ColourInfo, to w: inout BoxWriter) throws {
        try w.box("colr") { w in
            w.write(FourCC("nclx"))
            w.write(c.primaries)
            w.write(c.transfer)
            w.write(c.matrix)
            w.write(UInt8(c.fullRange ? 0x80 : 0))
        }
        if let m = c.masteringDisplay, m.count == 24 { try w.box("mdcv") { w in w.write(bytes: m) } }
        if let l = c.contentLightLevel, l.count == 4 { try w.box("clli") { w in w.write(bytes: l) } }
    }
}

/// `avc1` VisualSampleEntry (ISO/IEC 14496-12 §12.1.3, ISO/IEC 14496-15 §5.4.2.1) with `avcC` and, for
/// non-square pixels, `pasp` (§12.1.4).
///
/// ```
/// |avc1| |avcC| (|pasp|)
/// ```
public enum AVCSampleEntry {
    public static let type: FourCC = "avc1"
    /// ISO/IEC 14496-15 §5.4.2.1 recommends this compressor name ("\012AVC Coding": length byte 10).
    public static let compressorName = "AVC Coding"

    public static func write(to w: inout BoxWriter, track t: TrackFormat, avcC: [UInt8]) throws {
        try VisualSampleEntry.write(to: &w, type: type, track: t, compressorName: compressorName, configType: "avcC",
                                    configuration: avcC, writeColour: false)
    }
}

/// `hvc1` VisualSampleEntry (ISO/IEC 14496-15 §8.4.1: every parameter set in `hvcC`, none in the samples) with
/// `hvcC`, `pasp` for non-square pixels and the colour boxes.
public enum HEVCSampleEntry {
    public static let type: FourCC = "hvc1"
    /// ISO/IEC 14496-15 §8.4.1 recommends "\013HEVC Coding".
    public static let compressorName = "HEVC Coding"

    public static func write(to w: inout BoxWriter, track t: TrackFormat, hvcC: [UInt8]) throws {
        try VisualSampleEntry.write(to: &w, type: type, track: t, compressorName: compressorName, configType: "hvcC",
                                    configuration: hvcC, writeColour: true)
    }
}

/// `av01` VisualSampleEntry (AV1-ISOBMFF §2.2) with `av1C` (§2.3), `pasp` and the colour boxes.
public enum AV1SampleEntry {
    public static let type: FourCC = "av01"
    /// AV1-ISOBMFF §2.2.4 recommends "\012AOM Coding".
    public static let compressorName = "AOM Coding"

    public static func write(to w: inout BoxWriter, track t: TrackFormat, av1C: [UInt8]) throws {
        try VisualSampleEntry.write(to: &w, type: type, track: t, compressorName: compressorName, configType: "av1C",
                                    configuration: av1C, writeColour: true)
    }
}
