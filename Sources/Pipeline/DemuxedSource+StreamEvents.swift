import FFmpegBridge
import MediaCore
import Producer
import Segmenter

/// What a demuxed input's streams are read for (`StreamRoute`, decided once per demuxer), and the events its data and
/// subtitle streams carry: SCTE-35 sections, ID3 tags and subtitle cues on the input's timeline, loops included.
extension DemuxedSource {
    /// What a stream's packets are read for.
    enum StreamRoute {
        case ignored
        /// SCTE-35 sections (MPEG-TS stream type 0x86: libavformat's `scte_35`, one packet per section): timed events.
        case scte35(Rational)
        /// ID3 timed metadata (MPEG-TS stream type 0x15: libavformat's `timed_id3`, one tag a packet).
        case id3(Rational)
        /// Text subtitles: their place in `plan.subtitles`, and their decoder.
        case subtitles(Int, SubtitleDecoder)
        /// Audio or video: the indices of the processors (`setup.processors`) it feeds, and its time base.
        case media([Int], Rational)
    }

    /// A text subtitle packet's cues, on the input's timeline (loops included); a packet that cannot be decoded is
    /// one warning and skipped.
    func cues(_ packet: Packet, subtitle k: Int, decoder: SubtitleDecoder) -> SourceBatch? {
        var cues: [SubtitleCue]
        do {
            cues = try decoder.decode(packet)
        } catch {
            logger.warning("skipping a subtitle packet on stream \(packet.streamIndex): \(error)")
            return nil
        }
        guard !cues.isEmpty else { return nil }
        if loopOffsetMicros != 0 {
            let shift = MediaTime(value: MediaTime.rescale(loopOffsetMicros, from: 1_000_000, to: SubtitleDecoder.timescale,
                                                           rounding: .down), timescale: SubtitleDecoder.timescale)
            cues = cues.map { $0.shifted(by: shift) }
        }
        var batch = SourceBatch()
        batch.events = [.cues(subtitle: k, cues)]
        return batch
    }

    /// A posted event at the newest video frame read (plus its delay), its splice passed to the encoders: an encoded
    /// rendition puts an IDR on the first frame at or after it (the frames read but not yet encoded included).
    func resolve(_ event: TimedEvent) -> TimedEvent {
        guard case .liveEdge(let after) = event.time, let edge = videoEdge else { return event }
        var e = event
        e.time = .input(edge + after)
        if e.kind.isSplice, case .input(let t) = e.time {
            for slot in setup.processors { slot.processor.splice(at: t) }
        }
        return e
    }

    /// An SCTE-35 section as the timed event it signals (`nil`: one that signals nothing placed, or a malformed one,
    /// which is logged and skipped: the stream goes on).
    func cue(_ packet: Packet, timeBase tb: Rational) -> TimedEvent? {
        let section: SpliceInfoSection
        do {
            section = try SpliceInfoSection(packet.data)
        } catch {
            logger.warning("skipping an SCTE-35 section on stream \(packet.streamIndex): \(error)")
            return nil
        }
        let shift = MediaTime.rescale(loopOffsetMicros, from: 1_000_000, to: TimedEvent.ticks, rounding: .down)
        let packetTime = packet.pts.map { MediaTime(value: MediaTime.rescale($0, timeBase: tb, to: TimedEvent.ticks), timescale: TimedEvent.ticks) }
        guard var event = TimedEvent(section, packetTime: packetTime) else {
            logger.debug("SCTE-35 section on stream \(packet.streamIndex) signals nothing to place (\(section.command))")
            return nil
        }
        if case .input(var t) = event.time {
            // 33 bits of 90 kHz: the turn of the wrap nearest the packet (libavformat's timestamps run on past a wrap).
            if let p = packetTime { t = TimelineAnchor.nearestTurn(of: t, to: p) }
            event.time = .input(MediaTime(value: t.value + shift, timescale: t.timescale))
        }
        if case .input(let t) = event.time, event.kind.isSplice {
            // An encoded rendition puts an IDR on the splice's frame (the segmenter cuts there).
            for slot in setup.processors { slot.processor.splice(at: t) }
        }
        return event
    }

    /// An ID3 tag of a timed-metadata stream as a `.id3` event at its packet's time (`nil`: not a tag, or no time;
    /// logged and skipped, the stream goes on).
    func id3(_ packet: Packet, timeBase tb: Rational) -> TimedEvent? {
        guard let tag = TimedID3.tag(packet.data) else {
            logger.warning("skipping ID3 timed metadata on stream \(packet.streamIndex): not one whole ID3v2.3/2.4 tag (\(packet.data.count) bytes)")
            return nil
        }
        guard let pts = packet.pts ?? packet.dts else {
            logger.warning("skipping ID3 timed metadata on stream \(packet.streamIndex): its packet has no time")
            return nil
        }
        let shift = MediaTime.rescale(loopOffsetMicros, from: 1_000_000, to: TimedEvent.ticks, rounding: .down)
        let t = MediaTime.rescale(pts, timeBase: tb, to: TimedEvent.ticks) + shift
        // The time and the tag's own hash: two different tags at one time are two events (RFC 8216bis §4.4.5.1: one
        // DATERANGE ID, one set of attributes), the same tag again is the same one, on any origin.
        let id = "id3-\(t)-" + String(FNV1a.hash32(tag), radix: 16)
        return TimedEvent(id: id, kind: .id3, time: .input(MediaTime(value: t, timescale: TimedEvent.ticks)), section: tag)
    }
}
