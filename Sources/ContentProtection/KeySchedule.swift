import CryptoPrimitives
import MediaCore
import MediaPresentation

/// Which key and IV encrypt each segment: pure functions of the stream's timeline (the media sequence number), so two
/// redundant origins given the same key (`--epoch-from-input`, same numbering) write the same bytes.
///
/// - IV: the segment's Media Sequence Number as a 128-bit big-endian integer, the value RFC 8216 §5.2 gives when no
///   IV is stated ("the Media Sequence Number is to be used as the IV when decrypting a Media Segment, by putting its
///   big-endian binary representation into a 16-octet (128-bit) buffer and padding (on the left) with zeros"),
///   stated anyway as `IV=0x…` (§4.3.2.4) so a delta update or a client's own numbering cannot get it wrong.
///   The parts of a segment use the segment's IV: `EXT-X-PART` has no IV attribute, and a Partial Segment is
///   listed under its parent segment's `EXT-X-KEY` (hls.js 1.6 decrypts each part as its own CBC stream from the
///   fragment's IV, and removes each part's padding).
/// - Key: one key, or with a period, a new key every `segmentsPerPeriod` segments (on segment boundaries by
///   construction): period `n = sequence / segmentsPerPeriod`. Without rotation key 0 is the master key itself;
///   with rotation period `n`'s key is the first 16 bytes of HMAC-SHA256(master, "hls-origin aes-128 key " ‖ n as
///   8 big-endian bytes), so every origin with the master key derives the same keys and none is stored.
///
/// With a key server (`--key-server`), period `n`'s key is the one the server gave for it (`PeriodKeySource`: fetched
/// ahead, the last one kept when the server is away); the IVs are the same.
public struct KeySchedule: Sendable {
    /// The 16-byte key given (`--key`) or made at start.
    private let master: [UInt8]
    /// The key server's keys, when they come from one.
    private let source: (any PeriodKeySource)?
    /// A new key every this much media (`--key-period`); `nil`: one key.
    public let period: MediaTime?

    public init(master: [UInt8], period: MediaTime? = nil) {
        precondition(master.count == 16, "an AES-128 key is 16 bytes")
        precondition(period.map { $0.value > 0 && $0.timescale > 0 } ?? true, "a key period is positive")
        self.master = master
        self.period = period
        source = nil
    }

    /// Keys from a key server: period `n`'s is `keys.key(period: n)`.
    public init(keys: any PeriodKeySource, period: MediaTime?) {
        precondition(period.map { $0.value > 0 && $0.timescale > 0 } ?? true, "a key period is positive")
        master = []
        source = keys
        self.period = period
    }

    /// The stream ended: a key server's fetcher may stop.
    public func finish() { source?.finish() }

    /// 16 bytes from the system's CSPRNG (`SystemRandomNumberGenerator`: getrandom(2) on Linux).
    public static func randomKey() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
    }

    /// How many segments share a key: the period over the stream's segment duration, to the nearest whole number,
    /// at least 1 (`Int64.max`: no rotation).
    public func segmentsPerPeriod(segmentDuration: MediaTime) -> UInt64 {
        guard let period, segmentDuration.value > 0, segmentDuration.timescale > 0 else { return UInt64(Int64.max) }
        // period / segment = (p.value / p.scale) / (s.value / s.scale), to the nearest whole number.
        let num = Int128(period.value) * Int128(segmentDuration.timescale)
        let den = Int128(segmentDuration.value) * Int128(period.timescale)
        return UInt64(max(1, min(Int128(Int64.max), (2 * num + den) / (2 * den))))
    }

    /// The key of period `id`.
    public func key(_ id: UInt64) -> ContentKey {
        if let source { return ContentKey(id: id, bytes: source.key(period: period == nil ? 0 : id).bytes) }
        guard period != nil else { return ContentKey(id: id, bytes: master) }
        var message = Array("hls-origin aes-128 key ".utf8)
        withUnsafeBytes(of: id.bigEndian) { message.append(contentsOf: $0) }
        return ContentKey(id: id, bytes: Array(SHA2.sha256.authenticationCode(for: message, key: master).prefix(16)))
    }

    /// The encryption of segment `sequence` (and of its parts).
    public func encryption(segment sequence: UInt64, segmentsPerPeriod: UInt64) -> SegmentEncryption {
        SegmentEncryption(method: .aes128, key: key(sequence / max(1, segmentsPerPeriod)), iv: Self.iv(sequence))
    }

    /// RFC 8216 §5.2's IV for a Media Sequence Number: big-endian, zero-padded on the left to 16 bytes.
    public static func iv(_ sequence: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 8)
        withUnsafeBytes(of: sequence.bigEndian) { out.append(contentsOf: $0) }
        return out
    }
}
