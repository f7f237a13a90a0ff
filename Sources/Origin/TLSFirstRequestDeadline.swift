import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// The TLS port's `--header-timeout`: a connection must finish its TLS handshake and the head of its first request
/// within `headerTimeout` of its opening, or it is closed, as the plain port's `ConnectionGuard` does (nginx's
/// `client_header_timeout` and `ssl_handshake_timeout`). Without it a client that opened TCP and never started the
/// handshake, or sent its head a byte a second, held a connection (and a slot of `--max-connections`) for ever:
/// HummingbirdCore's idle timeout restarts with every byte.
///
/// It reads the decrypted bytes just after the TLS handler, before ALPN's choice, and stops reading them once the
/// first head is complete; after that, the stream-level limits (idle timeout, header size) apply.
/// - HTTP/1.1: the head ends at its first empty line (CRLF CRLF, RFC 9112 §2.1).
/// - HTTP/2: after the 24-byte connection preface (RFC 9113 §3.4), the first HEADERS frame, and the CONTINUATION
///   frames after it, up to the one with END_HEADERS (RFC 9113 §6.2, §6.10). Frames before it (SETTINGS,
///   WINDOW_UPDATE, PING) are skipped by their length.
final class TLSFirstRequestDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    enum Progress: Equatable {
        case reading
        case complete
        /// Not HTTP as this port speaks it (more than `maxHeadBytes` before the head ended): close.
        case refused
    }

    private let timeout: TimeAmount
    private var scanner: FirstHeadScanner
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, maxHeadBytes: Int) {
        self.timeout = timeout
        scanner = FirstHeadScanner(maxHeadBytes: maxHeadBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        switch scanner.feed(bytes.readableBytesView) {
        case .reading:
            context.fireChannelRead(data)
        case .complete:
            timer?.cancel()
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .refused:
            timer?.cancel()
            context.close(promise: nil)
        }
    }
}

/// Finds where the first request head of a connection ends, in bytes that arrive in any split. Pure, for tests.
struct FirstHeadScanner {
    private enum Mode { case undecided, http1, http2 }
    private let maxHeadBytes: Int
    private var mode = Mode.undecided
    private var seen = 0
    /// HTTP/1.1: the last four bytes, to find CRLF CRLF across reads; whether they ended a head while undecided.
    private var tail: UInt32 = 0
    private var blankLineSeen = false
    /// HTTP/2: the frame header being read, the payload bytes left of the current frame, and whether a header
    /// block is open (a HEADERS without END_HEADERS) or ends with the current frame.
    private var frameHeader: [UInt8] = []
    private var frameRemaining = 0
    private var inHeaderBlock = false
    private var blockEndsWithFrame = false
    private var progress = TLSFirstRequestDeadline.Progress.reading

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// `maxHeadBytes`: the most bytes before the first head may end (HTTP/2's first frames, SETTINGS and
    /// WINDOW_UPDATE, are counted too).
    init(maxHeadBytes: Int) { self.maxHeadBytes = maxHeadBytes }

    mutating func feed<C: Collection>(_ bytes: C) -> TLSFirstRequestDeadline.Progress where C.Element == UInt8 {
        guard progress == .reading else { return progress }
        for byte in bytes {
            seen += 1
            switch mode {
            case .undecided:
                _ = blankLine(after: byte)
                if byte == Self.preface[seen - 1] {
                    if seen == Self.preface.count { mode = .http2 }
                } else {
                    mode = .http1
                    if blankLineSeen { progress = .complete }
                }
            case .http1:
                if blankLine(after: byte) { progress = .complete }
            case .http2:
                if headerBlockEnded(after: byte) { progress = .complete }
            }
            if progress == .reading && seen > maxHeadBytes { progress = .refused }
            if progress != .reading { return progress }
        }
        return progress
    }

    /// Whether the last four bytes are CRLF CRLF (RFC 9112 §2.1: the head ends at the first empty line).
    private mutating func blankLine(after byte: UInt8) -> Bool {
        tail = tail << 8 | UInt32(byte)
        let found = tail == 0x0D0A_0D0A
        if found { blankLineSeen = true }
        return found
    }

    /// Whether the first header block ended with this byte: a HEADERS frame (0x1) and the CONTINUATION frames
    /// (0x9) after it, up to the one with END_HEADERS (0x4), each read to the end of its payload (RFC 9113 §4.1).
    private mutating func headerBlockEnded(after byte: UInt8) -> Bool {
        if frameRemaining > 0 {
            frameRemaining -= 1
        } else {
            frameHeader.append(byte)
            guard frameHeader.count == 9 else { return false }
            frameRemaining = Int(frameHeader[0]) << 16 | Int(frameHeader[1]) << 8 | Int(frameHeader[2])
            let type = frameHeader[3], endHeaders = frameHeader[4] & 0x4 != 0
            frameHeader.removeAll(keepingCapacity: true)
            if type == 0x1 || (type == 0x9 && inHeaderBlock) {
                inHeaderBlock = !endHeaders
                blockEndsWithFrame = endHeaders
            }
        }
        return blockEndsWithFrame && frameRemaining == 0
    }
}

/// The TLS port's child channel: HummingbirdHTTP2's (TLS, ALPN, HTTP/2 or HTTP/1.1) with the first-request deadline
/// just after the TLS handler.
struct DeadlinedTLSChannel: HTTPChannelHandler {
    typealias Value = HTTP2UpgradeChannel.Value
    let inner: HTTP2UpgradeChannel
    let headerTimeout: TimeAmount
    let maxHeadBytes: Int

    var responder: Responder { inner.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let future = inner.setup(channel: channel, logger: logger)
        do {
            let tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
            try channel.pipeline.syncOperations.addHandler(
                TLSFirstRequestDeadline(timeout: headerTimeout, maxHeadBytes: maxHeadBytes), position: .after(tls))
        } catch {
            channel.close(promise: nil)
        }
        return future
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
