import CryptoPrimitives
import ContentProtection
import ISOBMFF
import MediaCore
import MediaPresentation
import Testing

/// CENC sample encryption: subsample maps per NAL unit, the cbcs pattern, round trips through swift-crypto, and the
/// stage's protected init segments and fragments.
@Suite struct SampleEncryptionTests {
    static let key = [UInt8](0..<16)
    static let kid = [UInt8](0x40..<0x50)

    /// A length-prefixed NAL unit (4-byte lengths): `header` then `payload` bytes.
    static func nal(_ header: [UInt8], payload: Int, seed: UInt8 = 7) -> [UInt8] {
        let body = header + (0..<payload).map { UInt8(truncatingIfNeeded: Int(seed) &* 31 &+ $0) }
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: body.count >> $0) } + body
    }

    @Test func h264SubsamplesPerNAL() {
        // AUD (type 9, 2 bytes), SEI (type 6, 20 bytes), IDR slice (type 5, header + 100), non-IDR slice (type 1, 1 + 10).
        let sample = Self.nal([0x09], payload: 1) + Self.nal([0x06], payload: 19) + Self.nal([0x65], payload: 100)
            + Self.nal([0x41], payload: 10)
        let cenc = SubsampleLayout.video(sample, coding: .h264, nalLengthSize: 4, scheme: .cenc)
        // cenc: clear = AUD (6) + SEI (24) + IDR length and header (5) + 100 % 16 = 4; protected 96 (whole blocks).
        // The small slice's 10 bytes are less than a block: all clear, as a last subsample with nothing protected.
        #expect(cenc == [SubsampleEntry(clear: 6 + 24 + 5 + 4, protected: 96), SubsampleEntry(clear: 15, protected: 0)])
        let cbcs = SubsampleLayout.video(sample, coding: .h264, nalLengthSize: 4, scheme: .cbcs)
        // cbcs: the whole slice payload after its header is protected (the pattern leaves the partial block clear).
        #expect(cbcs == [SubsampleEntry(clear: 35, protected: 100), SubsampleEntry(clear: 5, protected: 10)])
        for s in [cenc, cbcs] {
            #expect(s.reduce(0) { $0 + Int($1.clearBytes) + Int($1.protectedBytes) } == sample.count)
        }
    }

    @Test func hevcHeaderIsTwoBytesAndLongClearRunsSplit() {
        // H.265 VPS (type 32: 0x40 0x01) is not VCL; IDR_W_RADL (type 19: 0x26 0x01) is.
        let big = Self.nal([0x40, 0x01], payload: 70_000)
        let slice = Self.nal([0x26, 0x01], payload: 64)
        let s = SubsampleLayout.video(big + slice, coding: .hevc, nalLengthSize: 4, scheme: .cenc)
        #expect(s == [SubsampleEntry(clear: .max, protected: 0), SubsampleEntry(clear: UInt16(70_006 - 65_535 + 6), protected: 64)])
    }

    @Test func cbcsPatternEncryptsOneBlockInTen() throws {
        let cipher = SampleCipher(scheme: .cbcs, key: Self.key)
        let iv = [UInt8](repeating: 0x33, count: 16)
        let clear = (0..<(25 * 16 + 7)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var sealed = clear
        try cipher.encrypt(&sealed, iv: iv, subsamples: [SubsampleEntry(clear: 0, protected: UInt32(clear.count))], crypt: 1, skip: 9)
        // Blocks 0, 10 and 20 are encrypted, as one CBC chain from the constant IV; the rest and the 7-byte tail are clear.
        var chain = Array(clear[0..<16] + clear[160..<176] + clear[320..<336])
        try AES.transform(&chain, mode: .cbc, key: Self.key, iv: iv)
        #expect(Array(sealed[0..<16]) == Array(chain.prefix(16)))
        #expect(Array(sealed[160..<176]) == Array(chain.dropFirst(16).prefix(16)))
        #expect(Array(sealed[320..<336]) == Array(chain.suffix(16)))
        for b in 0..<25 where b % 10 != 0 { #expect(sealed[(b * 16)..<(b * 16 + 16)] == clear[(b * 16)..<(b * 16 + 16)]) }
        #expect(sealed.suffix(7) == clear.suffix(7))
        var back = sealed
        try cipher.decrypt(&back, iv: iv, subsamples: [SubsampleEntry(clear: 0, protected: UInt32(clear.count))], crypt: 1, skip: 9)
        #expect(back == clear)
    }

    @Test func cencIsOneKeystreamOverTheProtectedRanges() throws {
        let cipher = SampleCipher(scheme: .cenc, key: Self.key)
        let iv: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let clear = (0..<100).map { UInt8($0) }
        let subs = [SubsampleEntry(clear: 4, protected: 32), SubsampleEntry(clear: 16, protected: 48)]
        var sealed = clear
        try cipher.encrypt(&sealed, iv: iv, subsamples: subs)
        var stream = Array(clear[4..<36] + clear[52..<100])
        try AES.transform(&stream, mode: .ctr, key: Self.key, iv: iv + [UInt8](repeating: 0, count: 8))
        #expect(Array(sealed[4..<36]) + Array(sealed[52..<100]) == Array(stream))
        #expect(sealed[0..<4] == clear[0..<4] && sealed[36..<52] == clear[36..<52])
        var back = sealed
        try cipher.decrypt(&back, iv: iv, subsamples: subs)
        #expect(back == clear)
        // Audio: the whole sample.
        var whole = clear
        try cipher.encrypt(&whole, iv: iv, subsamples: [])
        #expect(whole != clear && whole.count == clear.count)
    }

    @Test func ivsAreTheTimeline() {
        #expect(FragmentProtector.sampleIV(rendition: 2, trackID: 1, dts: 0x0102_0304_0506) == [2, 1, 1, 2, 3, 4, 5, 6])
    }

    /// A subtitle rendition (no media track in its init) stays in the clear; a fragment of a rendition whose init never
    /// came is still refused, not passed on clear.
    @Test func subtitleRenditionsStayClear() throws {
        let protection = try SampleProtection(scheme: .cbcs, key: Self.key, keyID: Self.kid, systems: [])
        let p = Presentation<[UInt8]>(windowSize: 5) { bytes, _ in bytes }
        let stage = SampleEncryptionStage(protection, downstream: p)
        let subs = Rendition.subtitles(SubtitleLabel(language: LanguageTag("en"), name: "English"), position: 0)
        try stage.consume(.layout([subs, subs.textTrackForm], TimingPolicy(targetDuration: 1, segmentDuration: .seconds(1))))
        try stage.consume(.initSegment(rendition: 0, bytes: [], tracks: []))
        let vtt = Array("WEBVTT\n\n".utf8)
        try stage.consume(.segment(rendition: 0, SegmentInfo(sequence: 0, startTime: .seconds(0), duration: .seconds(1),
                                                             byteCount: vtt.count), bytes: vtt))
        let segment = try #require(p.layout?.windows[0].snapshot().window.first)
        #expect(segment.payload == vtt && segment.info.encryption == nil)
        #expect(throws: (any Error).self) {
            try stage.consume(.segment(rendition: 1, SegmentInfo(sequence: 0, startTime: .seconds(0), duration: .seconds(1),
                                                                 byteCount: vtt.count), bytes: vtt))
        }
    }

    @Test func stageProtectsInitAndFragmentsAndSignals() throws {
        let protection = try SampleProtection(scheme: .cenc, key: Self.key, keyID: Self.kid, systems: [.widevine])
        #expect(protection.systems == [.widevine, .clearkey])
        let avcC: [UInt8] = [1, 0x42, 0, 0x1E, 0xFF, 0xE0, 0]
        let video = TrackFormat(trackID: 1, kind: .video, timescale: 90000, codec: .h264(avcC: avcC), width: 64, height: 48)
        let p = Presentation<[UInt8]>(windowSize: 5) { bytes, _ in bytes }
        let stage = SampleEncryptionStage(protection, downstream: p)
        try stage.consume(.layout([.muxed()], TimingPolicy(targetDuration: 1, partTarget: nil, segmentDuration: .seconds(1))))
        try stage.consume(.initSegment(rendition: 0, bytes: try InitSegment.make(tracks: [video]), tracks: [video]))
        let samples = [Self.nal([0x65], payload: 80, seed: 1), Self.nal([0x41], payload: 33, seed: 2)]
        let t = TrackFragment(trackID: 1, baseMediaDecodeTime: 0, samples: samples.map {
            FragmentSample(duration: 3600, size: UInt32($0.count), isSync: $0[4] == 0x65)
        }, isVideo: true)
        let clear = MediaSegmentBoxes.styp() + (try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [t])) + samples.joined()
        try stage.consume(.part(rendition: 0, PartInfo(segmentSequence: 0, index: 0, duration: .seconds(1), byteCount: clear.count,
                                                       independent: true, endsSegment: true), bytes: clear))
        let styp = MediaSegmentBoxes.styp().count
        try stage.consume(.segment(rendition: 0, SegmentInfo(sequence: 0, startTime: .seconds(0), duration: .seconds(1), byteCount: clear.count,
                                                             keyframe: KeyframeFragment(range: styp..<clear.count, decodeTime: .seconds(0))),
                                   bytes: clear))
        let snap = try #require(p.layout?.windows.first?.snapshot())
        let segment = try #require(snap.window.first)
        #expect(segment.info.encryption?.method == .sampleAESCTR)
        let key = segment.info.encryption!.playlistKey()
        #expect(key.keyFormat == "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed" && key.alternatives.map(\.keyFormat) == ["org.w3.clearkey"])
        #expect(key.line.contains("#EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI=\"data:text/plain;base64,"))
        #expect(snap.contentKey(0) == nil, "a CENC key is never the origin's to serve")
        let sealed = segment.payload
        #expect(sealed.count == segment.info.byteCount && sealed.count > clear.count)
        // The keyframe fragment moved with the bytes: still from the moof (after the styp) to the end.
        #expect(segment.info.keyframe?.range == styp..<sealed.count)
        // The media bytes sit at the end, encrypted: decrypting each sample with the subsamples the layout gives
        // returns the clear ones.
        let cipher = SampleCipher(scheme: .cenc, key: Self.key)
        var at = sealed.count - samples.joined().count
        var dts: UInt64 = 0
        for s in samples {
            var bytes = Array(sealed[at..<(at + s.count)])
            #expect(bytes != s)
            let subs = SubsampleLayout.video(s, coding: .h264, nalLengthSize: 4, scheme: .cenc)
            try cipher.decrypt(&bytes, iv: FragmentProtector.sampleIV(rendition: 0, trackID: 1, dts: dts), subsamples: subs)
            #expect(bytes == s)
            at += s.count
            dts += 3600
        }
    }

    @Test func keyPeriodsDeriveKeysAndKIDs() throws {
        let p = try SampleProtection(scheme: .cbcs, key: Self.key, keyPeriod: .seconds(60))
        let one = p.period(1), two = p.period(2)
        #expect(one.key.id == 1 && one.keyID != two.keyID && one.key.bytes != two.key.bytes && one.constantIV != two.constantIV)
        // HMAC-SHA256(K, "hls-origin cenc key " ‖ n)[0..<16], KID the same with "hls-origin cenc kid ".
        func derive(_ label: String, _ n: UInt64) -> [UInt8] {
            var m = Array(label.utf8)
            withUnsafeBytes(of: n.bigEndian) { m.append(contentsOf: $0) }
            return Array(SHA2.sha256.authenticationCode(for: m, key: Self.key).prefix(16))
        }
        #expect(one.key.bytes == derive("hls-origin cenc key ", 1) && one.keyID == derive("hls-origin cenc kid ", 1))
        #expect(p.period(1).keyID == one.keyID, "the same on every call (and origin)")
        var dumped = ""
        dump(one, to: &dumped)
        let hex = one.key.bytes.map { String($0) }.joined(separator: ", ")
        #expect("\(one)" == "cbcs with content key 1" && !dumped.contains(hex) && !dumped.contains("master"))
        let fixed = try SampleProtection(scheme: .cbcs, key: Self.key, keyID: Self.kid)
        #expect(fixed.period(7).keyID == Self.kid && fixed.period(7).key.bytes == Self.key, "no period: one key")
    }

    /// Segments of a 1-s stream through a stage with a clear lead of 2 s and 1-s key periods: the first two clear
    /// (no encryption fact, a seig isProtected 0 entry, media bytes untouched), then a new key every segment.
    @Test func clearLeadThenRotatingKeys() throws {
        let protection = try SampleProtection(scheme: .cbcs, key: Self.key, keyPeriod: .seconds(1))
        let avcC: [UInt8] = [1, 0x42, 0, 0x1E, 0xFF, 0xE0, 0]
        let video = TrackFormat(trackID: 1, kind: .video, timescale: 90000, codec: .h264(avcC: avcC), width: 64, height: 48)
        let p = Presentation<[UInt8]>(windowSize: 10) { bytes, _ in bytes }
        let stage = SampleEncryptionStage(protection, clearLead: .seconds(2), downstream: p)
        try stage.consume(.layout([.muxed()], TimingPolicy(targetDuration: 1, partTarget: nil, segmentDuration: .seconds(1))))
        try stage.consume(.initSegment(rendition: 0, bytes: try InitSegment.make(tracks: [video]), tracks: [video]))
        let sample = Self.nal([0x65], payload: 64, seed: 3)
        for n in 0..<4 {
            let t = TrackFragment(trackID: 1, baseMediaDecodeTime: UInt64(n) * 90000,
                                  samples: [FragmentSample(duration: 90000, size: UInt32(sample.count), isSync: true)], isVideo: true)
            let clear = MediaSegmentBoxes.styp() + (try MediaSegmentBoxes.fragmentHeader(sequenceNumber: UInt32(n + 1), tracks: [t])) + sample
            try stage.consume(.part(rendition: 0, PartInfo(segmentSequence: UInt64(n), index: 0, duration: .seconds(1), byteCount: clear.count,
                                                           independent: true, endsSegment: true), bytes: clear))
            try stage.consume(.segment(rendition: 0, SegmentInfo(sequence: UInt64(n), startTime: .seconds(Int64(n)), duration: .seconds(1),
                                                                 byteCount: clear.count), bytes: clear))
        }
        let window = try #require(p.layout?.windows.first?.snapshot()).window
        #expect(window.map { $0.info.encryption?.key.id } == [nil, nil, 2, 3])
        #expect(window[1].info.nextEncryption?.key.keyID == protection.period(2).keyID, "the first key listed ahead")
        let first = window[0].payload, third = window[2].payload
        #expect(Array(first.suffix(sample.count)) == sample && !first.contains(subsequence: Array("senc".utf8)))
        #expect(first.contains(subsequence: Array("sgpd".utf8)) && third.contains(subsequence: protection.period(2).keyID))
        #expect(Array(third.suffix(sample.count)) != sample)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence s: [UInt8]) -> Bool {
        guard s.count <= count else { return false }
        return (0...(count - s.count)).contains { self[$0..<($0 + s.count)].elementsEqual(s) }
    }
}

