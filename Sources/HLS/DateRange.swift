import MediaCore

/// `EXT-X-DATERANGE` (RFC 8216bis §4.4.5.1): a range of time on the `EXT-X-PROGRAM-DATE-TIME` clock with attributes,
/// here an SCTE-35 break or signal.
///
/// ```
/// #EXT-X-DATERANGE:ID="splice-1",START-DATE="2026-11-26T21:30:10.000Z",DURATION=30,PLANNED-DURATION=30,SCTE35-OUT=0xFC30…
/// ```
/// §4.4.5.1: "If a Playlist contains an EXT-X-DATERANGE tag, it MUST also contain at least one
/// EXT-X-PROGRAM-DATE-TIME tag" (every segment here carries one); "If a Playlist contains two EXT-X-DATERANGE tags
/// with the same ID attribute value, then any AttributeName that appears in both tags MUST have the same
/// AttributeValue": a break is one tag per ID, which gains `DURATION` and `SCTE35-IN` once it ended.
public struct DateRange: Sendable, Equatable {
    /// `ID`: unique in the playlist, the same in every reload.
    public var id: String
    /// `CLASS` (a client-defined set of attributes, e.g. `com.apple.hls.interstitial`).
    public var rangeClass: String?
    public var startDate: WallClock
    /// `DURATION`, once known; truncated to microseconds as written.
    public var duration: MediaTime?
    /// `PLANNED-DURATION`: the expected length while the real one is not known.
    public var plannedDuration: MediaTime?
    /// `SCTE35-OUT`, `SCTE35-IN`, `SCTE35-CMD`: the splice_info_section, written as a hexadecimal-sequence.
    public var scte35Out: [UInt8]?
    public var scte35In: [UInt8]?
    public var scte35Cmd: [UInt8]?
    /// `END-ON-NEXT=YES` (requires `CLASS`, and no `DURATION` or `END-DATE`).
    public var endOnNext = false
    /// `X-` attributes, in order, as written (quoted strings, or numbers and hex sequences as they are).
    public var clientAttributes: [(name: String, value: ClientValue)] = []

    public enum ClientValue: Sendable, Equatable {
        case string(String)
        case decimal(MediaTime)
        /// A hexadecimal-sequence (`0x…`): a text a quoted-string cannot hold (a `"`, CR or LF; §4.2).
        case hex([UInt8])

        /// `text` as a quoted-string, or its UTF-8 bytes as a hexadecimal-sequence when it cannot be one.
        public static func text(_ text: String) -> ClientValue {
            text.utf8.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) ? .hex(Array(text.utf8)) : .string(text)
        }
    }

    public init(id: String, rangeClass: String? = nil, startDate: WallClock, duration: MediaTime? = nil,
                plannedDuration: MediaTime? = nil, scte35Out: [UInt8]? = nil, scte35In: [UInt8]? = nil,
                scte35Cmd: [UInt8]? = nil) {
        self.id = id
        self.rangeClass = rangeClass
        self.startDate = startDate
        self.duration = duration
        self.plannedDuration = plannedDuration
        self.scte35Out = scte35Out
        self.scte35In = scte35In
        self.scte35Cmd = scte35Cmd
    }

    public static func == (a: DateRange, b: DateRange) -> Bool {
        a.id == b.id && a.rangeClass == b.rangeClass && a.startDate == b.startDate && a.duration == b.duration
            && a.plannedDuration == b.plannedDuration && a.scte35Out == b.scte35Out && a.scte35In == b.scte35In
            && a.scte35Cmd == b.scte35Cmd && a.endOnNext == b.endOnNext
            && a.clientAttributes.map(\.name) == b.clientAttributes.map(\.name)
            && a.clientAttributes.map(\.value) == b.clientAttributes.map(\.value)
    }

    /// The tag's line (without the newline).
    public var line: String {
        var out = "#EXT-X-DATERANGE:ID=\"" + id + "\""
        if let rangeClass { out += ",CLASS=\"" + rangeClass + "\"" }
        out += ",START-DATE=\"" + HLSFormat.programDateTime(startDate) + "\""
        if let duration, !endOnNext { out += ",DURATION=" + HLSFormat.decimalSeconds(duration) }
        if let plannedDuration { out += ",PLANNED-DURATION=" + HLSFormat.decimalSeconds(plannedDuration) }
        for (name, value) in clientAttributes {
            switch value {
            case .string(let s): out += "," + name + "=\"" + s + "\""
            case .decimal(let t): out += "," + name + "=" + HLSFormat.decimalSeconds(t)
            case .hex(let b): out += "," + name + "=" + Self.hex(b)
            }
        }
        if let scte35Cmd { out += ",SCTE35-CMD=" + Self.hex(scte35Cmd) }
        if let scte35Out { out += ",SCTE35-OUT=" + Self.hex(scte35Out) }
        if let scte35In { out += ",SCTE35-IN=" + Self.hex(scte35In) }
        if endOnNext { out += ",END-ON-NEXT=YES" }
        return out
    }

    /// A hexadecimal-sequence (§4.2): `0x` and the bytes, upper case.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8](repeating: 0, count: 2 + bytes.count * 2)
        out[0] = UInt8(ascii: "0"); out[1] = UInt8(ascii: "x")
        for (i, b) in bytes.enumerated() {
            out[2 + 2 * i] = digits[Int(b >> 4)]
            out[3 + 2 * i] = digits[Int(b & 0xF)]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
