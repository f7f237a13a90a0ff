import MediaCore
import Pipeline
import Testing

/// Plans for a square-pixel H.264 source of this size (the common case in these tests).
private func plan(_ value: String, _ width: Int = 1280, _ height: Int = 720, sar: Rational = Rational(1, 1),
                  h264: Bool = true, bitRate: Int? = nil, segment: MediaTime = .seconds(1)) throws -> (rungs: [LadderRung], notices: [String]) {
    try Ladder.plan(value, sourceWidth: width, sourceHeight: height, sourceSampleAspectRatio: sar,
                    sourceCopyable: h264, sourceBitRate: bitRate, segmentDuration: segment)
}

private func sizes(_ rungs: [LadderRung]) -> [String] { rungs.map { "\($0.width)x\($0.height)" } }

/// The error's one line, or nil if `body` did not throw a `LadderError`.
private func message(_ body: () throws -> Any) -> String? {
    do { _ = try body(); return nil } catch let e as LadderError { return e.description } catch { return "other: \(error)" }
}

@Suite("--ladder plan")
struct LadderPlanTests {
    /// A rung's codec, else the stream's: H.265 rungs are named with it, so a height can be offered in both.
    @Test func codecsPerRung() throws {
        let rungs = try Ladder.plan("1080:hevc,1080,720", sourceWidth: 1920, sourceHeight: 1080,
                                    sourceSampleAspectRatio: Rational(1, 1), sourceCopyable: true, sourceBitRate: nil).rungs
        #expect(rungs.map(\.name) == ["1080p-hevc", "1080p", "720p"])
        #expect(rungs.map(\.codec) == [.hevc, .h264, .h264])
        let all = try Ladder.plan("720,360", sourceWidth: 1280, sourceHeight: 720, sourceSampleAspectRatio: Rational(1, 1),
                                  sourceCopyable: true, sourceBitRate: nil, codec: .hevc).rungs
        #expect(all.map(\.name) == ["720p-hevc", "360p-hevc"])
        #expect(message { try plan("720:hevc,720:h265") } == "--ladder: 720p is given twice")
    }

    /// SVT-AV1 (FFmpeg 5.1) ignores forced keyframes: beside a copied rung, whose keyframes every encoded rung follows,
    /// an AV1 rung is encoded with libaom-av1 instead, and the log says so once; all-encoded ladders share the fixed
    /// grid and keep SVT-AV1.
    @Test func av1RungsBesideACopiedRungAreNoticed() throws {
        let mixed = try plan("source,720:av1,360")
        #expect(mixed.notices == ["--ladder: 720p-av1 is encoded with libaom-av1 (realtime), which puts a keyframe at each "
                                  + "of the copied 'source' rung's; SVT-AV1, the other AV1 encoder, keeps a fixed GOP"])
        #expect(try plan("720:av1,360:av1").notices.isEmpty)
        #expect(try plan("source,720:hevc,360").notices.isEmpty)
    }

    @Test func widthsFollowTheDisplayAspectRatio() throws {
        // 16:9 square pixels.
        #expect(sizes(try plan("720,480,360,240").rungs) == ["1280x720", "854x480", "640x360", "426x240"])
        #expect(sizes(try plan("1080,720,540,144", 1920, 1080).rungs) == ["1920x1080", "1280x720", "960x540", "256x144"])
        // 4:3 square pixels.
        #expect(sizes(try plan("480,360,240", 640, 480).rungs) == ["640x480", "480x360", "320x240"])
        // Anamorphic: PAL 4:3 (SAR 16:15), PAL 16:9 (SAR 64:45), HDV 1440x1080 (SAR 4:3).
        #expect(sizes(try plan("576,360", 720, 576, sar: Rational(16, 15)).rungs) == ["768x576", "480x360"])
        #expect(sizes(try plan("576,360", 720, 576, sar: Rational(64, 45)).rungs) == ["1024x576", "640x360"])
        #expect(sizes(try plan("1080,720", 1440, 1080, sar: Rational(4, 3)).rungs) == ["1920x1080", "1280x720"])
        // An unknown SAR (0:1) counts as square.
        #expect(sizes(try plan("360", 640, 480, sar: Rational(0, 1)).rungs) == ["480x360"])
        // Odd source width: still even.
        #expect(sizes(try plan("720,360", 1279, 720).rungs) == ["1280x720", "640x360"])
    }

    @Test func oddHeightsAreRoundedDownToEvenWithANotice() throws {
        let (rungs, notices) = try plan("719,481")
        #expect(sizes(rungs) == ["1276x718", "854x480"])
        #expect(rungs.map(\.name) == ["718p", "480p"])
        #expect(notices == ["--ladder: 719 rounded down to 718p (4:2:0 needs an even height)",
                            "--ladder: 481 rounded down to 480p (4:2:0 needs an even height)"])
        #expect(message { try plan("481,480") } == "--ladder: 480p is given twice")
        #expect(message { try plan("17") } == nil)  // 16 is the smallest
    }

    @Test func tallerRungsAreDroppedWithOneNotice() throws {
        let (rungs, notices) = try plan("1080,720,480,2160")
        #expect(rungs.map(\.name) == ["720p", "480p"])  // 720 = the source height: kept, encoded
        #expect(!rungs[0].isSource)
        #expect(notices == ["--ladder: dropping 2160p, 1080p (taller than the 1280x720 source)"])
        #expect(try plan("720,480").notices.isEmpty)
        #expect(message { try plan("1080,720", 640, 360) }
                == "--ladder: every rung (1080p, 720p) is taller than the 640x360 source; add one of at most 360 lines, or 'source'")
        // `source` alone is enough to keep a plan alive.
        let onlySource = try plan("source,1080", 640, 360, bitRate: 900_000)
        #expect(onlySource.rungs.map(\.name) == ["source"])
        #expect(onlySource.notices == ["--ladder: dropping 1080p (taller than the 640x360 source)"])
    }

    @Test func orderIsHighestFirstWithSourceFirst() throws {
        let (rungs, _) = try plan("360,source,720,480", 1920, 1080, bitRate: 6_000_000)
        #expect(rungs.map(\.name) == ["source", "720p", "480p", "360p"])
        #expect(rungs[0] == LadderRung(name: "source", width: 1920, height: 1080, bitRate: 6_000_000,
                                       maxBitRate: nil, bufferSize: nil, isSource: true))
        #expect(try plan("source", bitRate: nil).rungs[0].bitRate == nil)
        #expect(try plan("source", bitRate: 0).rungs[0].bitRate == nil)
        // A source-height rung next to `source`: both (a copy and an encode) are kept.
        #expect(try plan("720,source").rungs.map(\.name) == ["source", "720p"])
    }

    @Test func duplicatesAndSourceErrors() throws {
        #expect(message { try plan("720,480,720p") } == "--ladder: 720p is given twice")
        #expect(message { try plan("source,480,source") } == "--ladder: 'source' is given twice")
        #expect(message { try plan("source,480", h264: false) }
                == "--ladder: 'source' copies the input video, which needs H.264, H.265 or AV1 input; this input's video is none of them (list heights only)")
        #expect(try plan("720,480", h264: false).rungs.count == 2)
        #expect(message { try plan("720", 0, 0) } == "--ladder: the input video has no usable picture size (0x0)")
        #expect(throws: LadderError.sourceNotCopyable) {
            try Ladder.plan([.source], sourceWidth: 1280, sourceHeight: 720, sourceSampleAspectRatio: Rational(1, 1),
                            sourceCopyable: false, sourceBitRate: nil)
        }
    }

    @Test func defaultBitRateTable() {
        let table = [2160: 12_000_000, 1440: 8_000_000, 1080: 5_000_000, 720: 2_800_000, 540: 2_000_000,
                     480: 1_400_000, 360: 800_000, 240: 400_000, 144: 200_000]
        for (h, rate) in table { #expect(Ladder.defaultBitRate(height: h) == rate, "\(h)") }
        // Other heights: the nearest entry scaled by pixel count, (h / entry)², whole kbit/s.
        #expect(Ladder.defaultBitRate(height: 600) == 2_469_000)   // 540: 2000k × (600/540)²
        #expect(Ladder.defaultBitRate(height: 4320) == 48_000_000) // 2160 × 4
        #expect(Ladder.defaultBitRate(height: 100) == 96_000)      // 144: 200k × (100/144)² = 96.45k
        #expect(Ladder.defaultBitRate(height: 630) == 2_722_000)   // tie 540/720: the lower entry
        #expect(Ladder.defaultBitRate(height: 1260) == 6_806_000)  // tie 1080/1440: 1080
        #expect(Ladder.defaultBitRate(height: 718) == 2_784_000)   // 720: 2800k × (718/720)²
    }

    @Test func rateControlSettings() throws {
        let (rungs, _) = try plan("720,480:1.2M,360:800000")
        #expect(rungs.map(\.bitRate) == [2_800_000, 1_200_000, 800_000])
        #expect(rungs.map(\.maxBitRate) == [3_080_000, 1_320_000, 880_000])   // × 1.1
        #expect(rungs.map(\.bufferSize) == [3_080_000, 1_320_000, 880_000])   // one 1-second segment at the peak
        let twoSeconds = try plan("720:3000k", segment: .milliseconds(2000))
        #expect(twoSeconds.rungs[0].maxBitRate == 3_300_000 && twoSeconds.rungs[0].bufferSize == 6_600_000)
        #expect(rungs.allSatisfy { !$0.isSource })
        #expect(rungs[1].description == "480p 854x480 1200k")
    }
}
