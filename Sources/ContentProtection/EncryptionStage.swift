import MediaCore
import MediaPresentation
import Synchronization

/// The encryption stage: between a producer and its consumers (the live presentation, the VOD writer, the recorder,
/// the pusher), it encrypts every part and segment once, at publication, and passes the encrypted bytes on with the
/// facts their `EXT-X-KEY` needs (`SegmentInfo.encryption`, `PartInfo.encryption`). Every consumer then stores and
/// serves those bytes as it would clear ones: serving costs the same. Init segments pass through clear.
///
/// An encrypted segment is one CBC stream of its own, not its parts' bytes in turn: with LL-HLS each part and the
/// segment are encrypted separately (twice the AES work; a part that is the whole segment, as without LL-HLS, is
/// encrypted once and its bytes reused). So its `partRanges` (and the keyframe range an I-frame playlist lists, which
/// a CBC stream cannot serve as a byte range) are dropped; a part's `offset` still says where its clear bytes began.
public final class EncryptionStage: PresentationConsumer, Sendable {
    private let downstream: any PresentationConsumer
    public var holdBackMillis: Int64 { downstream.holdBackMillis }
    private let schedule: KeySchedule

    private struct State {
        var segmentsPerPeriod = UInt64(Int64.max)
        /// Per rendition: the ciphertext of a part that was its whole segment (reused for the segment).
        var wholePart: [Int: (sequence: UInt64, clearCount: Int, bytes: [UInt8])] = [:]
        /// The last key made (one HMAC per key period, not per object).
        var lastKey: ContentKey?
    }
    private let state = Mutex(State())

    public init(_ schedule: KeySchedule, downstream: any PresentationConsumer) {
        self.schedule = schedule
        self.downstream = downstream
    }

    public func consume(_ event: PresentationEvent) throws {
        switch event {
        case .layout(_, let policy):
            // Key periods in whole segments of the duration segments are cut at.
            let duration = policy.segmentDuration ?? .seconds(Int64(policy.targetDuration))
            let n = schedule.segmentsPerPeriod(segmentDuration: duration)
            state.withLock { $0.segmentsPerPeriod = n }
            try downstream.consume(event)
        case .end:
            schedule.finish()
            try downstream.consume(event)
        case .initSegment, .event:
            try downstream.consume(event)
        case .part(let r, var info, let bytes):
            let e = encryption(info.segmentSequence)
            let sealed = try SegmentCipher.encrypt(bytes, key: e.key.bytes, iv: e.iv)
            if info.index == 0 && info.endsSegment {
                state.withLock { $0.wholePart[r] = (info.segmentSequence, bytes.count, sealed) }
            }
            info.byteCount = sealed.count
            info.encryption = e
            try downstream.consume(.part(rendition: r, info, bytes: MediaBytes(sealed)))
        case .segment(let r, var info, let bytes):
            let e = encryption(info.sequence)
            let reused = state.withLock { s -> [UInt8]? in
                defer { s.wholePart[r] = nil }
                guard let w = s.wholePart[r], w.sequence == info.sequence, w.clearCount == bytes.count else { return nil }
                return w.bytes
            }
            let sealed = try reused ?? SegmentCipher.encrypt(bytes, key: e.key.bytes, iv: e.iv)
            info.byteCount = sealed.count
            info.partRanges = []
            info.keyframe = nil
            info.encryption = e
            info.nextEncryption = encryption(info.sequence &+ 1)
            try downstream.consume(.segment(rendition: r, info, bytes: MediaBytes(sealed)))
        }
    }

    /// Segment `sequence`'s key and IV (`KeySchedule`).
    private func encryption(_ sequence: UInt64) -> SegmentEncryption {
        state.withLock { s in
            let id = sequence / max(1, s.segmentsPerPeriod)
            let key = s.lastKey.flatMap { $0.id == id ? $0 : nil } ?? schedule.key(id)
            s.lastKey = key
            return SegmentEncryption(method: .aes128, key: key, iv: KeySchedule.iv(sequence))
        }
    }
}
