internal import CFFmpeg
import MediaCore

/// One sheet of thumbnail tiles being filled (trick play): a full-range yuv420p picture of `columns` × `rows` tiles,
/// each placed from one keyframe (H.264, H.265 or AV1, decoded on its own, as `JPEGThumbnail` does), scaled by libswscale straight
/// into its rectangle, then the sheet encoded once by libavcodec's MJPEG encoder.
///
/// Tile `i` lies at column `i % columns`, row `i / columns` (raster order, DASH-IF IOP 4.3 §6.2.6). Tile sizes are
/// even (4:2:0 chroma). Empty tiles are black. Not `Sendable`: one task owns it.
public final class TileCanvas {
    public let columns: Int
    public let rows: Int
    public let tileWidth: Int
    public let tileHeight: Int
    private let sheet: UnsafeMutablePointer<AVFrame>
    private var sws: OpaquePointer?
    private let context = "cannot make a thumbnail tile"

    public init(columns: Int, rows: Int, tileWidth: Int, tileHeight: Int) throws {
        precondition(columns > 0 && rows > 0 && tileWidth >= 2 && tileHeight >= 2 && tileWidth % 2 == 0 && tileHeight % 2 == 0,
                     "TileCanvas: tiles are even and at least 2x2")
        self.columns = columns
        self.rows = rows
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        guard let f = av_frame_alloc() else { throw FFmpegError(code: AV.enomem, call: "av_frame_alloc", context: context) }
        sheet = f
        f.pointee.width = Int32(columns * tileWidth)
        f.pointee.height = Int32(rows * tileHeight)
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.color_range = AVCOL_RANGE_JPEG
        do {
            try check(av_frame_get_buffer(f, 0), "av_frame_get_buffer", context)
        } catch {
            var p: UnsafeMutablePointer<AVFrame>? = f
            av_frame_free(&p)
            throw error
        }
        clear()
    }

    deinit {
        sws_freeContext(sws)
        var p: UnsafeMutablePointer<AVFrame>? = sheet
        av_frame_free(&p)
    }

    /// Every tile black (Y 0, Cb = Cr = 128: full-range black).
    public func clear() {
        let f = sheet.pointee
        let h = Int(f.height), ch = (h + 1) / 2
        f.data.0!.update(repeating: 0, count: Int(f.linesize.0) * h)
        f.data.1!.update(repeating: 128, count: Int(f.linesize.1) * ch)
        f.data.2!.update(repeating: 128, count: Int(f.linesize.2) * ch)
    }

    /// Decodes `sample` (one keyframe as MP4 stores it: H.264 or H.265 length-prefixed NAL units, AV1 OBUs) with the
    /// track's configuration record (`avcC`, `hvcC`, `av1C`) and scales it into each of the tiles `indices` (raster
    /// order).
    public func place(_ record: TrackFormat.Codec, sample: [UInt8], at indices: [Int]) throws {
        guard !indices.isEmpty else { return }
        let picture = try JPEGThumbnail.decode(record, sample: sample, context: context)
        defer { var p: UnsafeMutablePointer<AVFrame>? = picture; av_frame_free(&p) }
        for i in indices { try scale(picture, into: i) }
    }

    /// The sheet as a JPEG (`quality`: 2 best … 31 worst, as `ffmpeg -q:v`).
    public func jpeg(quality: Int = 5) throws -> [UInt8] {
        try JPEGThumbnail.encode(sheet, quality: quality, context: context)
    }

    private func scale(_ src: UnsafeMutablePointer<AVFrame>, into index: Int) throws {
        precondition((0..<columns * rows).contains(index), "TileCanvas: tile \(index) is outside the sheet")
        let s = src.pointee
        guard s.width > 0, s.height > 0 else { throw FFmpegError.invalid(context, "the decoded picture is empty") }
        sws = sws_getCachedContext(sws, s.width, s.height, AVPixelFormat(rawValue: s.format), Int32(tileWidth), Int32(tileHeight),
                                   AV_PIX_FMT_YUV420P, SWS_BICUBIC, nil, nil, nil)
        guard let sws else {
            throw FFmpegError.invalid(context, "libswscale cannot convert the decoded picture", call: "sws_getCachedContext")
        }
        // Limited range in (what H.264 carries unless it says otherwise), full range out (what a JPEG means).
        let srcFull: Int32 = s.color_range == AVCOL_RANGE_JPEG ? 1 : 0
        let coefficients = sws_getCoefficients(s.colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
        _ = sws_setColorspaceDetails(sws, coefficients, srcFull, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
        let d = sheet.pointee
        let x = (index % columns) * tileWidth, y = (index / columns) * tileHeight
        let srcData: [UnsafePointer<UInt8>?] = [UnsafePointer(s.data.0), UnsafePointer(s.data.1), UnsafePointer(s.data.2), nil]
        let srcStride: [Int32] = [s.linesize.0, s.linesize.1, s.linesize.2, 0]
        let dstData: [UnsafeMutablePointer<UInt8>?] = [
            d.data.0! + y * Int(d.linesize.0) + x,
            d.data.1! + y / 2 * Int(d.linesize.1) + x / 2,
            d.data.2! + y / 2 * Int(d.linesize.2) + x / 2,
            nil,
        ]
        let dstStride: [Int32] = [d.linesize.0, d.linesize.1, d.linesize.2, 0]
        let rows = sws_scale(sws, srcData, srcStride, 0, s.height, dstData, dstStride)
        try check(rows, "sws_scale", context)
    }
}
