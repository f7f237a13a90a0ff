import Push
import Testing

/// `PushLane` (order, superseded playlists, the bound and what it drops), `Backoff` and the status verdicts.
@Suite struct PushLaneTests {
    static func seg(_ n: UInt64) -> PushItem { PushItem(path: "seg\(n).m4s", kind: .segment(n), body: [UInt8(n)]) }
    static func part(_ n: UInt64, _ i: Int) -> PushItem { PushItem(path: "seg\(n).\(i).m4s", kind: .part(n, i)) }
    static func playlist(_ text: String, path: String = "stream.m3u8") -> PushItem {
        PushItem(path: path, kind: .playlist, body: Array(text.utf8))
    }
    static func delete(_ n: UInt64) -> PushItem { PushItem(path: "seg\(n).m4s", kind: .delete) }
    static let initItem = PushItem(path: "init.mp4", kind: .initSegment(0), body: [1])

    @Test func objectsLeaveInTheOrderTheyCame() {
        var lane = PushLane(limit: 10)
        let items = [Self.initItem, Self.part(0, 0), Self.seg(0), Self.playlist("a")]
        items.forEach { lane.enqueue($0) }
        var out: [PushItem] = []
        while let i = lane.next() {
            #expect(lane.next() == nil, "one object in flight at a time")
            out.append(i)
            lane.done()
        }
        #expect(out == items)
        #expect(lane.isIdle)
    }

    @Test func aNewerPlaylistReplacesThePendingOneAndGoesLast() {
        var lane = PushLane(limit: 10)
        lane.enqueue(Self.seg(0))
        lane.enqueue(Self.playlist("lists 0"))
        lane.enqueue(Self.playlist("index", path: "index.m3u8"))
        lane.enqueue(Self.seg(1))
        lane.enqueue(Self.playlist("lists 0 1"))
        #expect(lane.pending == [Self.seg(0), Self.playlist("index", path: "index.m3u8"), Self.seg(1), Self.playlist("lists 0 1")])
    }

    @Test func anInFlightPlaylistIsSupersededByANewerOne() {
        var lane = PushLane(limit: 10)
        lane.enqueue(Self.playlist("old"))
        #expect(lane.next() == Self.playlist("old"))
        #expect(!lane.inFlightIsSuperseded)
        lane.enqueue(Self.seg(1))
        #expect(!lane.inFlightIsSuperseded)
        lane.enqueue(Self.playlist("new"))
        #expect(lane.inFlightIsSuperseded)
        lane.done()
        #expect(!lane.inFlightIsSuperseded)
    }

    @Test func aFullLaneDropsDeletionsThenPartsThenSegmentsOldestFirst() {
        var lane = PushLane(limit: 3)
        lane.enqueue(Self.initItem)
        lane.enqueue(Self.seg(0))
        lane.enqueue(Self.part(1, 0))
        lane.enqueue(Self.delete(0))
        #expect(lane.enqueue(Self.playlist("p")) == 0, "a playlist does not count")
        #expect(lane.enqueue(Self.part(1, 1)) == 1)
        #expect(!lane.pending.contains(Self.delete(0)), "a deletion goes first")
        #expect(lane.enqueue(Self.seg(1)) == 1)
        #expect(!lane.pending.contains(Self.part(1, 0)), "then the oldest part")
        #expect(lane.enqueue(Self.seg(2)) == 1)
        #expect(!lane.pending.contains(Self.part(1, 1)))
        #expect(lane.enqueue(Self.seg(3)) == 1)
        #expect(lane.pending == [Self.initItem, Self.playlist("p"), Self.seg(1), Self.seg(2), Self.seg(3)],
                "then the oldest segment; the init segment and the playlist stay")
        #expect(lane.dropped == 4)
    }

    @Test func theInFlightObjectIsNotCountedNorDropped() {
        var lane = PushLane(limit: 1)
        lane.enqueue(Self.seg(0))
        #expect(lane.next() == Self.seg(0))
        #expect(lane.enqueue(Self.seg(1)) == 0)
        #expect(lane.enqueue(Self.seg(2)) == 1)
        #expect(lane.inFlight == Self.seg(0))
        #expect(lane.pending == [Self.seg(2)])
    }

    @Test func backoffDoublesUpToItsCap() {
        let b = Backoff()
        #expect((1...8).map { b.delayMilliseconds(afterFailures: $0) } == [250, 500, 1000, 2000, 4000, 4000, 4000, 4000])
        #expect(b.delayMilliseconds(afterFailures: 1_000_000) == 4000)
        let odd = Backoff(initialMilliseconds: 300, capMilliseconds: 1000)
        #expect((1...4).map { odd.delayMilliseconds(afterFailures: $0) } == [300, 600, 1000, 1000])
    }

    @Test func statusVerdicts() {
        #expect(PushResult.classify(status: 201, reason: "Created", method: .put) == .accepted)
        #expect(PushResult.classify(status: 204, reason: "No Content", method: .post) == .accepted)
        #expect(PushResult.classify(status: 404, reason: "Not Found", method: .delete) == .accepted)
        #expect(PushResult.classify(status: 404, reason: "Not Found", method: .put) == .refused(status: 404, reason: "Not Found"))
        #expect(PushResult.classify(status: 403, reason: "Forbidden", method: .put) == .refused(status: 403, reason: "Forbidden"))
        #expect(PushResult.classify(status: 301, reason: "Moved Permanently", method: .put) == .refused(status: 301, reason: "Moved Permanently"))
        #expect(PushResult.classify(status: 408, reason: "Request Timeout", method: .put) == .failed("408 Request Timeout"))
        #expect(PushResult.classify(status: 429, reason: "Too Many Requests", method: .put) == .failed("429 Too Many Requests"))
        #expect(PushResult.classify(status: 503, reason: "Service Unavailable", method: .delete) == .failed("503 Service Unavailable"))
    }
}
