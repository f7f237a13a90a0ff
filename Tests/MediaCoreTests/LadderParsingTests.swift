import MediaCore
import Testing

/// The error's one line, or nil if `body` did not throw a `LadderError`.
private func message(_ body: () throws -> Any) -> String? {
    do { _ = try body(); return nil } catch let e as LadderError { return e.description } catch { return "other: \(error)" }
}

@Suite("--ladder parsing")
struct LadderParsingTests {
    @Test func acceptedForms() throws {
        #expect(try Ladder.parse("720,480,360") == [.height(720, bitRate: nil), .height(480, bitRate: nil), .height(360, bitRate: nil)])
        #expect(try Ladder.parse("source,720p,480P:1.2M") == [.source, .height(720, bitRate: nil), .height(480, bitRate: 1_200_000)])
        #expect(try Ladder.parse(" 720:3000k , 360:800000 ,240:0.5m,144:.25M,1080:5000K")
                == [.height(720, bitRate: 3_000_000), .height(360, bitRate: 800_000), .height(240, bitRate: 500_000),
                    .height(144, bitRate: 250_000), .height(1080, bitRate: 5_000_000)])
        #expect(try Ladder.parse("SOURCE") == [.source])
        #expect(try Ladder.parse("481") == [.height(481, bitRate: nil)])  // rounded by the plan, which says so
        #expect(try Ladder.parse("1080:hevc,1080:5M:H265,720:x264") == [.height(1080, bitRate: nil, codec: .hevc),
            .height(1080, bitRate: 5_000_000, codec: .hevc), .height(720, bitRate: nil, codec: .h264)])
    }

    @Test func errorsAreOneClearLine() {
        let cases: [(String, String)] = [
            ("72O", "--ladder: '72O' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("720,48o:1M", "--ladder: '48o' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("-720", "--ladder: '-720' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("720pp", "--ladder: '720pp' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("best", "--ladder: 'best' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("", "--ladder: no rungs given (use e.g. 720,480,360 or source,480:1200k)"),
            (" , ", "--ladder: no rungs given (use e.g. 720,480,360 or source,480:1200k)"),
            ("720,,480", "--ladder: empty rung in '720,,480' (use e.g. 720,480,360)"),
            ("0", "--ladder: '0' is out of range (heights go from 16 to 4320)"),
            ("8640", "--ladder: '8640' is out of range (heights go from 16 to 4320)"),
            ("1234567", "--ladder: '1234567' is not a height (use e.g. 720,480,360 or 720:3000k)"),
            ("720:3000x", "--ladder: '3000x' in '720:3000x' is not a bit rate or a codec (use e.g. 3000k, 1.2M, hevc)"),
            ("720:", "--ladder: '' in '720:' is not a bit rate or a codec (use e.g. 3000k, 1.2M, hevc)"),
            ("720:1.2.3M", "--ladder: '1.2.3M' in '720:1.2.3M' is not a bit rate or a codec (use e.g. 3000k, 1.2M, hevc)"),
            ("720:1.5", "--ladder: '1.5' in '720:1.5' is not a bit rate or a codec (use e.g. 3000k, 1.2M, hevc)"),
            ("720:3M:4M", "--ladder: '720:3M:4M' has more than a height, a rate and a codec (use e.g. 1080:5M:hevc)"),
            ("720:3M:hevc:x", "--ladder: '720:3M:hevc:x' has more than a height, a rate and a codec (use e.g. 1080:5M:hevc)"),
            ("720:10k", "--ladder: '10k' in '720:10k' is out of range (from 16k to 200000k)"),
            ("720:1G", "--ladder: '1G' in '720:1G' is not a bit rate or a codec (use e.g. 3000k, 1.2M, hevc)"),
            ("720:500M", "--ladder: '500M' in '720:500M' is out of range (from 16k to 200000k)"),
        ]
        for (value, expected) in cases {
            #expect(message { try Ladder.parse(value) } == expected, "\(value)")
        }
        #expect(throws: LadderError.notAHeight("72O")) { try Ladder.parse("72O") }
    }
}

@Suite("bit rates")
struct BitRateParsingTests {
    @Test func exactDecimals() {
        #expect(Ladder.parseBitRate("128k") == 128_000 && Ladder.parseBitRate("3M") == 3_000_000)
        #expect(Ladder.parseBitRate("2500000") == 2_500_000 && Ladder.parseBitRate("1.2M") == 1_200_000)
        #expect(Ladder.parseBitRate(".25M") == 250_000 && Ladder.parseBitRate("0.5k") == 500)
        #expect(Ladder.parseBitRate("0") == 0)
    }

    @Test func malformedOrTooLargeIsNil() {
        for bad in ["", "k", "1.", "1e3", "12x", "1.0001k", "-5", "+5", "1,5M", "999999999.999999M", "1234567890"] {
            #expect(Ladder.parseBitRate(bad) == nil, "\(bad)")
        }
        #expect(Ladder.parseBitRate("999999999M") == 999_999_999_000_000)
    }
}
