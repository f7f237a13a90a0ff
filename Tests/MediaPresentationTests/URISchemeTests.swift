import Testing
import TestSupport
@testable import MediaPresentation

@Suite struct URISchemeTests {
    @Test func namesAndParsesEveryObject() {
        for scheme in [URIScheme.root("stream"), .nested("720p")] {
            let d = scheme.directory
            #expect(scheme.initURI(0) == d + "init.mp4")
            #expect(scheme.initURI(2) == d + "init2.mp4")
            #expect(scheme.segmentURI(17) == d + "seg17.m4s")
            #expect(scheme.partURI(17, 2) == d + "seg17.2.m4s")
            #expect(scheme.object(at: Substring(scheme.playlistURI)) == .playlist)
            #expect(scheme.object(at: Substring(scheme.initURI(0))) == .initSegment(0))
            #expect(scheme.object(at: Substring(scheme.initURI(3))) == .initSegment(3))
            #expect(scheme.object(at: Substring(scheme.segmentURI(9_000_000_000))) == .segment(9_000_000_000))
            #expect(scheme.object(at: Substring(scheme.partURI(5, 0))) == .part(5, 0))
        }
        #expect(URIScheme.nested("720p").iFramePlaylistURI == "720p.iframes.m3u8")
        #expect(URIScheme.root("stream").iFramePlaylistURI == "stream.iframes.m3u8")
        #expect(URIScheme.nested("720p").object(at: "720p.iframes.m3u8") == .iFramePlaylist)
        #expect(URIScheme.nested("720p").singleFileURI == "720p.mp4")
        #expect(URIScheme.root("stream").singleFileURI == "stream.mp4")
        #expect(URIScheme.nested("720p").playlistURI == "720p.m3u8")
        #expect(URIScheme.root("stream").playlistURI == "stream.m3u8")
    }

    @Test func rejectsWhatItNeverNames() {
        let s = URIScheme.nested("a")
        for bad in ["a/seg01.m4s", "a/seg-1.m4s", "a/seg.m4s", "a/seg1.2.3.m4s", "a/seg1..m4s", "a/init0.mp4",
                    "a/init01.mp4", "a/seg99999999999999999999.m4s", "b/seg1.m4s", "seg1.m4s", "a/seg1.m4s/",
                    "a/x/seg1.m4s", "a.m3u8x", "a/SEG1.m4s", "a/seg1.m4", "a/seg+1.m4s", "a/seg 1.m4s"] {
            #expect(s.object(at: Substring(bad)) == nil, "\(bad)")
        }
    }

    @Test func randomPathsNeverCrashAndRoundTripWhenAccepted() {
        var rng = SplitMix64(seed: 9)
        let alphabet = Array("seginit.m4sp0123456789/a".utf8)
        let s = URIScheme.nested("a")
        for _ in 0..<20_000 {
            let n = Int.random(in: 0...20, using: &rng)
            let path = String(decoding: (0..<n).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &rng)] }, as: UTF8.self)
            guard let o = s.object(at: Substring(path)) else { continue }
            let back: String = switch o {
            case .playlist: s.playlistURI
            case .iFramePlaylist: s.iFramePlaylistURI
            case .initSegment(let i): s.initURI(i)
            case .segment(let n): s.segmentURI(n)
            case .part(let n, let i): s.partURI(n, i)
            }
            #expect(back == path)
        }
    }

    @Test func renditionNamesAreSafePathSegments() {
        #expect(Rendition.isValidName("720p") && Rendition.isValidName("audio_en-2"))
        for bad in ["", "a/b", "..", "a b", "é", String(repeating: "x", count: 33), "a.b", "%2e"] {
            #expect(!Rendition.isValidName(bad), "\(bad)")
        }
    }
}
