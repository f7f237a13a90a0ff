import CryptoPrimitives
import ISOBMFF
import MediaCore

/// The AES of common encryption on one sample (ISO/IEC 23001-7 §9, §10), through libcrypto (`CryptoPrimitives.AES`,
/// CTR, and CBC without padding): the protected bytes of a sample are gathered into one buffer, transformed in place
/// in one call, and put back.
///
/// - `cenc` (§10.1): AES-128-CTR. The protected bytes of all subsamples of a sample are one keystream, in order,
///   whose first counter block is the sample's IV (8 bytes: followed by a 64-bit block counter from 0).
/// - `cbcs` (§10.4): AES-128-CBC from the constant IV, restarted at each subsample (each protected range is its own
///   chain); in a range, of each `crypt + skip` blocks the first `crypt` are encrypted (a 0:0 pattern: every whole
///   block), and the trailing partial block stays clear.
public struct SampleCipher: Sendable {
    public let scheme: ProtectionScheme
    private let key: [UInt8]

    public init(scheme: ProtectionScheme, key: [UInt8]) {
        precondition(key.count == 16, "an AES-128 key is 16 bytes")
        self.scheme = scheme
        self.key = key
    }

    /// Encrypts `sample` in place. `iv`: the sample's IV (`cenc`) or the constant IV (`cbcs`); `subsamples` empty:
    /// the whole sample is protected.
    public func encrypt(_ sample: inout [UInt8], iv: [UInt8], subsamples: [SubsampleEntry],
                        crypt: Int = 0, skip: Int = 0) throws {
        try transform(&sample, sample.indices, iv: iv, subsamples: subsamples, crypt: crypt, skip: skip, decrypt: false)
    }

    /// Encrypts the sample at `range` of `buffer` in place (a fragment's own buffer: media bytes are written once).
    public func encrypt(in buffer: inout [UInt8], sample range: Range<Int>, iv: [UInt8], subsamples: [SubsampleEntry],
                        crypt: Int = 0, skip: Int = 0) throws {
        try transform(&buffer, range, iv: iv, subsamples: subsamples, crypt: crypt, skip: skip, decrypt: false)
    }

    /// Decrypts `sample` in place (tests, and checking what was served).
    public func decrypt(_ sample: inout [UInt8], iv: [UInt8], subsamples: [SubsampleEntry],
                        crypt: Int = 0, skip: Int = 0) throws {
        try transform(&sample, sample.indices, iv: iv, subsamples: subsamples, crypt: crypt, skip: skip, decrypt: true)
    }

    /// The protected ranges of the sample at `sample`.
    static func protectedRanges(_ sample: Range<Int>, subsamples: [SubsampleEntry]) -> [Range<Int>] {
        guard !subsamples.isEmpty else { return [sample] }
        var out: [Range<Int>] = []
        var at = sample.lowerBound
        for s in subsamples {
            at += Int(s.clearBytes)
            let end = min(sample.upperBound, at + Int(s.protectedBytes))
            if end > at { out.append(at..<end) }
            at = max(at, end)
        }
        return out
    }

    private func transform(_ sample: inout [UInt8], _ range: Range<Int>, iv: [UInt8], subsamples: [SubsampleEntry],
                           crypt: Int, skip: Int, decrypt: Bool) throws {
        let ranges = Self.protectedRanges(range, subsamples: subsamples)
        switch scheme {
        case .cenc:
            // One keystream over every protected byte of the sample.
            var gathered: [UInt8] = []
            gathered.reserveCapacity(ranges.reduce(0) { $0 + $1.count })
            for r in ranges { gathered.append(contentsOf: sample[r]) }
            guard !gathered.isEmpty else { return }
            let counter = iv.count == 16 ? iv : iv + [UInt8](repeating: 0, count: 16 - iv.count)
            try AES.transform(&gathered, mode: .ctr, key: key, iv: counter)
            scatter(gathered, into: &sample, ranges)
        case .cbcs:
            for r in ranges {
                // The encrypted blocks of the range, chained as one CBC stream from the constant IV.
                let starts = Self.patternBlockStarts(r, crypt: crypt, skip: skip)
                guard !starts.isEmpty else { continue }
                var gathered = [UInt8](repeating: 0, count: starts.count * 16)
                sample.withUnsafeBytes { src in
                    gathered.withUnsafeMutableBytes { dst in
                        for (i, start) in starts.enumerated() {
                            dst.baseAddress!.advanced(by: i * 16).copyMemory(from: src.baseAddress!.advanced(by: start), byteCount: 16)
                        }
                    }
                }
                try AES.transform(&gathered, mode: .cbc, key: key, iv: iv, decrypt: decrypt)
                gathered.withUnsafeBytes { src in
                    sample.withUnsafeMutableBytes { dst in
                        for (i, start) in starts.enumerated() {
                            dst.baseAddress!.advanced(by: start).copyMemory(from: src.baseAddress!.advanced(by: i * 16), byteCount: 16)
                        }
                    }
                }
            }
        }
    }

    /// Where the 16-byte blocks of `range` that the pattern encrypts start: the first `crypt` of every `crypt + skip`
    /// (0:0: all whole blocks).
    static func patternBlockStarts(_ range: Range<Int>, crypt: Int, skip: Int) -> [Int] {
        let whole = range.count / 16
        let period = crypt + skip
        guard period > 0 else { return (0..<whole).map { range.lowerBound + 16 * $0 } }
        var out: [Int] = []
        out.reserveCapacity((whole + period - 1) / period * crypt)
        for first in stride(from: 0, to: whole, by: period) {
            for b in first..<min(first + crypt, whole) { out.append(range.lowerBound + 16 * b) }
        }
        return out
    }

    private func scatter(_ bytes: [UInt8], into sample: inout [UInt8], _ ranges: [Range<Int>]) {
        bytes.withUnsafeBytes { src in
            sample.withUnsafeMutableBytes { dst in
                var at = 0
                for r in ranges {
                    dst.baseAddress!.advanced(by: r.lowerBound).copyMemory(from: src.baseAddress!.advanced(by: at), byteCount: r.count)
                    at += r.count
                }
            }
        }
    }
}
