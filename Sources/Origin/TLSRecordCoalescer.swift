import NIOCore

/// Gathers the small writes of one flush into one buffer before TLS, so that they leave in one TLS record instead of
/// one each. swift-nio-http2 writes a frame's header and its payload as separate buffers, and NIOSSL seals each write
/// it is given in a record of its own: a playlist answered over HTTP/2 was three records (`HEADERS`, the `DATA`
/// frame's header, its payload), and ten answered from one read were thirty, each sealed by us and opened by the
/// client, with its 22 bytes of TLS 1.3 overhead. nginx fills a record up to `ssl_buffer_size` (16 KiB) before sealing.
///
/// A write of at most `smallWrite` bytes is copied into the gathered buffer (at most `recordBytes`, a full TLS
/// record); a larger one (a segment's `DATA` payload, sent from the object's own buffers) goes on by itself, after
/// what was gathered before it, so the order of the bytes is kept. What is gathered is written on `flush`, before a
/// large write, before `close`, and when the handler is removed. Promises of gathered writes complete with the write
/// that carried them.
final class TLSRecordCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The largest write copied into the gathered buffer.
    static let smallWrite = 4096
    /// The gathered buffer's largest size: one TLS record's plaintext (RFC 8446 §5.1: 2^14 bytes).
    static let recordBytes = 16_384

    /// The writes gathered since the last one passed on: the first one's own buffer until a second comes (a lone
    /// write is not copied), then a buffer of our own.
    private var gathered: ByteBuffer?
    private var ownsGathered = false
    private var promises: [EventLoopPromise<Void>] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var bytes) = unwrapOutboundIn(data), bytes.readableBytes <= Self.smallWrite else {
            writeGathered(context)
            context.write(data, promise: promise)
            return
        }
        if let size = gathered?.readableBytes, size + bytes.readableBytes > Self.recordBytes { writeGathered(context) }
        if let promise { promises.append(promise) }
        guard var buffer = gathered else {
            gathered = bytes
            return
        }
        gathered = nil  // one reference while appending: no copy-on-write
        if !ownsGathered {
            var own = context.channel.allocator.buffer(capacity: Self.recordBytes)
            own.writeBuffer(&buffer)
            buffer = own
            ownsGathered = true
        }
        buffer.writeBuffer(&bytes)
        gathered = buffer
    }

    func flush(context: ChannelHandlerContext) {
        writeGathered(context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        writeGathered(context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        writeGathered(context)
    }

    /// Writes what was gathered as one buffer; its promise completes the gathered writes' promises.
    private func writeGathered(_ context: ChannelHandlerContext) {
        guard let buffer = gathered else { return }
        gathered = nil
        ownsGathered = false
        let waiting = promises
        promises = []
        switch waiting.count {
        case 0: context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
        case 1: context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: waiting[0])
        default:
            let promise = context.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenComplete { result in
                for p in waiting { p.completeWith(result) }
            }
            context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
        }
    }
}
