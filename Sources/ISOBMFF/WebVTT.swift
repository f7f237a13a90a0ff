import MediaCore

/// WebVTT in ISO-BMFF (ISO/IEC 14496-30 §7): a text track of `wvtt` samples, for DASH (`codecs="wvtt"`).
///
/// ```
/// init:    |ftyp| |moov| |mvhd| |trak| |tkhd| |mdia| |mdhd| |hdlr| 'text' |minf| |nmhd| |dinf| |stbl|
///                                 |stsd| |wvtt| |vttC| "WEBVTT" (|vlab|)
///                        |mvex| |trex|
/// segment: |styp| |moof| |mfhd| |traf| |tfhd| |tfdt| |trun| |mdat|
///          a sample per span in which the cues shown do not change:
///            |vttc| (|iden|) (|sttg|) |payl|   one per cue shown, or
///            |vtte|                           nothing shown
/// ```
public enum WebVTTTrack {
    public static let sampleEntryType: FourCC = "wvtt"
    /// §7.5: "the WebVTT file header … up to, but not including, the first cue" as the `vttC` box string: the
    /// signature alone (our cues carry no file-level blocks).
    public static let configuration = "WEBVTT"

    /// `ftyp` + `moov` of one WebVTT track (`language`: ISO 639-2/T, `und` when unknown; `label`: the `vlab` box
    /// string, §7.5 "source label", a URI-like identifier, when given).
    public static func initSegment(trackID: UInt32 = 1, timescale: UInt32, language: String, label: String? = nil) throws -> [UInt8] {
        var w = BoxWriter(reservingCapacity: 640)
        try FileTypeBox.write(to: &w)
        try w.box("moov") { w in
            try MovieHeaderBox.write(to: &w, nextTrackID: trackID + 1)
            try InitSegment.writeTrack(
                header: { w in try TrackHeaderBox.write(to: &w, trackID: trackID, volume: 0, width: 0, height: 0) },
                timescale: timescale, language: language, handler: "text", handlerName: "TextHandler", to: &w,
                // §7.3 (ISO/IEC 14496-12 §12.5): a text track's media header is the NullMediaHeaderBox.
                mediaHeader: { w in try w.fullBox("nmhd", version: 0, flags: 0) { _ in } },
                sampleEntry: { w in try writeSampleEntry(to: &w, label: label) })
            try w.box("mvex") { w in try TrackExtendsBox.write(to: &w, trackID: trackID) }
        }
        return w.bytes
    }

    /// `wvtt` (§7.5 WVTTSampleEntry, a PlainTextSampleEntry: SampleEntry's 6 reserved bytes and
    /// `data_reference_index` 1) with its `vttC` and, when given, `vlab`.
    static func writeSampleEntry(to w: inout BoxWriter, label: String?) throws {
        try w.box(sampleEntryType) { w in
            w.writeZeros(6)                           // reserved
            w.write(UInt16(1))                        // data_reference_index
            try w.box("vttC") { w in w.write(bytes: configuration.utf8) }
            if let label { try w.box("vlab") { w in w.write(bytes: label.utf8) } }
        }
    }

    /// One sample: a `vttc` per cue (§7.4 VTTCueBox: `iden` CueIDBox, `sttg` CueSettingsBox, `payl` CuePayloadBox,
    /// each a boxstring, the optional ones only when the cue has them), or a single `vtte` (VTTEmptyCueBox) for none.
    public static func sample(_ cues: [SubtitleCue]) throws -> [UInt8] {
        var w = BoxWriter(reservingCapacity: 64)
        if cues.isEmpty { try w.box("vtte") { _ in } }
        for c in cues {
            try w.box("vttc") { w in
                if let id = c.id { try w.box("iden") { w in w.write(bytes: id.utf8) } }
                if let s = c.settings { try w.box("sttg") { w in w.write(bytes: s.utf8) } }
                try w.box("payl") { w in w.write(bytes: c.text.utf8) }
            }
        }
        return w.bytes
    }

    /// The samples of `[from, to)` (cues on the same timeline as `from`): a new sample wherever a cue starts or
    /// ends, each with the cues shown throughout it (§7.4: "each sample … contains the cues active during the
    /// sample's time", a cue spanning samples repeated in each), so the durations add up to `to - from`.
    public static func samples(_ cues: [SubtitleCue], from: MediaTime, to: MediaTime) throws -> [(bytes: [UInt8], duration: UInt32)] {
        let ts = from.timescale
        let start = from.value, end = to.converted(to: ts).value
        guard end > start else { return [] }
        let shown = cues.filter { $0.overlaps(from: from, to: to) }.map { c -> (Int64, Int64, SubtitleCue) in
            (max(start, c.start.converted(to: ts).value), min(end, c.end.converted(to: ts).value), c)
        }
        var cuts = Set([start, end])
        for (a, b, _) in shown { cuts.insert(a); cuts.insert(b) }
        let times = cuts.sorted()
        var out: [(bytes: [UInt8], duration: UInt32)] = []
        for (a, b) in zip(times, times.dropFirst()) where b > a {
            guard let d = UInt32(exactly: b - a) else { throw MP4Error.invalidConfiguration("a WebVTT sample of \(b - a) ticks") }
            out.append((try sample(shown.filter { $0.0 <= a && $0.1 >= b }.map(\.2)), d))
        }
        return out
    }

    /// A whole media segment (`styp` + one `moof` + `mdat`) of `[from, to)`, `tfdt` = `from`.
    public static func segment(_ cues: [SubtitleCue], from: MediaTime, to: MediaTime, sequenceNumber: UInt32,
                               trackID: UInt32 = 1) throws -> [UInt8] {
        let samples = try samples(cues, from: from, to: to)
        let fragment = try TrackFragment(trackID: trackID, decodeTime: from.value, samples: samples.map {
            FragmentSample(duration: $0.duration, size: UInt32($0.bytes.count), isSync: true)
        }, isVideo: false)
        var out = MediaSegmentBoxes.styp()
        out += try MediaSegmentBoxes.fragmentHeader(sequenceNumber: sequenceNumber, tracks: [fragment])
        for s in samples { out += s.bytes }
        return out
    }
}
