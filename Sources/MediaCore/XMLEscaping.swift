/// Text and attribute values in XML and HTML (the MPD, CPIX documents, the stream directory page): `&`, `<`, `>`
/// and, inside a quoted attribute, `"` as character references (XML 1.0 §2.4; `'` needs none in a double-quoted value).
public enum XMLEscaping {
    public static func escape(_ s: String, quote: Bool = true) -> String {
        guard s.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"") }) else {
            return s
        }
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quote: out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
