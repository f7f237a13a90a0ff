import TestSupport
import Testing
import MediaCore
@testable import ISOBMFF

/// Writer output checked by the independent reader in BoxReader.swift.
@Suite("Fragments, read back independently")
struct FragmentTests {
    struct TrackInput {
        var fragment: TrackFragment
        var payloads: [[UInt8]]
    }

    /// styp + moof + mdat header + payloads, the way the segmenter assembles a segment.
    static func segment(sequenceNumber: UInt32, _ tracks: [TrackInput]) throws -> [UInt8] {
        var seg = MediaSegmentBoxes.styp()
        seg += try MediaSegmentBoxes.fragmentHeader(sequenceNumber: sequenceNumber, tracks: tracks.map(\.fragment))
        for t in tracks { for p in t.payloads { seg += p } }
        return seg
    }

    static func expectedFlags(_ s: FragmentSample, isVideo: Bool) -> UInt32 {
        (isVideo && !s.isSync) ? 0x0101_0000 : 0x0200_0000
    }

    /// Everything that went in comes back out: tfdt, sample count/durations/sizes/flags/cts and payload bytes.
    static func checkRoundTrip(_ tracks: [TrackInput], sequenceNumber: UInt32) throws {
        let seg = try segment(sequenceNumber: sequenceNumber, tracks)
        let read = try FragmentReader.read(seg)
        #expect(read.topLevel.map(\.type) == ["styp", "moof", "mdat"])
        #expect(read.sequenceNumber == sequenceNumber)
        try #require(read.tracks.count == tracks.count)
        for (got, want) in zip(read.tracks, tracks) {
            #expect(got.trackID == want.fragment.trackID)
            #expect(got.baseMediaDecodeTime == want.fragment.baseMediaDecodeTime)
            #expect(got.trunVersion == 1)
            let expected = want.fragment.samples.map {
                ReadSample(duration: $0.duration, size: $0.size, flags: expectedFlags($0, isVideo: want.fragment.isVideo),
                           cts: $0.compositionOffset)
            }
            #expect(got.samples == expected)
            for (r, p) in zip(got.sampleRanges, want.payloads) {
                #expect(Array(seg[r]) == p)
            }
        }
    }

    @Test func twoTracksRoundTrip() throws {
        let v = TrackInput(fragment: TrackFragment(trackID: 1, baseMediaDecodeTime: 90_000, samples: [
            FragmentSample(duration: 3000, size: 5, isSync: true, compositionOffset: 6000),
            FragmentSample(duration: 3000, size: 3, isSync: false, compositionOffset: -3000),
            FragmentSample(duration: 3000, size: 4, isSync: false, compositionOffset: 0),
        ], isVideo: true), payloads: [[1, 2, 3, 4, 5], [6, 7, 8], [9, 10, 11, 12]])
        let a = TrackInput(fragment: TrackFragment(trackID: 2, baseMediaDecodeTime: 48_000, samples: [
            FragmentSample(duration: 1024, size: 2, isSync: true),
            FragmentSample(duration: 1024, size: 1, isSync: true),
        ], isVideo: false), payloads: [[0xA1, 0xA2], [0xA3]])
        try Self.checkRoundTrip([v, a], sequenceNumber: 42)
        try Self.checkRoundTrip([a, v], sequenceNumber: 43)   // audio first works as well
    }

    @Test func emptyTrackFragment() throws {
        let v = TrackInput(fragment: TrackFragment(trackID: 1, baseMediaDecodeTime: 0, samples: [], isVideo: true), payloads: [])
        let a = TrackInput(fragment: TrackFragment(trackID: 2, baseMediaDecodeTime: 7, samples: [
            FragmentSample(duration: 1024, size: 3, isSync: true)], isVideo: false), payloads: [[1, 2, 3]])
        try Self.checkRoundTrip([v, a], sequenceNumber: 1)
    }

    /// Property: random sample lists for 1-2 tracks survive write -> independent parse (seeded SplitMix64).
    @Test func randomFragmentsRoundTrip() throws {
        var rng = SplitMix64(seed: 0xC0FFEE)
        for _ in 0..<200 {
            let trackCount = Int.random(in: 1...2, using: &rng)
            let videoFirst = Bool.random(using: &rng)
            var tracks: [TrackInput] = []
            for i in 0..<trackCount {
                let isVideo = (i == 0) == videoFirst
                var samples: [FragmentSample] = []
                var payloads: [[UInt8]] = []
                for _ in 0..<Int.random(in: 0...90, using: &rng) {
                    let size = Int.random(in: 0...3000, using: &rng)
                    samples.append(FragmentSample(
                        duration: UInt32.random(in: 0...UInt32.max, using: &rng) >> UInt32.random(in: 0...31, using: &rng),
                        size: UInt32(size),
                        isSync: isVideo ? Bool.random(using: &rng) : true,
                        compositionOffset: isVideo ? Int32.random(in: Int32.min...Int32.max, using: &rng)
                            >> Int32.random(in: 0...31, using: &rng) : 0))
                    let fill = UInt8.random(in: 0...255, using: &rng)
                    payloads.append((0..<size).map { UInt8(truncatingIfNeeded: $0) &+ fill })
                }
                let bmdt = UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng)
                tracks.append(TrackInput(fragment: TrackFragment(trackID: UInt32(i + 1) * (videoFirst ? 1 : 3),
                                                                 baseMediaDecodeTime: bmdt,
                                                                 samples: samples, isVideo: isVideo),
                                         payloads: payloads))
            }
            try Self.checkRoundTrip(tracks, sequenceNumber: UInt32.random(in: 0...UInt32.max, using: &rng))
        }
    }

    /// Property: consecutive fragments chain, tfdt[n+1] == tfdt[n] + sum(duration[n]).
    @Test func consecutiveFragmentsChainDecodeTimes() throws {
        var rng = SplitMix64(seed: 7)
        var dts: UInt64 = 0
        var previous: (UInt64, UInt64)?
        for n in 0..<20 {
            let durations = (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt32.random(in: 1...6000, using: &rng) }
            let frag = TrackFragment(trackID: 1, baseMediaDecodeTime: dts,
                                     samples: durations.map { FragmentSample(duration: $0, size: 1, isSync: true) }, isVideo: false)
            let seg = try Self.segment(sequenceNumber: UInt32(n + 1), [TrackInput(fragment: frag, payloads: durations.map { _ in [0] })])
            let read = try FragmentReader.read(seg)
            let t = read.tracks[0]
            if let (prevTfdt, prevSum) = previous { #expect(t.baseMediaDecodeTime == prevTfdt + prevSum) }
            let sum = t.samples.reduce(UInt64(0)) { $0 + UInt64($1.duration) }
            previous = (t.baseMediaDecodeTime, sum)
            dts += UInt64(durations.reduce(0) { $0 + UInt64($1) })
        }
    }

    @Test func negativeDecodeTimeThrows() throws {
        #expect(throws: MP4Error.negativeDecodeTime) {
            try TrackFragment(trackID: 1, decodeTime: -1, samples: [], isVideo: true)
        }
        #expect(try TrackFragment(trackID: 1, decodeTime: 5, samples: [], isVideo: true).baseMediaDecodeTime == 5)
    }

    /// The reader really rejects broken fragments (so the round trips above can fail).
    @Test func readerCatchesCorruption() throws {
        let v = TrackInput(fragment: TrackFragment(trackID: 1, baseMediaDecodeTime: 0, samples: [
            FragmentSample(duration: 1, size: 4, isSync: true)], isVideo: true), payloads: [[1, 2, 3, 4]])
        let good = try Self.segment(sequenceNumber: 1, [v])
        _ = try FragmentReader.read(good)
        var shortPayload = good; shortPayload.removeLast()
        #expect(throws: (any Error).self) { try FragmentReader.read(shortPayload) }
        var badOffset = good
        let dataOffsetAt = 28 + 8 + 16 + 8 + 16 + 20 + 16
        badOffset[dataOffsetAt + 3] &+= 1
        #expect(throws: (any Error).self) { try FragmentReader.read(badOffset) }
        var badSize = good
        badSize[28 + 3] &+= 1     // moof size
        #expect(throws: (any Error).self) { try FragmentReader.read(badSize) }
    }
}
