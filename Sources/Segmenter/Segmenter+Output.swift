import ISOBMFF
import MediaCore

/// Turning decided cuts into output: the ready samples before a boundary become one `moof`+`mdat` part per
/// rendition, and a boundary that ends a segment closes it (`styp` + its parts).
extension Segmenter {
    mutating func writeParts(upTo end: MediaTime?) throws -> [Part] {
        var taken: [ArraySlice<Ready>] = []
        for t in states.indices {
            let ready = states[t].ready
            var n = ready.count
            if let end {
                let limit = end.converted(to: states[t].timescale, rounding: .up).value
                n = ready.firstIndex { $0.sample.dts >= limit } ?? ready.count
            }
            taken.append(ready[..<n])
        }
        guard taken.contains(where: { !$0.isEmpty }) else { return [] }

        var parts: [Part] = []
        for (g, members) in groups.enumerated() where members.contains(where: { !taken[$0].isEmpty }) {
            parts.append(try writePart(group: g, members: members, taken: taken))
        }
        if let last = taken[referenceTrack].last { referenceEnd = last.sample.dts + last.duration }
        for t in states.indices {
            if let last = taken[t].last { states[t].end = last.sample.dts + last.duration }
            if states[t].segmentFirstDTS == nil { states[t].segmentFirstDTS = taken[t].first?.sample.dts }
            for item in taken[t] {
                // What a reader computes from the fragment: tfdt + durations + the clamped composition offset.
                let pts = item.sample.dts + Int64(Int32(clamping: item.sample.pts - item.sample.dts))
                if pts < states[t].segmentEarliestPTS ?? .max { states[t].segmentEarliestPTS = pts }
            }
            states[t].segmentSampleCount += taken[t].count
            states[t].ready.removeFirst(taken[t].count)
        }
        return parts
    }

    /// One group's part: its tracks' samples taken before the cut, as one `moof`+`mdat` (the segment's first part
    /// opens with its `styp`). The part that opens with the segment's first video keyframe is two fragments: the
    /// keyframe alone (with a muxed rendition's other samples up to its end) and the rest, so the first is exactly
    /// the I-frame that I-frame playlists and DASH trick mode list (`KeyframeFragment`), with no other picture in it.
    private mutating func writePart(group g: Int, members: [Int], taken: [ArraySlice<Ready>]) throws -> Part {
        let r = groupReference[g]
        let ref = taken[r]
        let first = groupStates[g].parts.isEmpty
        var head = first ? MediaSegmentBoxes.styp() : []
        if first {
            // Event messages go before the segment's first `moof` (ISO/IEC 23009-1 §5.10.3.3), in every group.
            for m in eventMessages where m.sequence == groupStates[g].nextSequence { head += m.box }
        }
        var bytes = MediaBytes(head)
        let opensKeyframe = groupStates[g].keyframe == nil && tracks[r].kind == .video && ref.first?.sample.isSync == true
        var pieces = [taken]
        if opensKeyframe, ref.count > 1, let k = ref.first {
            let end = MediaTime(value: k.sample.dts + k.duration, timescale: states[r].timescale)
            let head = taken.indices.map { t -> ArraySlice<Ready> in
                if t == r { return taken[t].prefix(1) }
                let limit = end.converted(to: states[t].timescale, rounding: .up).value
                return taken[t].prefix { $0.sample.dts < limit }
            }
            pieces = [head, taken.indices.map { taken[$0].dropFirst(head[$0].count) }]
        }
        var keyframeRange: Range<Int>?
        for (i, piece) in pieces.enumerated() where members.contains(where: { !piece[$0].isEmpty }) {
            let start = bytes.count
            try appendFragment(group: g, members: members, piece, to: &bytes)
            if i == 0 && opensKeyframe { keyframeRange = start..<bytes.count }
        }

        let duration = ref.reduce(Int64(0)) { $0 + $1.duration }
        let independent = ref.first?.sample.isSync ?? first
        if first {
            groupStates[g].startsWithSync = ref.first?.sample.isSync ?? false
            groupStates[g].keyframeSample = ref.first.flatMap { $0.sample.isSync ? $0.sample.data : nil }
        }
        let index = groupStates[g].parts.count
        let offset = groupStates[g].parts.last.map { $0.offset + $0.bytes.count } ?? 0
        groupStates[g].parts.append((bytes, offset, duration, independent))
        let timescale = states[r].timescale
        if let range = keyframeRange, let k = ref.first {
            // What an I-frame playlist lists: the keyframe's `moof` (after any `styp`) to its `mdat`'s end.
            groupStates[g].keyframe = KeyframeFragment(range: (offset + range.lowerBound)..<(offset + range.upperBound),
                                                       decodeTime: MediaTime(value: k.sample.dts, timescale: timescale))
        }
        return Part(group: g, segmentSequence: groupStates[g].nextSequence, index: index, bytes: bytes, offset: offset,
                    duration: MediaTime(value: duration, timescale: timescale), independent: independent)
    }

    /// One `moof`+`mdat` of the members' samples in `items`, appended to `bytes`: the header is built, the samples'
    /// own arrays follow it uncopied.
    private mutating func appendFragment(group g: Int, members: [Int], _ items: [ArraySlice<Ready>],
                                         to bytes: inout MediaBytes) throws {
        var trafs: [TrackFragment] = []
        var payload = 0
        for t in members where !items[t].isEmpty {
            trafs.append(TrackFragment(
                trackID: tracks[t].trackID,
                baseMediaDecodeTime: UInt64(items[t].first!.sample.dts),
                samples: items[t].map {
                    FragmentSample(duration: UInt32(clamping: $0.duration), size: UInt32($0.sample.data.count),
                                   isSync: $0.sample.isSync,
                                   compositionOffset: Int32(clamping: $0.sample.pts - $0.sample.dts))
                },
                isVideo: tracks[t].kind == .video))
            payload += items[t].reduce(0) { $0 + $1.sample.data.count }
        }
        var sequenceNumber = groupStates[g].fragmentSequence
        groupStates[g].fragmentSequence &+= 1
        if anchor.isEpoch,
           let t = items[groupReference[g]].isEmpty ? members.first(where: { !items[$0].isEmpty }) : groupReference[g] {
            // Epoch-locked, the `mfhd` sequence number cannot count fragments since this process started (a
            // redundant origin started elsewhere would differ): it is the fragment's start on the input clock in
            // milliseconds, modulo 2^32, which increases from one fragment to the next (they are at least a
            // frame apart) and wraps every 49.7 days.
            let ms = MediaTime.rescale(items[t].first!.sample.dts, from: states[t].timescale, to: 1000, rounding: .down)
            sequenceNumber = max(1, UInt32(truncatingIfNeeded: ms))
        }
        let header = try MediaSegmentBoxes.fragmentHeader(sequenceNumber: sequenceNumber, tracks: trafs)
        let before = bytes.count
        bytes.append(header)
        for t in members { for item in items[t] { bytes.append(item.sample.data) } }
        assert(bytes.count == before + header.count + payload)
    }

    /// An event message (`emsg`) in the next segment that starts, in every group: the segment in progress when no
    /// group has written a part of it yet, else the one after it.
    public mutating func addEventMessage(_ message: EventMessage) throws {
        let started = groupStates.contains { !$0.parts.isEmpty }
        let sequence = (groupStates.map(\.nextSequence).max() ?? 0) + (started ? 1 : 0)
        eventMessages.append((sequence, try message.bytes()))
    }

    mutating func closeSegment(nextWallClock: WallClock?) throws -> [SegmenterEvent] {
        defer {
            let written = groupStates.map(\.nextSequence).min() ?? 0
            if !eventMessages.isEmpty { eventMessages.removeAll { $0.sequence < written } }
            segmentWallClock = nextWallClock
            for t in states.indices {
                states[t].segmentSampleCount = 0
                states[t].segmentFirstDTS = nil
                states[t].segmentEarliestPTS = nil
            }
        }
        var out: [SegmenterEvent] = []
        for (g, members) in groups.enumerated() where !groupStates[g].parts.isEmpty {
            let parts = groupStates[g].parts
            groupStates[g].parts = []
            // The segment is its parts in turn (the first opens with `styp`): their chunks, shared, not copied.
            var bytes = MediaBytes()
            for p in parts { bytes.append(contentsOf: p.bytes) }
            let ranges = parts.map { $0.offset..<($0.offset + $0.bytes.count) }
            let ref = groupReference[g]
            let videoTracks = members.filter { tracks[$0].kind == .video }
            var segment = Segment(
                group: g,
                sequence: groupStates[g].nextSequence,
                bytes: bytes,
                partRanges: ranges,
                startTime: MediaTime(value: states[ref].segmentFirstDTS ?? segmentStart ?? 0, timescale: states[ref].timescale),
                duration: MediaTime(value: parts.reduce(0) { $0 + $1.duration }, timescale: states[ref].timescale),
                programDateTime: segmentWallClock,
                trackSampleCounts: states.indices.map { members.contains($0) ? states[$0].segmentSampleCount : 0 },
                trackStartTimes: states.indices.map { members.contains($0) ? states[$0].segmentFirstDTS ?? -1 : -1 },
                startsWithSyncSample: groupStates[g].startsWithSync,
                earliestPresentationTime: MediaTime(value: states[ref].segmentEarliestPTS ?? states[ref].segmentFirstDTS ?? segmentStart ?? 0,
                                                    timescale: states[ref].timescale))
            segment.discontinuity = groupStates[g].discontinuity
            segment.keyframe = groupStates[g].keyframe
            groupStates[g].keyframe = nil
            segment.keyframeSample = groupStates[g].keyframeSample
            groupStates[g].keyframeSample = nil
            segment.videoSampleCount = videoTracks.isEmpty ? nil : videoTracks.reduce(0) { $0 + states[$1].segmentSampleCount }
            groupStates[g].discontinuity = false
            groupStates[g].nextSequence += 1
            out.append(.segment(segment))
        }
        return out
    }
}
