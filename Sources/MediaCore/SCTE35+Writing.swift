extension SpliceInfoSection {
    /// A section of `command` and `segmentations` (program splice mode, `pts_adjustment` 0, tier 0xFFF,
    /// `sap_type` 3), with its CRC: what the events API sends on as the cue's `SCTE35-*` and DASH `Binary`.
    public init(command: SpliceCommand, segmentations: [SegmentationDescriptor] = []) {
        var c = BitWriter()
        let type: UInt8
        switch command {
        case .null, .other: type = 0
        case .insert(let i):
            type = 0x05
            c.put(UInt64(i.eventID), 32)
            c.put(i.cancel ? 1 : 0, 1)
            c.put(0x7F, 7)
            if !i.cancel {
                c.put(i.outOfNetwork ? 1 : 0, 1)
                c.put(1, 1)  // program_splice_flag
                c.put(i.breakDuration != nil ? 1 : 0, 1)
                c.put(i.immediate ? 1 : 0, 1)
                c.put(1, 1)  // event_id_compliance_flag
                c.put(0x7, 3)
                if !i.immediate { Self.putSpliceTime(i.spliceTime, &c) }
                if let d = i.breakDuration {
                    c.put(i.autoReturn ? 1 : 0, 1)
                    c.put(0x3F, 6)
                    c.put(UInt64(d) & UInt64(Self.ptsMask), 33)
                }
                c.put(UInt64(i.uniqueProgramID), 16)
                c.put(UInt64(i.availNum), 8)
                c.put(UInt64(i.availsExpected), 8)
            }
        case .timeSignal(let t):
            type = 0x06
            Self.putSpliceTime(t, &c)
        }
        var d = BitWriter()
        for s in segmentations {
            var body = BitWriter()
            body.put(UInt64(SegmentationDescriptor.cuei), 32)
            body.put(UInt64(s.eventID), 32)
            body.put(s.cancel ? 1 : 0, 1)
            body.put(1, 1)  // segmentation_event_id_compliance_indicator
            body.put(0x3F, 6)
            if !s.cancel {
                body.put(1, 1)  // program_segmentation_flag
                body.put(s.duration != nil ? 1 : 0, 1)
                body.put(1, 1)  // delivery_not_restricted_flag
                body.put(0x1F, 5)
                if let dur = s.duration { body.put(UInt64(dur) & ((1 << 40) - 1), 40) }
                body.put(UInt64(s.upidType), 8)
                body.put(UInt64(s.upid.count), 8)
                for b in s.upid { body.put(UInt64(b), 8) }
                body.put(UInt64(s.typeID), 8)
                body.put(UInt64(s.segmentNum), 8)
                body.put(UInt64(s.segmentsExpected), 8)
            }
            d.put(UInt64(SegmentationDescriptor.tag), 8)
            d.put(UInt64(body.bytes.count), 8)
            d.bytes += body.bytes
        }
        var w = BitWriter()
        let sectionLength = 11 + c.bytes.count + 2 + d.bytes.count + 4
        w.put(UInt64(Self.tableID), 8)
        w.put(0, 1); w.put(0, 1); w.put(3, 2)
        w.put(UInt64(sectionLength), 12)
        w.put(0, 8)  // protocol_version
        w.put(0, 1); w.put(0, 6)
        w.put(0, 33)  // pts_adjustment
        w.put(0, 8)  // cw_index
        w.put(0xFFF, 12)
        w.put(UInt64(c.bytes.count), 12)
        w.put(UInt64(type), 8)
        w.bytes += c.bytes
        w.put(UInt64(d.bytes.count), 16)
        w.bytes += d.bytes
        let crc = Self.crc32(w.bytes)
        w.put(UInt64(crc), 32)
        ptsAdjustment = 0
        tier = 0xFFF
        self.command = command
        self.segmentations = segmentations
        bytes = w.bytes
    }

    private static func putSpliceTime(_ t: Int64?, _ w: inout BitWriter) {
        if let t {
            w.put(1, 1); w.put(0x3F, 6); w.put(UInt64(t & ptsMask), 33)
        } else {
            w.put(0, 1); w.put(0x7F, 7)
        }
    }
}

/// Most significant bit first, the `BitReader`'s counterpart.
struct BitWriter {
    var bytes: [UInt8] = []
    private var pending = 0

    /// Appends the `n` low bits of `v`; whole bytes once 8 are filled.
    mutating func put(_ v: UInt64, _ n: Int) {
        for i in stride(from: n - 1, through: 0, by: -1) {
            if pending == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8((v >> UInt64(i)) & 1) << (7 - UInt8(pending))
            pending = (pending + 1) & 7
        }
    }
}
