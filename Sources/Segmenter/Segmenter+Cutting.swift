import MediaCore

/// The cutting rules: where a segment ends (the first reference sync sample one segment duration past the start of its
/// grid cell, a video keyframe up to 5% early; on the input clock's grid when epoch-locked), where a part ends (one part
/// duration past the last cut), and when a decided cut is written (every track has reached it, or one stalls).
extension Segmenter {
    /// A reference sample may end the segment (a sync sample far enough in) or, with parts, the part in progress.
    mutating func decideBoundary(at sample: Sample, wallClock: WallClock?) {
        let segmentTicks = ticks(segmentDuration, track: referenceTrack)
        // A video keyframe up to 5% early still ends the segment: an encoder restart or a splice shifts the keyframe
        // grid by a frame or so, and waiting for the next keyframe would make a segment of two GOPs, longer than the
        // target duration announced for the life of the stream. (Audio, all sync samples, cuts on the grid.)
        let early = referenceIsVideo ? segmentTicks / 20 : 0
        guard let start = segmentStart else {
            segmentStart = sample.dts
            partStart = sample.dts
            gridStart = sample.dts
            segmentWallClock = wallClock
            if anchor.isEpoch && numberedFromGrid {
                let cell = UInt64(max(0, Self.cell(sample.dts, ticks: segmentTicks, early: early)))
                for g in groupStates.indices { groupStates[g].nextSequence = cell }
            }
            return
        }
        if anchor.isEpoch {
            // Cut on the input clock's grid, whatever came before: the first sync sample in a later cell.
            let cell = Self.cell(sample.dts, ticks: segmentTicks, early: early)
            if sample.isSync && cell > Self.cell(boundaries.last(where: \.endsSegment)?.time ?? start, ticks: segmentTicks, early: early) {
                boundaries.append(Boundary(time: sample.dts, endsSegment: true, wallClock: wallClock))
                let expected = Int64(groupStates[0].nextSequence) + Int64(boundaries.filter(\.endsSegment).count)
                if cell != expected { epochSlips += 1 }
                return
            }
            appendPartBoundary(at: sample, start: start)
            return
        }
        if let splice = spliceCuts.first, sample.isSync,
           sample.pts >= splice - ticks(Self.spliceTolerance, track: referenceTrack) {
            // A splice: the first sync sample at or after it starts a segment (and a part), in every group at once. The
            // grid goes on: the segments either side are shorter, never longer, so EXT-X-TARGETDURATION holds.
            let tolerance = ticks(Self.spliceTolerance, track: referenceTrack)
            spliceCuts.removeAll { $0 <= sample.pts + tolerance }
            spliceCutsMade.append((splice, sample.pts))
            if sample.dts > (boundaries.last(where: \.endsSegment)?.time ?? start) {
                boundaries.append(Boundary(time: sample.dts, endsSegment: true, wallClock: wallClock))
                if sample.dts - (gridStart ?? start) >= segmentTicks - early { gridStart = sample.dts }
                return
            }
        }
        if let fragmentDuration, !shortFirstSegmentDecided, sample.dts - start >= ticks(fragmentDuration, track: referenceTrack) {
            shortFirstSegmentDecided = true
            if sample.isSync && sample.dts - start < segmentTicks {
                boundaries.append(Boundary(time: sample.dts, endsSegment: true, wallClock: wallClock))
                return
            }
        }
        if sample.isSync && sample.dts - (gridStart ?? start) >= segmentTicks - early {
            boundaries.append(Boundary(time: sample.dts, endsSegment: true, wallClock: wallClock))
            gridStart = sample.dts
            return
        }
        appendPartBoundary(at: sample, start: start)
    }

    /// A sync sample this close before a splice point is at it (half a frame at 30 fps).
    static let spliceTolerance = MediaTime(value: 1, timescale: 60)

    /// A segment boundary at the first reference sync sample at or after `time` (output timeline), for a splice
    /// (SCTE-35): an encoder told of it puts an IDR there; a copied input cuts at its next keyframe. Ignored when
    /// epoch-locked (the numbering is the input clock's grid).
    public mutating func requestCut(at time: MediaTime) {
        guard !anchor.isEpoch else { return }
        let t = time.converted(to: states[referenceTrack].timescale, rounding: .up).value
        guard !spliceCuts.contains(t) else { return }
        spliceCuts.append(t)
        spliceCuts.sort()
    }

    /// The splice cuts made since the last call.
    public mutating func takeSpliceCuts() -> [(requested: Int64, at: Int64)] {
        defer { spliceCutsMade = [] }
        return spliceCutsMade
    }

    /// With parts: a reference sample one part duration past the last cut ends the part in progress.
    mutating func appendPartBoundary(at sample: Sample, start: Int64) {
        guard let fragmentDuration else { return }
        let lastPartStart = boundaries.last?.time ?? partStart ?? start
        if sample.dts - lastPartStart >= max(1, ticks(fragmentDuration, track: referenceTrack)) {
            boundaries.append(Boundary(time: sample.dts, endsSegment: false, wallClock: nil))
        }
    }

    func ticks(_ time: MediaTime, track t: Int) -> Int64 {
        time.converted(to: states[t].timescale, rounding: .up).value
    }

    /// Writes every part (and segment) whose end every track has reached.
    mutating func emitReady() throws -> [SegmenterEvent] {
        var out: [SegmenterEvent] = []
        while let b = boundaries.first {
            let cutTime = MediaTime(value: b.time, timescale: states[referenceTrack].timescale)
            let reached = states.indices.allSatisfy { t in
                if states[t].ended { return true }
                // A track that has not started yet does not hold the others back.
                guard let f = states[t].pending?.dts else { return t != referenceTrack }
                return MediaTime(value: f, timescale: states[t].timescale) >= cutTime
            }
            // A track that stalls (its input stopped) must not hold output back for more than a few cuts.
            guard reached || boundaries.count > Self.maxHeldCuts || boundaries.lazy.filter(\.endsSegment).count > 3 else { break }
            boundaries.removeFirst()
            out += try cut(b)
        }
        return out
    }

    /// Writes the ready samples before the boundary as one part per group; closes the segments when the boundary
    /// ends them.
    mutating func cut(_ b: Boundary) throws -> [SegmenterEvent] {
        var out: [SegmenterEvent] = []
        let end = b.time == Int64.max ? nil : MediaTime(value: b.time, timescale: states[referenceTrack].timescale)
        out += try writeParts(upTo: end).map { part in
            var part = part
            part.endsSegment = b.endsSegment
            return .part(part)
        }
        if b.endsSegment {
            out += try closeSegment(nextWallClock: b.wallClock)
        }
        partStart = b.time == Int64.max ? partStart : b.time
        if b.endsSegment && b.time != Int64.max { segmentStart = b.time }
        return out
    }
}
