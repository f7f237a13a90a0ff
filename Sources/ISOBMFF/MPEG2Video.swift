import MediaCore

/// What the origin reads of an MPEG-2 video (ISO/IEC 13818-2) picture: the ATSC A/53 closed captions in its user data.
/// An MPEG-2 picture is never carried as it is (fMP4 HLS has no place for it: it is re-encoded, and libavcodec hands
/// the captions to the encoder as frame side data); what is read here decides the signalling before the first segment.
public enum MPEG2Video {
    /// The caption data in a picture's `user_data()` (start code 0x000001B2, §6.2.2.2.2) as ATSC A/53 Part 4 §6.2.2
    /// puts it: `user_data_identifier` `GA94`, `user_data_type_code` 3, then `cc_data()`, the same construct H.264 SEI
    /// carries (`SEI.a53Captions`: flags with `process_cc_data_flag` and `cc_count`, a reserved byte, `cc_count` triples).
    /// The user data runs to the next start code (`0x000001`).
    public static func captions(inPicture data: [UInt8]) -> CaptionPresence {
        var found = CaptionPresence()
        var i = 0
        let n = data.count
        while i + 4 <= n {
            guard data[i] == 0, data[i + 1] == 0, data[i + 2] == 1 else { i += 1; continue }
            let code = data[i + 3]
            i += 4
            guard code == 0xB2 else { continue }
            var end = i
            while end + 3 <= n, !(data[end] == 0 && data[end + 1] == 0 && data[end + 2] == 1) { end += 1 }
            if end + 3 > n { end = n }
            // Read as the SEI payload it would be: `itu_t_t35_country_code` and provider before the identifier.
            found = found | SEI.a53Captions(ArraySlice([0xB5, 0x00, 0x31] + data[i..<end]))
            i = end
        }
        return found
    }
}
