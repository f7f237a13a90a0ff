import ArgumentParser
import Foundation
import MediaCore
import ServeConfig
import Testing

/// The message a bad value gives for `option`, or nil if it parsed.
private func refusal<V: OptionValue>(_ type: V.Type, _ text: String, option: String = "--x") -> String? {
    do {
        _ = try V(parsing: text)
        return nil
    } catch {
        return error.message(option: option)
    }
}

/// Decodes `{"v": json}` and returns `v`.
private func decoded<V: OptionValue>(_ type: V.Type, json: String) throws -> V {
    try JSONDecoder().decode(Box<V>.self, from: Data("{\"v\": \(json)}".utf8)).v
}

private struct Box<V: Decodable>: Decodable { var v: V }

@Suite struct SecondsTests {
    @Test func exactMilliseconds() throws {
        let cases: [(String, Int64)] = [("1", 1000), ("0.5", 500), ("2.002", 2002), (".25", 250), ("0.3333", 333),
                                        ("1.", 1000), ("0", 0), ("999.999", 999_999), ("0.05", 50)]
        for (text, ms) in cases {
            let s = try Seconds(parsing: text)
            #expect(s.milliseconds == ms, "\(text)")
            #expect(s.time == MediaTime(value: ms, timescale: 1000))
        }
        #expect(try Seconds(parsing: "0.333").description == "0.333")
        #expect(Seconds(milliseconds: 2002).description == "2.002" && Seconds(milliseconds: 500).description == "0.5")
        #expect(Seconds(milliseconds: 1000).description == "1" && Seconds(milliseconds: 10).description == "0.01")
    }

    @Test func badTextIsOneLine() {
        #expect(refusal(Seconds.self, "abc", option: "--segment-duration") == "--segment-duration takes seconds, e.g. 1 or 0.5 (got 'abc')")
        #expect(refusal(Seconds.self, "1000", option: "--segment-duration") == "--segment-duration takes seconds, e.g. 1 or 0.5 (got '1000')")
        #expect(refusal(Seconds.self, "-1", option: "x") == "x takes seconds, e.g. 1 or 0.5 (got '-1')")
        #expect(refusal(Seconds.self, "1.2.3", option: "x") == "x takes seconds, e.g. 1 or 0.5 (got '1.2.3')")
        #expect(refusal(Seconds.self, "1.x", option: "segment_duration") == "segment_duration: bad number '1.x'")
        #expect(refusal(Seconds.self, "1.-5", option: "x") == "x: bad number '1.-5'")
    }

    @Test func rangesArePerUse() throws {
        #expect(throws: Never.self) { try Seconds(milliseconds: 100).check(within: 100...60_000) }
        #expect(throws: Never.self) { try Seconds(milliseconds: 60_000).check(within: 100...60_000) }
        #expect(throws: OptionError(" must be between 0.1 and 60.0 seconds")) { try Seconds(milliseconds: 99).check(within: 100...60_000) }
        #expect(throws: OptionError(" must be between 0.05 and 5.0 seconds")) { try Seconds(milliseconds: 5001).check(within: 50...5_000) }
    }

    @Test func readsNumbersAndStrings() throws {
        #expect(try decoded(Seconds.self, json: "2").milliseconds == 2000)
        #expect(try decoded(Seconds.self, json: "0.5").milliseconds == 500)
        #expect(try decoded(Seconds.self, json: "2.002").milliseconds == 2002)
        #expect(try decoded(Seconds.self, json: "\"0.333\"").milliseconds == 333)
        #expect(throws: DecodingError.self) { try decoded(Seconds.self, json: "true") }
        let back = try JSONEncoder().encode(["v": Seconds(milliseconds: 333)])
        #expect(String(decoding: back, as: UTF8.self) == "{\"v\":\"0.333\"}")
    }

    @Test func expressibleByArgument() {
        #expect(Seconds(argument: "0.5") == Seconds(milliseconds: 500) && Seconds(argument: "x") == nil)
        #expect(throws: ValidationError.self) { try Seconds(flag: "--part-duration", "x") }
    }
}

@Suite struct LongDurationTests {
    @Test func units() throws {
        let cases: [(String, Int64)] = [("90s", 90), ("10m", 600), ("2h", 7200), ("7d", 604_800), ("45", 45), ("1s", 1)]
        for (text, seconds) in cases {
            #expect(try LongDuration(parsing: text).seconds == seconds, "\(text)")
        }
        #expect(try LongDuration(parsing: "90s").time == MediaTime(value: 90_000, timescale: 1000))
        #expect(try LongDuration(parsing: "120m").description == "2h" && LongDuration(seconds: 90).description == "90s")
        #expect(try decoded(LongDuration.self, json: "600") == LongDuration(seconds: 600))
        #expect(try decoded(LongDuration.self, json: "\"10m\"") == LongDuration(seconds: 600))
    }

    @Test func badText() {
        for bad in ["", "s", "0s", "-5m", "10x", "1234567890s", "1.5h", "٣s"] {
            #expect(refusal(LongDuration.self, bad, option: "--dvr-window") == "--dvr-window takes a duration like 90s, 10m or 2h (got '\(bad)')", "\(bad)")
        }
        #expect(LongDuration.parse("999999999d") != nil)
    }
}

@Suite struct BitRateTests {
    @Test func exactDecimals() throws {
        let cases: [(String, Int)] = [("128k", 128_000), ("3M", 3_000_000), ("2500000", 2_500_000), ("1.2M", 1_200_000),
                                      ("2500K", 2_500_000), (".5k", 500), ("1", 1)]
        for (text, bits) in cases { #expect(try BitRate(parsing: text).bitsPerSecond == bits, "\(text)") }
        #expect(BitRate(bitsPerSecond: 3_000_000).description == "3M" && BitRate(bitsPerSecond: 128_000).description == "128k")
        #expect(BitRate(bitsPerSecond: 2_500_001).description == "2500001")
        #expect(try decoded(BitRate.self, json: "96000") == BitRate(bitsPerSecond: 96_000))
        #expect(try decoded(BitRate.self, json: "\"2.5M\"") == BitRate(bitsPerSecond: 2_500_000))
    }

    @Test func badText() {
        for bad in ["abc", "0", "0k", "-1k", "1e3", "1.0001k", "3G", "", "999999999.999999M"] {
            #expect(refusal(BitRate.self, bad, option: "--video-bitrate") == "--video-bitrate takes a rate like 128k or 3M (got '\(bad)')", "\(bad)")
        }
    }
}

@Suite struct PictureSizeTests {
    @Test func sizes() throws {
        #expect(try PictureSize(parsing: "1280x720") == PictureSize(width: 1280, height: 720))
        #expect(try PictureSize(parsing: "1280X-1") == PictureSize(width: 1280, height: nil))
        #expect(try PictureSize(parsing: "-1x720") == PictureSize(width: nil, height: 720))
        #expect(try PictureSize(parsing: "16384x1").description == "16384x1")
        #expect(PictureSize(width: 1280, height: nil).description == "1280x-1")
        #expect(try PictureSize(width: 320, height: 240).exact() == (320, 240))
        #expect(throws: OptionError(": bad size '1280x-1'")) { try PictureSize(width: 1280, height: nil).exact() }
        #expect(try decoded(PictureSize.self, json: "\"640x360\"") == PictureSize(width: 640, height: 360))
    }

    @Test func badText() {
        #expect(refusal(PictureSize.self, "0x0", option: "--size") == "--size: bad size '0x0'")
        #expect(refusal(PictureSize.self, "16385x720", option: "--size") == "--size: bad size '16385x720'")
        #expect(refusal(PictureSize.self, "1280", option: "--size") == "--size takes WIDTHxHEIGHT, e.g. 1280x720 (got '1280')")
        #expect(refusal(PictureSize.self, "1x2x3", option: "size") == "size takes WIDTHxHEIGHT, e.g. 1280x720 (got '1x2x3')")
        #expect(refusal(PictureSize.self, "-1x-1", option: "--size") == "--size: give at least one of width and height")
    }
}

@Suite struct FrameRateTests {
    @Test func rates() throws {
        #expect(try FrameRate(parsing: "30").rate == Rational(30, 1))
        #expect(try FrameRate(parsing: "30000/1001").rate == Rational(30000, 1001))
        #expect(try FrameRate(parsing: "240").description == "240")
        #expect(try FrameRate(parsing: "30000/1001").description == "30000/1001")
        #expect(try decoded(FrameRate.self, json: "25").rate == Rational(25, 1))
    }

    @Test func badText() {
        for bad in ["0", "241", "-30", "30/0", "abc", "29.97", "1/2/3"] {
            #expect(refusal(FrameRate.self, bad, option: "--framerate") == "--framerate takes a positive rate like 30 or 30000/1001 (got '\(bad)')", "\(bad)")
        }
    }
}

@Suite struct LadderAndTranscodeTests {
    @Test func ladderKeepsItsTextAndParses() throws {
        let ladder = try LadderSpec(parsing: "source,720:3000k")
        #expect(ladder.text == "source,720:3000k" && ladder.rungs == [.source, .height(720, bitRate: 3_000_000)])
        #expect(try decoded(LadderSpec.self, json: "720").rungs == [.height(720, bitRate: nil)])
        // LadderError's line names --ladder itself, whatever the option is called.
        #expect(refusal(LadderSpec.self, "abc", option: "ladder") == "--ladder: 'abc' is not a height (use e.g. 720,480,360 or 720:3000k)")
    }

    @Test func transcode() throws {
        struct Box: Decodable { var transcode: Transcode }
        #expect(try JSONDecoder().decode(Box.self, from: Data("{\"transcode\": \"never\"}".utf8)).transcode == .never)
        #expect(Transcode(argument: "always") == .always && Transcode(argument: "sometimes") == nil)
        #expect(Transcode.allValueStrings == ["auto", "always", "never"])
    }
}
