import MediaCore

/// Supplemental enhancement information in H.264 and H.265 access units: the messages of SEI NAL units
/// (H.264 §7.3.2.3.1, H.265 §7.3.5: `payloadType` and `payloadSize` as runs of 0xFF plus a last byte, then the
/// payload), and the ATSC A/53 closed captions they carry.
public enum SEI {
    /// Calls `body(payloadType, payload)` for every message of one SEI NAL unit's RBSP (emulation prevention removed),
    /// up to the `rbsp_trailing_bits`; a message that runs past the end stops the walk.
    static func forEachMessage(rbsp: [UInt8], _ body: (Int, ArraySlice<UInt8>) -> Void) {
        var i = 0
        while i < rbsp.count, rbsp[i] != 0x80 {
            var payloadType = 0, payloadSize = 0
            while i < rbsp.count, rbsp[i] == 0xFF { payloadType += 255; i += 1 }
            guard i < rbsp.count else { return }
            payloadType += Int(rbsp[i]); i += 1
            while i < rbsp.count, rbsp[i] == 0xFF { payloadSize += 255; i += 1 }
            guard i < rbsp.count else { return }
            payloadSize += Int(rbsp[i]); i += 1
            guard i + payloadSize <= rbsp.count else { return }
            body(payloadType, rbsp[i..<(i + payloadSize)])
            i += payloadSize
        }
    }

    /// The SEI messages of an access unit (Annex-B or length-prefixed), H.264 (NAL type 6, one header byte) or
    /// H.265 (prefix and suffix SEI, types 39 and 40, two header bytes).
    static func forEachMessage(inAccessUnit data: [UInt8], hevc: Bool, _ body: (Int, ArraySlice<UInt8>) -> Void) {
        AVC.forEachNAL(in: data) { nal in
            guard let h = nal.first else { return true }
            if hevc {
                let t = HEVC.type(h)
                guard nal.count > 2, t == HEVC.NALType.prefixSEI || t == 40 else { return true }
                forEachMessage(rbsp: SPSInfo.rbsp(nal.dropFirst(2)), body)
            } else {
                guard nal.count > 1, h & 0x1F == AVC.NALType.sei else { return true }
                forEachMessage(rbsp: SPSInfo.rbsp(nal.dropFirst(1)), body)
            }
            return true
        }
    }

    /// The caption data in an access unit's `user_data_registered_itu_t_t35` messages (payload type 4) of ATSC A/53
    /// Part 4 §6.2.3: country code 0xB5, provider 0x0031, user identifier `GA94`, `user_data_type_code` 3, then
    /// `cc_data()`: a flags byte with `process_cc_data_flag` (0x40) and `cc_count` (5 bits), one reserved byte, and
    /// `cc_count` constructs of `marker_bits(5) cc_valid(1) cc_type(2)` and two data bytes (CTA-708 §4.4). A valid field 2
    /// of null pairs only is no CC3 (what encoders write when that field carries nothing).
    public static func captions(inAccessUnit data: [UInt8], hevc: Bool) -> CaptionPresence {
        var found = CaptionPresence()
        forEachMessage(inAccessUnit: data, hevc: hevc) { type, payload in
            guard type == 4 else { return }
            found = found | a53Captions(payload)
        }
        return found
    }

    /// An H.265 prefix SEI NAL unit (type 39, two header bytes; no length prefix, emulation prevention applied) with one
    /// `user_data_registered_itu_t_t35` message carrying `ccData` (`cc_count` constructs of three bytes) as A/53 Part 4
    /// §6.2.3 writes it: `GA94`, `user_data_type_code` 3, `process_cc_data_flag` and `cc_count`, `em_data` 0xFF, the
    /// constructs, `marker_bits` 0xFF. `nil` when `ccData` is empty or over 31 constructs.
    public static func hevcCaptionNAL(ccData: [UInt8]) -> [UInt8]? {
        let count = ccData.count / 3
        guard count > 0, count <= 31 else { return nil }
        let payload: [UInt8] = [0xB5, 0x00, 0x31, 0x47, 0x41, 0x39, 0x34, 0x03, 0x40 | UInt8(count), 0xFF]
            + ccData.prefix(count * 3) + [0xFF]
        var rbsp: [UInt8] = [4]
        var size = payload.count
        while size >= 255 { rbsp.append(0xFF); size -= 255 }
        rbsp.append(UInt8(size))
        rbsp += payload
        rbsp.append(0x80)                                   // rbsp_trailing_bits
        return [HEVC.NALType.prefixSEI << 1, 0x01] + emulationPrevented(rbsp)
    }

    /// RBSP to NAL payload (H.264 §7.4.1, H.265 §7.4.2): an `emulation_prevention_three_byte` after two zero bytes
    /// that a byte of 0–3 follows.
    static func emulationPrevented(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rbsp.count + 4)
        var zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 3 { out.append(3); zeros = 0 }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// One `user_data_registered_itu_t_t35` payload read as A/53 `cc_data`; empty presence for any other user data.
    static func a53Captions(_ payload: ArraySlice<UInt8>) -> CaptionPresence {
        let p = Array(payload)
        guard p.count >= 10, p[0] == 0xB5, p[1] == 0x00, p[2] == 0x31, p[3...6] == [0x47, 0x41, 0x39, 0x34], p[7] == 3,
              p[8] & 0x40 != 0 else { return CaptionPresence() }
        let count = Int(p[8] & 0x1F)
        var found = CaptionPresence()
        var i = 10
        for _ in 0..<count {
            guard i + 3 <= p.count else { break }
            let b = p[i], d1 = p[i + 1] & 0x7F, d2 = p[i + 2] & 0x7F
            i += 3
            guard b & 0x04 != 0 else { continue }          // cc_valid
            switch b & 0x03 {
            case 0: found.field1 = true
            // Encoders mark field 2 valid with null pairs (0x80 0x80) when it carries nothing: only data counts there.
            case 1: found.field2 = found.field2 || d1 != 0 || d2 != 0
            default: found.dtvcc = true
            }
        }
        return found
    }
}
