/// Bytes written as hexadecimal digits (keys, KIDs, system IDs, test vectors): one reader for all of them.
public enum HexBytes {
    /// The bytes of `text`: pairs of hexadecimal digits (either case), `-` ignored (a UUID's `8-4-4-4-12`); `nil` for
    /// an odd count or any other character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for c in text.utf8 where c != UInt8(ascii: "-") {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? out : nil
    }
}
