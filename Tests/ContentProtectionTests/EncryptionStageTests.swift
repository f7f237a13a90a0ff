import ContentProtection
import HLS
import MediaCore
import MediaPresentation
import Testing

/// The stage between a producer and its consumers: what it encrypts, the facts it passes on, and the playlists
/// built from them (keys before every segment, before the parts of the segment in progress, in delta updates).
@Suite struct EncryptionStageTests {
    static let master = [UInt8](100..<116)

    /// A presentation that keeps every object's bytes, behind the stage.
    static func make(partTarget: MediaTime?, period: MediaTime? = nil) throws -> (EncryptionStage, Presentation<[UInt8]>) {
        let p = Presentation<[UInt8]>(windowSize: 20) { bytes, _ in bytes }
        let stage = EncryptionStage(KeySchedule(master: master, period: period), downstream: p)
        try stage.consume(.layout([.muxed()], TimingPolicy(targetDuration: 1, partTarget: partTarget, segmentDuration: .seconds(1))))
        try stage.consume(.initSegment(rendition: 0, bytes: [1, 2, 3], tracks: []))
        return (stage, p)
    }

    static func ivHex(_ n: UInt64) -> String {
        let digits = String(n, radix: 16, uppercase: true)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }

    static func clear(_ n: UInt64, _ i: Int) -> [UInt8] { (0..<(40 + i * 7)).map { UInt8(truncatingIfNeeded: Int(n) * 13 + $0 + i) } }

    /// Publishes segment `n` as `parts` parts, then the segment (its parts' bytes in turn).
    static func publish(_ stage: EncryptionStage, _ n: UInt64, parts: Int) throws {
        var all = MediaBytes()
        var ranges: [Range<Int>] = []
        for i in 0..<parts {
            let bytes = clear(n, i)
            ranges.append(all.count..<(all.count + bytes.count))
            try stage.consume(.part(rendition: 0, PartInfo(segmentSequence: n, index: i, duration: MediaTime(value: 1, timescale: Int32(parts)),
                                                           byteCount: bytes.count, independent: i == 0, endsSegment: i == parts - 1,
                                                           offset: ranges[i].lowerBound), bytes: bytes))
            all.append(bytes)
        }
        try stage.consume(.segment(rendition: 0, SegmentInfo(sequence: n, startTime: .seconds(Int64(n)), duration: .seconds(1),
                                                             byteCount: all.count, partRanges: ranges), bytes: all))
    }

    @Test func segmentsAndPartsDecryptToTheirClearBytes() throws {
        let (stage, p) = try Self.make(partTarget: MediaTime(value: 1, timescale: 3))
        for n in 0..<3 { try Self.publish(stage, UInt64(n), parts: 3) }
        let snap = p.layout!.windows[0].snapshot()
        #expect(snap.initSegment(0)?.payload == [1, 2, 3])
        for seg in snap.window {
            let e = try #require(seg.info.encryption)
            #expect(e.iv == KeySchedule.iv(seg.sequence) && e.key.bytes == Self.master)
            #expect(seg.info.partRanges.isEmpty && seg.info.byteCount == seg.payload.count)
            let clear = (0..<3).flatMap { Self.clear(seg.sequence, $0) }
            #expect(try SegmentCipher.decrypt(seg.payload, key: Self.master, iv: e.iv) == clear)
            // Each part is a CBC stream of its own from its segment's IV (as hls.js decrypts LL-HLS parts).
            for (i, part) in seg.parts.enumerated() {
                #expect(part.info.encryption == e)
                #expect(try SegmentCipher.decrypt(part.payload, key: Self.master, iv: e.iv) == Self.clear(seg.sequence, i))
            }
            #expect(seg.payload != seg.parts.flatMap(\.payload))
        }
    }

    @Test func aPartThatIsTheWholeSegmentIsEncryptedOnce() throws {
        let (stage, p) = try Self.make(partTarget: nil)
        try Self.publish(stage, 0, parts: 1)
        let seg = try #require(p.layout!.windows[0].snapshot().window.first)
        #expect(try SegmentCipher.decrypt(seg.payload, key: Self.master, iv: KeySchedule.iv(0)) == Self.clear(0, 0))
    }

    @Test func keysChangeOnSegmentBoundaries() throws {
        let (stage, p) = try Self.make(partTarget: nil, period: .seconds(2))
        for n in 0..<5 { try Self.publish(stage, UInt64(n), parts: 1) }
        let snap = p.layout!.windows[0].snapshot()
        #expect(snap.window.map { $0.info.encryption!.key.id } == [0, 0, 1, 1, 2])
        #expect(snap.contentKey(1)?.bytes == KeySchedule(master: Self.master, period: .seconds(2)).key(1).bytes)
        #expect(snap.contentKey(3) == nil)  // not yet in use: not given out
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: URIScheme.root("stream"), playlistType: nil)?.render())
        #expect(text.contains("URI=\"keys/0.key\"") && text.contains("URI=\"keys/2.key\""))
    }

    /// Right after a segment, before the next one's first part: the next segment's key line precedes the preload
    /// hint, and its key is served already when it starts a new period.
    @Test func thePreloadHintFollowsTheNextSegmentsKey() throws {
        let (stage, p) = try Self.make(partTarget: MediaTime(value: 1, timescale: 2), period: .seconds(2))
        for n in 0..<4 { try Self.publish(stage, UInt64(n), parts: 2) }
        let snap = p.layout!.windows[0].snapshot()
        let text = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: URIScheme.root("stream"), playlistType: nil)?.render())
        let lines = text.split(separator: "\n")
        let hint = try #require(lines.firstIndex { $0.hasPrefix("#EXT-X-PRELOAD-HINT") })
        #expect(lines[hint] == "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"seg4.0.m4s\"")
        #expect(lines[hint - 1] == "#EXT-X-KEY:METHOD=AES-128,URI=\"keys/2.key\",IV=0x" + Self.ivHex(4))
        #expect(snap.contentKey(2) == KeySchedule(master: Self.master, period: .seconds(2)).key(2))
        #expect(try MediaPlaylist.parse(text).render() == text)
    }

    /// The map before any key (init segments clear), a key before every segment and before the parts of the segment
    /// in progress, the signature on the key URI, and the first segment of a delta update with its key.
    @Test func playlistTags() throws {
        let (stage, p) = try Self.make(partTarget: MediaTime(value: 1, timescale: 2))
        for n in 0..<12 { try Self.publish(stage, UInt64(n), parts: 2) }
        try stage.consume(.part(rendition: 0, PartInfo(segmentSequence: 12, index: 0, duration: MediaTime(value: 1, timescale: 2),
                                                       byteCount: 10, independent: true), bytes: [UInt8](repeating: 1, count: 10)))
        let snap = p.layout!.windows[0].snapshot()
        let full = try #require(PlaylistBuilder.mediaPlaylist(snap, scheme: URIScheme.root("stream"), playlistType: nil,
                                                              uriQuery: "sig=1"))
        let lines = full.render().split(separator: "\n")
        let map = try #require(lines.firstIndex { $0.hasPrefix("#EXT-X-MAP") })
        let firstKey = try #require(lines.firstIndex { $0.hasPrefix("#EXT-X-KEY") })
        #expect(map < firstKey)
        #expect(lines[firstKey] == "#EXT-X-KEY:METHOD=AES-128,URI=\"keys/0.key?sig=1\",IV=0x00000000000000000000000000000000")
        // Every segment URI and the first trailing part follow their own key line.
        var key: Substring = ""
        for line in lines {
            if line.hasPrefix("#EXT-X-KEY") { key = line }
            if let n = line.firstMatch(of: /^seg(\d+)\.m4s/)?.1 ?? line.firstMatch(of: /URI="seg(\d+)\.\d+\.m4s/)?.1 {
                #expect(key.hasSuffix(",IV=0x" + Self.ivHex(UInt64(n)!)), "\(line)")
            }
        }
        #expect(try MediaPlaylist.parse(full.render()).render() == full.render())
        let delta = try #require(full.deltaUpdate())
        #expect(delta.skippedSegments! > 0)
        let deltaLines = delta.render().split(separator: "\n")
        let skip = try #require(deltaLines.firstIndex { $0.hasPrefix("#EXT-X-SKIP") })
        let firstSegment = try #require(deltaLines.firstIndex { $0.hasPrefix("seg") })
        let keyLine = try #require(deltaLines[skip..<firstSegment].last { $0.hasPrefix("#EXT-X-KEY") })
        #expect(keyLine.hasSuffix(Self.ivHex(delta.segments[0].sequence)))
        #expect(try MediaPlaylist.parse(delta.render()).segments.first?.key == delta.segments.first?.key)
    }
}
