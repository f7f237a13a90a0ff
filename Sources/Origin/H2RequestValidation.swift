import NIOHPACK

/// The rules of RFC 9113 on a request's header block (and its trailers), checked once per block as it arrives, before
/// the fast path or the stream multiplexer sees it (`H2FrameFastPath`). swift-nio-http2's own check of every header
/// block, sent and received, is off (`OriginTLSChannel.http2Configuration`): on a small answer it cost about 11% of
/// the requests a second (alternating h2load rounds, docs/benchmarks.md), and the blocks we send are ours (status,
/// lower-case names from `HTTPFields`). These are the same rules it applies to what a client sends:
///
/// - §8.2.1: "A field name MUST NOT contain characters in the ranges 0x00-0x20, 0x41-0x5a, or 0x7f-0xff" and is a
///   `token` (RFC 9110 §5.1: one or more `tchar`); "A field value MUST NOT contain the zero value (ASCII NUL, 0x00),
///   line feed (ASCII LF, 0x0a), or carriage return (ASCII CR, 0x0d) at any position."
/// - §8.2.2: "An endpoint MUST NOT generate an HTTP/2 message containing connection-specific header fields"
///   (Connection, Proxy-Connection, Keep-Alive, Transfer-Encoding, Upgrade) and "The only exception to this is the TE
///   header field, which MAY be present in an HTTP/2 request; when it is, it MUST NOT contain any value other than
///   'trailers'."
/// - §8.3: "Endpoints MUST NOT generate pseudo-header fields other than those defined in this document", "All
///   pseudo-header fields MUST appear in a field block before all regular field lines", "The same pseudo-header field
///   name MUST NOT appear more than once in a field block", and "Pseudo-header fields MUST NOT appear in a trailer
///   section."
/// - §8.3.1: "All HTTP/2 requests MUST include exactly one valid value for the ':method', ':scheme', and ':path'
///   pseudo-header fields, unless they are CONNECT requests"; ":path … MUST NOT be empty"; §8.5: a CONNECT request has
///   ':method' and ':authority' only. RFC 8441's ':protocol' is not offered (no SETTINGS_ENABLE_CONNECT_PROTOCOL).
///
/// §8.1.1: a request that breaks one is malformed, "a stream error (Section 5.4.2) of type PROTOCOL_ERROR".
enum H2RequestValidation {
    /// What is wrong with `block` (a request's header block, or with `trailers` its trailer section), `nil` if nothing.
    static func problem(_ block: HPACKHeaders, trailers: Bool = false) -> String? {
        var seen: UInt8 = 0                 // the pseudo-header fields met, one bit each
        var regular = false                 // a regular field met: no pseudo-header field after it
        var connect = false
        for (name, value, _) in block {
            let bytes = name.utf8
            if bytes.first == UInt8(ascii: ":") {
                if trailers { return "pseudo-header field \(name) in a trailer section" }
                if regular { return "pseudo-header field \(name) after a regular field" }
                let bit: UInt8
                switch name {
                case ":method": bit = 1; connect = value == "CONNECT"
                case ":scheme": bit = 2
                case ":path": bit = 4; if value.isEmpty { return "empty :path" }
                case ":authority": bit = 8
                default: return "pseudo-header field \(name) is not a request's"
                }
                if seen & bit != 0 { return "pseudo-header field \(name) twice" }
                seen |= bit
                if !isValidValue(value) { return "\(name) has a NUL, CR or LF" }
                continue
            }
            regular = true
            guard !bytes.isEmpty, bytes.allSatisfy(isTokenCharNotUpper) else { return "field name \(name.debugDescription) is not a lower-case token" }
            switch name {
            case "connection", "transfer-encoding", "proxy-connection", "keep-alive", "upgrade":
                return "connection-specific field \(name)"
            case "te" where value != "trailers" && !trailers:
                return "te other than 'trailers'"
            default:
                break
            }
            if !isValidValue(value) { return "field \(name) has a NUL, CR or LF" }
        }
        if trailers { return nil }
        if connect { return seen == 1 | 8 ? nil : "a CONNECT request has :method and :authority only" }
        return seen & 7 == 7 ? nil : "a request needs :method, :scheme and :path"
    }

    /// `tchar` (RFC 9110 §5.6.2) without the upper-case letters.
    @inline(__always)
    private static func isTokenCharNotUpper(_ c: UInt8) -> Bool {
        switch c {
        case 0x21, 0x23...0x27, 0x2a, 0x2b, 0x2d, 0x2e, 0x30...0x39, 0x5e...0x7a, 0x7c, 0x7e: return true
        default: return false
        }
    }

    @inline(__always)
    private static func isValidValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0 || $0 == 0x0a || $0 == 0x0d }
    }
}
