import HLS
import MediaCore
import TestSupport

// The body of the `playlist` libFuzzer target of `scripts/fuzz`, compiled both into the fuzz binary (with
// `Tests/Fuzz/playlist.swift`) and into this test target, where `FuzzReplayTests` runs every committed seed of
// `Tests/FuzzSeeds/playlist/` through it. No Foundation, no Testing: the fuzz build compiles it with swiftc alone.
//
// A parser that throws on bad text is doing its job; a trap is a bug, and so is a broken invariant, reported as
// `FuzzInvariantViolation`.

public enum HLSFuzz {
    /// Media and multivariant playlist parsers on the bytes as UTF-8 text (invalid sequences become U+FFFD).
    public static func playlist(_ data: [UInt8]) throws(FuzzInvariantViolation) {
        let text = String(decoding: data, as: UTF8.self)
        // §4.1: "Lines in a Playlist file are terminated by either a single line feed character or a carriage
        // return character followed by a line feed character." Ending every line with CR LF changes nothing.
        var crlfBytes: [UInt8] = []
        for (i, b) in data.enumerated() {
            if b == 0x0A && (i == 0 || data[i - 1] != 0x0D) { crlfBytes.append(0x0D) }
            crlfBytes.append(b)
        }
        let crlf = String(decoding: crlfBytes, as: UTF8.self)
        let media = try? MediaPlaylist.parse(text)
        try require(media == (try? MediaPlaylist.parse(crlf)), "playlist: CR LF line ends change the media playlist")
        let multivariant = try? MultivariantPlaylist.parse(text)
        try require(multivariant == (try? MultivariantPlaylist.parse(crlf)), "playlist: CR LF line ends change the multivariant playlist")
        if let p = media {
            // What the parser accepted renders to a playlist the parser accepts again, and a second render changes
            // nothing: render(parse(render(p))) == render(p).
            let once = p.render()
            let again: MediaPlaylist
            do { again = try MediaPlaylist.parse(once) } catch {
                throw FuzzInvariantViolation(description: "playlist: render() of a parsed media playlist does not parse: \(error)\n\(once)")
            }
            try require(again.render() == once, "playlist: media playlist render is not stable\n\(once)\n---\n\(again.render())")
            try require(again.segments.map(\.sequence) == p.segments.map(\.sequence), "playlist: sequence numbers changed")
            for (i, s) in p.segments.enumerated() {
                try require(s.duration.value >= 0, "playlist: negative EXTINF")
                if let r = s.byteRange { try require(r.offset >= 0 && r.length >= 0 && r.offset <= Int.max - r.length, "playlist: byte range \(r.text)") }
                if i > 0 { try require(s.sequence == p.segments[i - 1].sequence + 1, "playlist: sequence numbers not consecutive") }
            }
            _ = p.renditionReport(uri: "fuzz.m3u8")
            _ = p.renderedVersion
        }
        if let m = multivariant {
            let problems = m.validate()
            _ = m.requiredVersion
            // Only a playlist that passes its own checker (§4.2 quoted-strings among them) must survive a round trip.
            if problems.isEmpty {
                let once = m.render()
                let again: MultivariantPlaylist
                do { again = try MultivariantPlaylist.parse(once) } catch {
                    throw FuzzInvariantViolation(description: "playlist: render() of a valid multivariant playlist does not parse: \(error)\n\(once)")
                }
                try require(again.render() == once, "playlist: multivariant render is not stable\n\(once)\n---\n\(again.render())")
            }
        }
    }
}
