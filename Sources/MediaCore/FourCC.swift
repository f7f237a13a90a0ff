/// A four-character code: box types, brands, sample entry names.
public struct FourCC: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(_ string: String) {
        let bytes = Array(string.utf8)
        precondition(bytes.count == 4, "FourCC needs exactly four ASCII bytes: \(string)")
        rawValue = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String {
        String(decoding: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: rawValue >> $0) }, as: UTF8.self)
    }
}
