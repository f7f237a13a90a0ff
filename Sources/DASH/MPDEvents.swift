import MediaCore

extension MPD {
    /// `EventStream` (ISO/IEC 23009-1 §5.10.2): timed events of a Period, here SCTE-35 cues as SCTE 214-1 §6.7 carries
    /// them (`urn:scte:scte35:2014:xml+bin`: each `Event` holds a `Signal` whose `Binary` is the splice_info_section
    /// in base64).
    ///
    /// ```
    /// <EventStream schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="90000">
    ///   <Event presentationTime="2700000" duration="2700000" id="17">
    ///     <Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>/DAlAAAAAAAAAP/wFAUAAAABf+/+…</Binary></Signal>
    ///   </Event>
    /// </EventStream>
    /// ```
    public struct EventStream: Sendable, Equatable {
        public static let scte35XMLBinary = "urn:scte:scte35:2014:xml+bin"
        public var schemeIdUri: String
        /// Units of `presentationTime` and `duration`; presentation times are on the Period's timeline (the segments'
        /// `t` less `presentationTimeOffset`, which is 0 here).
        public var timescale: Int32
        public var events: [Event]

        public init(schemeIdUri: String = scte35XMLBinary, timescale: Int32, events: [Event]) {
            self.schemeIdUri = schemeIdUri
            self.timescale = timescale
            self.events = events
        }
    }

    public struct Event: Sendable, Equatable {
        public var id: UInt32
        public var presentationTime: Int64
        public var duration: Int64?
        /// The splice_info_section.
        public var binary: [UInt8]

        public init(id: UInt32, presentationTime: Int64, duration: Int64? = nil, binary: [UInt8]) {
            self.id = id
            self.presentationTime = presentationTime
            self.duration = duration
            self.binary = binary
        }

        /// A stable numeric `@id` (xs:unsignedInt) for a textual one: FNV-1a of its UTF-8 bytes.
        public static func numericID(_ text: String) -> UInt32 {
            var h: UInt32 = 0x811C_9DC5
            for b in text.utf8 { h = (h ^ UInt32(b)) &* 0x0100_0193 }
            return h
        }
    }
}

extension MPD.EventStream {
    func render(into x: inout XMLText) {
        x.open("EventStream", [("schemeIdUri", schemeIdUri), ("timescale", String(timescale))])
        for e in events {
            var a = [("presentationTime", String(e.presentationTime))]
            if let d = e.duration { a.append(("duration", String(d))) }
            a.append(("id", String(e.id)))
            x.open("Event", a)
            x.open("Signal", [("xmlns", "http://www.scte.org/schemas/35/2016")])
            x.open("Binary", [], inline: true)
            x.escaped(Base64.encode(e.binary))
            x.close("Binary")
            x.close("Signal")
            x.close("Event")
        }
        x.close("EventStream")
    }
}

/// RFC 4648 §4 base64 with padding.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var v = UInt32(bytes[i]) << 16
            if n > 1 { v |= UInt32(bytes[i + 1]) << 8 }
            if n > 2 { v |= UInt32(bytes[i + 2]) }
            for k in 0..<4 {
                out.append(k <= n ? alphabet[Int((v >> (18 - 6 * UInt32(k))) & 0x3F)] : UInt8(ascii: "="))
            }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
