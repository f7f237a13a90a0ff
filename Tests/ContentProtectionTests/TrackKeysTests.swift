import ContentProtection
import ISOBMFF
import MediaCore
import MediaPresentation
import Testing

/// Per-track keys: which key a rendition gets by its tracks, and the stage encrypting each rendition with its own.
@Suite struct TrackKeysTests {
    static let avcC: [UInt8] = [1, 0x42, 0, 0x1E, 0xFF, 0xE0, 0]
    static func video(_ w: Int, _ h: Int) -> TrackFormat {
        TrackFormat(trackID: 1, kind: .video, timescale: 90000, codec: .h264(avcC: avcC), width: w, height: h)
    }
    static let audio = TrackFormat(trackID: 1, kind: .audio, timescale: 48000, codec: .aac(audioSpecificConfig: [0x11, 0x90]),
                                   sampleRate: 48000, channelCount: 2)
    static let sd = KeyUsage(label: "SD", video: [0...442_368], audio: [])
    static let hd = KeyUsage(label: "HD", video: [442_369...Int.max], audio: [])
    static let sound = KeyUsage(label: "AUDIO", video: [], audio: [0...Int.max])

    static func keys(_ usages: [KeyUsage]) throws -> TrackKeys {
        TrackKeys(try usages.enumerated().map { i, u in
            (u, try SampleProtection(scheme: .cbcs, key: [UInt8](repeating: UInt8(i + 1), count: 16),
                                     keyID: [UInt8](repeating: UInt8(0xA0 + i), count: 16)))
        })
    }

    @Test func aRenditionGetsTheKeyOfItsPictureOrItsSound() throws {
        let k = try Self.keys([Self.sd, Self.hd, Self.sound])
        #expect(try k.entry(for: [Self.video(640, 360)]) == 0)
        #expect(try k.entry(for: [Self.video(768, 576)]) == 0, "SD up to 442,368 pixels")
        #expect(try k.entry(for: [Self.video(1280, 720)]) == 1)
        #expect(try k.entry(for: [Self.audio]) == 2)
        #expect(try k.entry(for: [Self.video(1280, 720), Self.audio]) == 1, "a muxed rendition goes with its picture")
        #expect(try TrackKeys(k.entries[0].protection).entry(for: [Self.audio]) == 0, "one key: every track")
    }

    @Test func noKeyOrTwoKeysIsOneLine() throws {
        #expect(throws: TrackKeysError("no content key is for audio of 2 channels: the usage rules are SD, HD")) {
            try Self.keys([Self.sd, Self.hd]).entry(for: [Self.audio])
        }
        let all = KeyUsage(label: "VIDEO", video: [0...Int.max], audio: [])
        #expect(throws: TrackKeysError("video of 640×360 (230400 pixels) matches the usage rules of 2 content keys (SD, VIDEO): one key per track")) {
            try Self.keys([Self.sd, all]).entry(for: [Self.video(640, 360)])
        }
    }

    /// Through the stage: a 1280×720 rendition, a 640×360 one and an audio one, each init segment's `tenc` and each
    /// segment's `EXT-X-KEY` the key of its usage.
    @Test func theStageEncryptsEachRenditionWithItsKey() throws {
        let keys = try Self.keys([Self.sd, Self.hd, Self.sound])
        let p = Presentation<[UInt8]>(windowSize: 5) { bytes, _ in bytes }
        let stage = SampleEncryptionStage(keys, downstream: p)
        let renditions = [Rendition(name: "hd", kind: .video, scheme: .nested("hd")),
                          Rendition(name: "sd", kind: .video, scheme: .nested("sd")),
                          Rendition(name: "audio", kind: .audio, scheme: .nested("audio"), audioGroup: "audio")]
        try stage.consume(.layout(renditions, TimingPolicy(targetDuration: 1, partTarget: nil, segmentDuration: .seconds(1))))
        let tracks = [[Self.video(1280, 720)], [Self.video(640, 360)], [Self.audio]]
        for (r, t) in tracks.enumerated() {
            try stage.consume(.initSegment(rendition: r, bytes: try InitSegment.make(tracks: t), tracks: t))
        }
        for r in 0..<3 {
            let sample: [UInt8] = r == 2 ? [UInt8](repeating: 0x21, count: 64) : SampleEncryptionTests.nal([0x65], payload: 80)
            let t = TrackFragment(trackID: 1, baseMediaDecodeTime: 0, samples: [FragmentSample(duration: 3600, size: UInt32(sample.count), isSync: true)],
                                  isVideo: r < 2)
            let clear = MediaSegmentBoxes.styp() + (try MediaSegmentBoxes.fragmentHeader(sequenceNumber: 1, tracks: [t])) + sample
            try stage.consume(.part(rendition: r, PartInfo(segmentSequence: 0, index: 0, duration: .seconds(1), byteCount: clear.count,
                                                           independent: true, endsSegment: true), bytes: clear))
            try stage.consume(.segment(rendition: r, SegmentInfo(sequence: 0, startTime: .seconds(0), duration: .seconds(1),
                                                                 byteCount: clear.count), bytes: clear))
        }
        let windows = try #require(p.layout?.windows)
        for (r, want) in [(0, 0xA1), (1, 0xA0), (2, 0xA2)] as [(Int, UInt8)] {
            let snap = windows[r].snapshot()
            let kid = [UInt8](repeating: want, count: 16)
            #expect(snap.window.first?.info.encryption?.key.keyID == kid, "rendition \(r)")
            #expect(snap.window.first?.info.nextEncryption?.key.keyID == kid)
            let initBytes = try #require(snap.inits.last?.payload)
            #expect(initBytes.indices.contains { i in i + 16 <= initBytes.count && Array(initBytes[i..<(i + 16)]) == kid },
                    "the init segment's tenc names rendition \(r)'s KID")
        }
    }
}
