import TestSupport
import MediaCore
import Testing
@testable import HLS

/// The skip arithmetic of `deltaUpdate()` over random live windows, checked against the full playlist as a
/// client reads it (parsed text, durations in whole microseconds), with plain integer sums.
@Suite struct DeltaUpdatePropertyTests {
    /// A random live LL-HLS window: 1–40 segments of 0.5–2.5 s in one of several timescales (arbitrary
    /// ticks; one window in four has whole-second segments and boundary, so segments end exactly on it),
    /// random discontinuities and map changes, dates on all / some / no segments, parts near the end,
    /// trailing parts, rendition reports, CAN-SKIP-UNTIL ≥ 6 × TARGETDURATION.
    static func randomWindow(_ rng: inout SplitMix64) -> MediaPlaylist {
        let timescale: Int32 = [90_000, 48_000, 44_100, 30_000, 1000, 1_000_000].randomElement(using: &rng)!
        let ts = Int64(timescale)
        let count = Int.random(in: 1...40, using: &rng)
        let first = UInt64.random(in: 0...1_000_000, using: &rng)
        let dates = Int.random(in: 0..<3, using: &rng)  // 0 none, 1 every segment, 2 some segments
        let wholeSeconds = Int.random(in: 0..<4, using: &rng) == 0 ? Int64.random(in: 1...2, using: &rng) : nil
        var clock = Int64.random(in: 1_600_000_000_000...1_900_000_000_000, using: &rng)
        var initIndex = 0
        var segments: [PlaylistSegment] = []
        func randomParts(_ seq: UInt64, total: Int64) -> [PlaylistPart] {
            let n = Int.random(in: 1...4, using: &rng)
            var left = total
            return (0..<n).map { i in
                let d = i == n - 1 ? left : Int64.random(in: 1...max(1, left / Int64(n - i)), using: &rng)
                left -= d
                return PlaylistPart(uri: "seg\(seq).\(i).m4s", duration: MediaTime(value: d, timescale: timescale),
                                    independent: i == 0)
            }
        }
        for i in 0..<count {
            let seq = first + UInt64(i)
            let ticks = wholeSeconds.map { $0 * ts } ?? Int64.random(in: ts / 2...ts * 5 / 2, using: &rng)
            let disc = i > 0 && Int.random(in: 0..<6, using: &rng) == 0
            var map: String?
            if (disc && Bool.random(using: &rng)) || Int.random(in: 0..<15, using: &rng) == 0 {
                initIndex += 1
                map = "init\(initIndex).mp4"
            }
            if disc { clock += Int64.random(in: 0...60_000, using: &rng) }
            let dated = dates == 1 || (dates == 2 && (i == 0 || disc || Int.random(in: 0..<5, using: &rng) == 0))
            segments.append(PlaylistSegment(
                sequence: seq, uri: "seg\(seq).m4s", duration: MediaTime(value: ticks, timescale: timescale),
                programDateTime: dated ? WallClock(millisecondsSince1970: clock) : nil, discontinuity: disc,
                mapURI: map, parts: i >= count - 3 || Int.random(in: 0..<10, using: &rng) == 0
                    ? randomParts(seq, total: ticks) : []))
            clock += ticks * 1000 / ts
        }
        let next = first + UInt64(count)
        let trailing = Bool.random(using: &rng) ? randomParts(next, total: ts / 2) : []
        let td = MediaPlaylist.targetDuration(for: segments.map(\.duration))
        let boundaryScale: Int32 = [1000, 90_000, 1_000_000].randomElement(using: &rng)!
        let extra = wholeSeconds != nil ? Int64.random(in: 0...4, using: &rng) * Int64(boundaryScale)
            : Int64.random(in: 0...4 * Int64(boundaryScale), using: &rng)
        let canSkipUntil = MediaTime(value: Int64(6 * td) * Int64(boundaryScale) + extra, timescale: boundaryScale)
        let reports = (0..<Int.random(in: 0...2, using: &rng)).map {
            RenditionReport(uri: "../r\($0)/index.m3u8", lastMSN: next, lastPart: Int.random(in: 0...3, using: &rng))
        }
        return MediaPlaylist(
            targetDuration: td, mediaSequence: first, discontinuitySequence: UInt64.random(in: 0...5, using: &rng),
            mapURI: "init0.mp4", segments: segments,
            serverControl: ServerControl(canBlockReload: true, holdBack: .seconds(Int64(3 * td)),
                                         partHoldBack: .seconds(2), canSkipUntil: canSkipUntil),
            partTarget: MediaTime(value: 2 * ts, timescale: timescale), trailingParts: trailing,
            preloadHint: PreloadHint(type: .part, uri: "seg\(next).\(trailing.count).m4s"), renditionReports: reports)
    }

    /// The map in force at each listed segment.
    static func mapsInForce(_ p: MediaPlaylist) -> [String?] {
        var current = p.mapURI
        return p.segments.map { s in
            if let m = s.mapURI { current = m }
            return current
        }
    }

    /// The date of each listed segment in µs, extrapolated forward from the last stated date (nil before any).
    static func dates(_ p: MediaPlaylist) -> [Int64?] {
        var current: Int64?
        return p.segments.map { s in
            if let d = s.programDateTime { current = d.millisecondsSince1970 * 1000 }
            defer { if current != nil { current! += s.duration.value } }
            return current
        }
    }

    @Test func skipArithmetic() throws {
        var rng = SplitMix64(seed: 0xDE17A)
        var sawSkip = 0, sawNoSkip = 0, sawMapCarried = 0, sawDateExtrapolated = 0, sawEdge = 0
        for _ in 0..<500 {
            let original = Self.randomWindow(&rng)
            let fullText = original.render()
            // The full playlist as a client reads it: durations in whole µs (timescale 1 000 000).
            let full = try MediaPlaylist.parse(fullText)
            #expect(full.renderedVersion == 7 && !fullText.contains("EXT-X-SKIP"))
            let delta = try #require(original.deltaUpdate())
            #expect(try #require(full.deltaUpdate()).render() == delta.render(), "model and parsed text disagree")
            let skipped = Int(try #require(delta.skippedSegments))
            let remaining = delta.segments.count

            // skipped + remaining == full
            #expect(skipped + remaining == full.segments.count)
            // The remaining segments are the full playlist's tail: uri, duration, sequence (and parts, discontinuity).
            #expect(zip(delta.segments, original.segments.suffix(remaining)).allSatisfy { d, f in
                d.uri == f.uri && d.duration == f.duration && d.sequence == f.sequence && d.parts == f.parts
                    && d.discontinuity == f.discontinuity
            })
            #expect(delta.trailingParts == original.trailingParts && delta.preloadHint == original.preloadHint)
            #expect(delta.renditionReports == original.renditionReports)
            #expect(delta.mediaSequence == full.mediaSequence && delta.discontinuitySequence == full.discontinuitySequence)

            // The boundary rule, in the µs the full text states: skipped iff end-of-last − end-of-segment > boundary.
            let micros = full.segments.map(\.duration.value)
            let boundary = try #require(full.serverControl?.canSkipUntil).value
            var end: Int64 = 0
            let total = micros.reduce(0, +)
            for (i, d) in micros.enumerated() {
                end += d
                if i < skipped && total - end <= boundary {
                    Issue.record("segment \(i) skipped but within the boundary:\n\(fullText)")
                } else if i >= skipped && total - end > boundary {
                    Issue.record("segment \(i) kept but entirely before the boundary:\n\(fullText)")
                }
                if total - end == boundary { sawEdge += 1 }
            }

            // Parts of skipped segments are gone; the skip tag appears once; version 9 exactly.
            let deltaText = delta.render()
            #expect(!original.segments.prefix(skipped).contains { s in
                deltaText.contains("\"" + s.uri.dropLast(4) + ".") || deltaText.contains("\n" + s.uri + "\n")
            })
            #expect(deltaText.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-SKIP:") }.count == 1)
            #expect(deltaText.hasPrefix("#EXTM3U\n#EXT-X-VERSION:9\n"))

            // parse(render(delta)) gives back the full playlist's sequence numbers.
            let back = try MediaPlaylist.parse(deltaText)
            #expect(back.skippedSegments == UInt64(skipped))
            #expect(back.segments.map(\.sequence) == full.segments.suffix(remaining).map(\.sequence))
            #expect(back.segments.map(\.uri) == full.segments.suffix(remaining).map(\.uri))
            #expect(back.render() == deltaText)

            // The same map is in force at every remaining segment, and dates map the same way (±0.5 ms).
            #expect(Self.mapsInForce(back) == Array(Self.mapsInForce(full).suffix(remaining)))
            #expect(zip(Self.dates(back), Self.dates(full).suffix(remaining)).allSatisfy { b, f in
                switch (b, f) {
                case (nil, nil): true
                case let (b?, f?): abs(b - f) <= 500
                default: false
                }
            })

            // Exact round trip of the delta of the parsed (µs-exact) playlist; applying it again skips nothing more.
            let exact = try #require(full.deltaUpdate())
            #expect(try MediaPlaylist.parse(exact.render()) == exact)
            #expect(exact.deltaUpdate() == exact)

            if skipped > 0 {
                sawSkip += 1
                if Self.mapsInForce(full)[skipped] != full.mapURI && full.segments[skipped].mapURI == nil { sawMapCarried += 1 }
                if full.segments[skipped].programDateTime == nil && back.segments[0].programDateTime != nil {
                    sawDateExtrapolated += 1
                }
            } else {
                sawNoSkip += 1
            }
        }
        #expect(sawSkip > 150 && sawNoSkip > 25 && sawMapCarried > 10 && sawDateExtrapolated > 10 && sawEdge > 10,
                "coverage: skip \(sawSkip), none \(sawNoSkip), map \(sawMapCarried), date \(sawDateExtrapolated), edge \(sawEdge)")
    }
}
