/// SCTE 35 (2023) `splice_info_section()` (§9.6): the ad markers of a contribution feed, parsed and written here.
///
/// ```
/// |table_id 0xFC|section_syntax 0|private 0|sap_type 2|section_length 12|
/// |protocol_version 8|encrypted 1|algorithm 6|pts_adjustment 33|cw_index 8|tier 12|
/// |splice_command_length 12|splice_command_type 8|splice_command()|
/// |descriptor_loop_length 16|splice_descriptor()...|[alignment stuffing]|CRC_32|
/// ```
/// Only what an origin acts on is modelled: `splice_insert` (§9.7.3), `time_signal` (§9.7.4) and the
/// `segmentation_descriptor` (§10.3.3); other commands are `.other` and other descriptors are skipped. The section's
/// bytes are kept as they came (`bytes`): `SCTE35-OUT`, the DASH `Binary` and the log carry the original.
public struct SpliceInfoSection: Sendable, Equatable {
    public static let tableID: UInt8 = 0xFC
    /// `pts_adjustment`, 90 kHz ticks (33 bits), added to every `pts_time` of the section (§9.6.1).
    public var ptsAdjustment: Int64
    public var tier: UInt16
    public var command: SpliceCommand
    public var segmentations: [SegmentationDescriptor]
    /// The whole section, `table_id` to `CRC_32`.
    public var bytes: [UInt8]

    /// The splice time in 90 kHz ticks modulo 2^33, `pts_adjustment` applied; `nil` for an immediate splice or a
    /// command without a time.
    public var spliceTime: Int64? {
        let pts: Int64?
        switch command {
        case .insert(let i): pts = i.immediate ? nil : i.spliceTime
        case .timeSignal(let t): pts = t
        case .null, .other: pts = nil
        }
        return pts.map { ($0 + ptsAdjustment) & Self.ptsMask }
    }

    static let ptsMask: Int64 = (1 << 33) - 1

    /// Parses one section; throws `SCTE35Error` for anything malformed (a short section, a bad CRC, an encrypted one).
    public init(_ bytes: [UInt8]) throws {
        var r = BitReader(bytes)
        guard bytes.count >= 15 else { throw SCTE35Error.truncated }
        guard try r.bits(8) == UInt64(Self.tableID) else { throw SCTE35Error.notASpliceInfoSection }
        _ = try r.bits(4)  // section_syntax_indicator, private_indicator, sap_type
        let sectionLength = Int(try r.bits(12))
        guard sectionLength + 3 <= bytes.count else { throw SCTE35Error.truncated }
        let section = Array(bytes[..<(sectionLength + 3)])
        guard Self.crc32(section) == 0 else { throw SCTE35Error.badCRC }
        _ = try r.bits(8)  // protocol_version
        guard try r.bits(1) == 0 else { throw SCTE35Error.encrypted }
        _ = try r.bits(6)
        let ptsAdjustment = Int64(try r.bits(33))
        _ = try r.bits(8)  // cw_index
        let tier = UInt16(try r.bits(12))
        let commandLength = Int(try r.bits(12))
        let type = UInt8(try r.bits(8))
        let commandStart = r.byteOffset
        let command: SpliceCommand
        switch type {
        case 0x00: command = .null
        case 0x05: command = .insert(try SpliceInsert(&r))
        case 0x06: command = .timeSignal(try Self.spliceTime(&r))
        default: command = .other(type: type)
        }
        // splice_command_length 0xFFF: legacy "unknown"; then the command's own syntax says where it ends.
        if commandLength != 0xFFF {
            try r.seek(toByte: commandStart + commandLength)
        } else if case .other = command {
            throw SCTE35Error.malformed("splice_command_length unknown for command type \(type)")
        }
        try self.init(rest: &r, section: section, ptsAdjustment: ptsAdjustment, tier: tier, command: command)
    }

    private init(rest r: inout BitReader, section: [UInt8], ptsAdjustment: Int64, tier: UInt16, command: SpliceCommand) throws {
        self.ptsAdjustment = ptsAdjustment
        self.tier = tier
        self.command = command
        self.bytes = section
        segmentations = []
        let loopLength = Int(try r.bits(16))
        let end = r.byteOffset + loopLength
        guard end <= section.count - 4 else { throw SCTE35Error.truncated }
        while r.byteOffset + 2 <= end {
            let tag = UInt8(try r.bits(8))
            let length = Int(try r.bits(8))
            let start = r.byteOffset
            guard start + length <= end else { throw SCTE35Error.truncated }
            if tag == SegmentationDescriptor.tag, length >= 4 {
                let identifier = UInt32(try r.bits(32))
                if identifier == SegmentationDescriptor.cuei {
                    segmentations.append(try SegmentationDescriptor(&r, end: start + length))
                }
            }
            try r.seek(toByte: start + length)
        }
    }

    /// `splice_time()` (§9.8.1): the `pts_time` when `time_specified_flag` is set.
    static func spliceTime(_ r: inout BitReader) throws -> Int64? {
        if try r.bits(1) == 1 {
            _ = try r.bits(6)
            return Int64(try r.bits(33))
        }
        _ = try r.bits(7)
        return nil
    }

    /// CRC-32/MPEG-2 (polynomial 0x04C11DB7, initial 0xFFFFFFFF, no reflection, no final XOR): over a whole section
    /// with its `CRC_32` it is 0 (ISO/IEC 13818-1 Annex A).
    public static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc = (crc << 8) ^ crcTable[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ b)]
        }
        return crc
    }

    private static let crcTable: [UInt32] = (0..<256).map { i in
        var c = UInt32(i) << 24
        for _ in 0..<8 { c = c & 0x8000_0000 != 0 ? (c << 1) ^ 0x04C1_1DB7 : c << 1 }
        return c
    }
}

/// The splice command of a section (§9.7).
public enum SpliceCommand: Sendable, Equatable {
    case null
    case insert(SpliceInsert)
    /// `time_signal()`: the `pts_time` (without `pts_adjustment`), `nil` when not specified (immediate).
    case timeSignal(Int64?)
    case other(type: UInt8)
}

/// `splice_insert()` (§9.7.3), program splice mode (a component splice takes its first component's time).
public struct SpliceInsert: Sendable, Equatable {
    public var eventID: UInt32
    public var cancel: Bool
    /// `out_of_network_indicator`: leaving the network feed (a break starts); `false`: returning.
    public var outOfNetwork: Bool
    public var immediate: Bool
    /// `pts_time` of the splice (without `pts_adjustment`); `nil` when immediate or not specified.
    public var spliceTime: Int64?
    /// `break_duration()`: 90 kHz ticks, and `auto_return`.
    public var breakDuration: Int64?
    public var autoReturn: Bool
    public var uniqueProgramID: UInt16
    public var availNum: UInt8
    public var availsExpected: UInt8

    public init(eventID: UInt32, cancel: Bool = false, outOfNetwork: Bool, immediate: Bool = false, spliceTime: Int64?,
                breakDuration: Int64? = nil, autoReturn: Bool = true, uniqueProgramID: UInt16 = 1, availNum: UInt8 = 0,
                availsExpected: UInt8 = 0) {
        self.eventID = eventID
        self.cancel = cancel
        self.outOfNetwork = outOfNetwork
        self.immediate = immediate
        self.spliceTime = spliceTime
        self.breakDuration = breakDuration
        self.autoReturn = autoReturn
        self.uniqueProgramID = uniqueProgramID
        self.availNum = availNum
        self.availsExpected = availsExpected
    }

    init(_ r: inout BitReader) throws {
        eventID = UInt32(try r.bits(32))
        cancel = try r.bits(1) == 1
        _ = try r.bits(7)
        outOfNetwork = false
        immediate = false
        autoReturn = false
        uniqueProgramID = 0
        availNum = 0
        availsExpected = 0
        guard !cancel else { return }
        outOfNetwork = try r.bits(1) == 1
        let program = try r.bits(1) == 1
        let hasDuration = try r.bits(1) == 1
        immediate = try r.bits(1) == 1
        _ = try r.bits(4)  // event_id_compliance_flag, reserved
        if program {
            if !immediate { spliceTime = try SpliceInfoSection.spliceTime(&r) }
        } else {
            let count = Int(try r.bits(8))
            for i in 0..<count {
                _ = try r.bits(8)  // component_tag
                if !immediate {
                    let t = try SpliceInfoSection.spliceTime(&r)
                    if i == 0 { spliceTime = t }
                }
            }
        }
        if hasDuration {
            autoReturn = try r.bits(1) == 1
            _ = try r.bits(6)
            breakDuration = Int64(try r.bits(33))
        }
        uniqueProgramID = UInt16(try r.bits(16))
        availNum = UInt8(try r.bits(8))
        availsExpected = UInt8(try r.bits(8))
    }
}

/// `segmentation_descriptor()` (§10.3.3), with the `segmentation_type_id`s of Table 23.
public struct SegmentationDescriptor: Sendable, Equatable {
    static let tag: UInt8 = 0x02
    /// `identifier` "CUEI".
    static let cuei: UInt32 = 0x4355_4549
    public var eventID: UInt32
    public var cancel: Bool
    public var typeID: UInt8
    /// `segmentation_duration`, 90 kHz ticks (40 bits).
    public var duration: Int64?
    public var upidType: UInt8
    public var upid: [UInt8]
    public var segmentNum: UInt8
    public var segmentsExpected: UInt8

    public init(eventID: UInt32, cancel: Bool = false, typeID: UInt8, duration: Int64? = nil, upidType: UInt8 = 0,
                upid: [UInt8] = [], segmentNum: UInt8 = 0, segmentsExpected: UInt8 = 0) {
        self.eventID = eventID
        self.cancel = cancel
        self.typeID = typeID
        self.duration = duration
        self.upidType = upidType
        self.upid = upid
        self.segmentNum = segmentNum
        self.segmentsExpected = segmentsExpected
    }

    init(_ r: inout BitReader, end: Int) throws {
        eventID = UInt32(try r.bits(32))
        cancel = try r.bits(1) == 1
        _ = try r.bits(7)
        typeID = 0
        upidType = 0
        upid = []
        segmentNum = 0
        segmentsExpected = 0
        guard !cancel else { return }
        let program = try r.bits(1) == 1
        let hasDuration = try r.bits(1) == 1
        _ = try r.bits(6)  // delivery_not_restricted_flag and its restrictions
        if !program {
            let count = Int(try r.bits(8))
            for _ in 0..<count { _ = try r.bits(48) }  // component_tag, reserved, pts_offset
        }
        if hasDuration { duration = Int64(try r.bits(40)) }
        upidType = UInt8(try r.bits(8))
        let upidLength = Int(try r.bits(8))
        guard r.byteOffset + upidLength + 3 <= end else { throw SCTE35Error.truncated }
        upid = try (0..<upidLength).map { _ in UInt8(try r.bits(8)) }
        typeID = UInt8(try r.bits(8))
        segmentNum = UInt8(try r.bits(8))
        segmentsExpected = UInt8(try r.bits(8))
    }

    /// Table 23: the `segmentation_type_id`s that open a break an ad may fill (a placement opportunity or a break start).
    public var startsBreak: Bool { Self.breakStarts.contains(typeID) }
    /// Table 23: the ids that end one.
    public var endsBreak: Bool { Self.breakStarts.contains(typeID &- 1) }
    /// Provider/distributor advertisement, placement opportunity, ad break (0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x44, 0x46).
    static let breakStarts: Set<UInt8> = [0x22, 0x30, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x44, 0x46]
}

public enum SCTE35Error: Error, Equatable, CustomStringConvertible {
    case truncated
    case notASpliceInfoSection
    case badCRC
    case encrypted
    case malformed(String)

    public var description: String {
        switch self {
        case .truncated: "SCTE-35 section is shorter than its lengths say"
        case .notASpliceInfoSection: "not an SCTE-35 splice_info_section (table_id is not 0xFC)"
        case .badCRC: "SCTE-35 section fails its CRC_32"
        case .encrypted: "SCTE-35 section is encrypted"
        case .malformed(let why): "SCTE-35 section is malformed: \(why)"
        }
    }
}

/// Most significant bit first, as SCTE 35 and ISO/IEC 13818-1 lay out their fields.
struct BitReader {
    let bytes: [UInt8]
    private(set) var bit = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var byteOffset: Int { (bit + 7) / 8 }

    mutating func bits(_ n: Int) throws -> UInt64 {
        guard bit + n <= bytes.count * 8 else { throw SCTE35Error.truncated }
        var v: UInt64 = 0
        for _ in 0..<n {
            v = v << 1 | UInt64(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
            bit += 1
        }
        return v
    }

    mutating func seek(toByte offset: Int) throws {
        guard offset <= bytes.count else { throw SCTE35Error.truncated }
        bit = offset * 8
    }
}
