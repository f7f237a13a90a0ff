import Testing
@testable import MediaCore

@Suite struct TimedID3Tests {
    /// An ID3v2 tag of one text frame; frame sizes syncsafe for v2.4, plain for v2.3.
    private func tag(_ text: String, major: UInt8 = 4, padding: Int = 0) -> [UInt8] {
        let body: [UInt8] = [3] + Array(text.utf8)
        let n = body.count
        let size: [UInt8] = major == 4
            ? [UInt8((n >> 21) & 0x7F), UInt8((n >> 14) & 0x7F), UInt8((n >> 7) & 0x7F), UInt8(n & 0x7F)]
            : [UInt8((n >> 24) & 0xFF), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        let frames = Array("TIT2".utf8) + size + [0, 0] + body + [UInt8](repeating: 0, count: padding)
        let t = frames.count
        return Array("ID3".utf8) + [major, 0, 0, UInt8((t >> 21) & 0x7F), UInt8((t >> 14) & 0x7F), UInt8((t >> 7) & 0x7F),
                                    UInt8(t & 0x7F)] + frames
    }

    @Test func aWholeTagIsTakenAsItIs() {
        let t = tag("Song title", padding: 16)
        #expect(TimedID3.tag(t) == t)
        #expect(TimedID3.tag(tag("x", major: 3)) == tag("x", major: 3))
    }

    /// libavformat 5.1 drops the first 5 bytes of a stream-type-0x15 PES payload ("ID3" and the version).
    @Test func theFiveBytesLibavformatSkipsAreRestored() {
        let t = tag("Song title")
        #expect(TimedID3.tag(Array(t.dropFirst(5))) == t)
        // A frame of 200 bytes: its v2.3 size is not syncsafe-equal, so the version is told from the tiling.
        let long = String(repeating: "a", count: 199)
        let v3 = tag(long, major: 3)
        #expect(TimedID3.tag(Array(v3.dropFirst(5))) == v3)
        let v4 = tag(long, major: 4)
        #expect(TimedID3.tag(Array(v4.dropFirst(5))) == v4)
    }

    @Test func garbageAndTruncatedTagsAreRefused() {
        let t = tag("Song title")
        #expect(TimedID3.tag([]) == nil)
        #expect(TimedID3.tag(Array("hello, this is not ID3".utf8)) == nil)
        #expect(TimedID3.tag(Array(t.dropLast(3))) == nil, "truncated")
        #expect(TimedID3.tag(Array(t.dropFirst(5).dropLast(1))) == nil, "truncated, without its header")
        #expect(TimedID3.tag(t + [0x41]) == nil, "a byte after the tag")
        var badFrame = t
        badFrame[10] = 0x01  // a frame id of control bytes
        #expect(TimedID3.tag(badFrame) == nil)
    }
}
