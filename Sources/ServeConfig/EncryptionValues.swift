import ArgumentParser

/// `--encrypt` / `encrypt`: how segments are protected. Only `aes-128` for now (whole-segment AES-128-CBC, RFC 8216
/// §5.2); `cbcs` and `cenc` (ISO/IEC 23001-7) are further cases (docs/encryption.md).
public enum EncryptionScheme: OptionValue, CaseIterable, Hashable {
    case aes128

    public init(parsing text: String) throws(OptionError) {
        switch text.lowercased() {
        case "aes-128", "aes128": self = .aes128
        default: throw OptionError(" is aes-128 (cbcs and cenc are not supported yet; got '\(text.prefix(32))')")
        }
    }

    public var description: String {
        switch self {
        case .aes128: "aes-128"
        }
    }
}

/// `--key` / `key`: a 16-byte AES-128 key as 32 hexadecimal digits (`0x` allowed). Its text never appears anywhere
/// once read: not in an error (which says only what is wrong with it), not in `description`, not when the options
/// are encoded (the control API's view of a stream).
public struct ContentKeyText: OptionValue, Hashable {
    public let bytes: [UInt8]

    public init(parsing text: String) throws(OptionError) {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        guard digits.utf8.allSatisfy({ UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 || UInt8(ascii: "a")...UInt8(ascii: "f") ~= $0 | 0x20 }) else {
            throw OptionError(" takes 32 hexadecimal digits (16 bytes); the value given has other characters")
        }
        guard digits.utf8.count == 32 else {
            throw OptionError(" takes 32 hexadecimal digits (16 bytes); the value given has \(digits.utf8.count)")
        }
        var out: [UInt8] = []
        var i = digits.startIndex
        while i < digits.endIndex {
            let next = digits.index(i, offsetBy: 2)
            out.append(UInt8(digits[i..<next], radix: 16)!)
            i = next
        }
        bytes = out
    }

    /// Never the key.
    public var description: String { "(secret)" }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
