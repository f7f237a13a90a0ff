/// Where a segment's first video keyframe can be read on its own: the `moof`+`mdat` fragment that opens with it,
/// as the segmenter wrote it. An I-frame playlist (RFC 8216 §4.3.3.6, `EXT-X-I-FRAMES-ONLY`) lists this range of
/// the segment with `EXT-X-BYTERANGE` (§4.3.2.2): no bytes are stored twice, and nothing downstream re-parses the
/// segment to find its `moof`.
///
/// The range covers the whole fragment (its `moof` and its whole `mdat`), never a cut `mdat`: FFmpeg 5.1 cannot
/// decode a range that ends inside the `mdat`. Without LL-HLS parts the fragment is the segment's whole GOP; with
/// parts it is the first part (less its `styp`).
public struct KeyframeFragment: Sendable, Equatable {
    /// Byte offsets in the segment's bytes: the `moof` starts at `lowerBound` (after the segment's `styp`), the
    /// fragment's `mdat` ends at `upperBound`.
    public var range: Range<Int>
    /// Decode time of the keyframe (the fragment's `tfdt` on the video track), in that track's timescale.
    public var decodeTime: MediaTime

    public init(range: Range<Int>, decodeTime: MediaTime) {
        precondition(range.lowerBound >= 0 && !range.isEmpty, "a keyframe fragment has bytes")
        self.range = range
        self.decodeTime = decodeTime
    }
}
