import NIOCore

/// The TLS port's `--header-timeout`: a connection must finish its TLS handshake and the head of its first request
/// within `headerTimeout` of its opening, or it is closed, as the plain port's `ConnectionGuard` does (nginx's
/// `client_header_timeout` and `ssl_handshake_timeout`). Without it a client that opened TCP and never started the
/// handshake, or sent its head a byte a second, held a connection (and a slot of `--max-connections`) for ever:
/// HummingbirdCore's idle timeout restarts with every byte.
///
/// It reads the decrypted bytes just after the TLS handler, before ALPN's choice.
/// - HTTP/1.1: the head ends at its first empty line (CRLF CRLF, RFC 9112 §2.1). Then this handler leaves: the
///   `ConnectionGuard` of the HTTP/1.1 pipeline times the later heads.
/// - HTTP/2: after the 24-byte connection preface (RFC 9113 §3.4), the first HEADERS frame, and the CONTINUATION
///   frames after it, up to the one with END_HEADERS (RFC 9113 §6.2, §6.10). Frames before it (SETTINGS,
///   WINDOW_UPDATE, PING) are skipped by their length. After the first head it stays and keeps reading frame
///   boundaries: every later frame (but a DATA frame's payload) and every later header block must be complete
///   within `headerTimeout` of the read its first byte came in, so a later head trickled a byte at a time is cut short too (HTTP/2's
///   own idle timeout counts only connections without open streams).
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
    private var firstHeadComplete = false
    /// The frame or header block the running timer is for (`FirstHeadScanner.pendingUnit`).
    private var timedUnit = 0

    init(timeout: TimeAmount, maxHeadBytes: Int) {
        self.timeout = timeout
        scanner = FirstHeadScanner(maxHeadBytes: maxHeadBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        startTimer(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    private func startTimer(_ context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let progress = scanner.feed(bytes.readableBytesView)
        if firstHeadComplete {
            // HTTP/2 after the first head: a frame or header block cut short is timed from the read it began in.
            if !scanner.framePending {
                timer?.cancel()
                timer = nil
            } else if timer == nil || timedUnit != scanner.pendingUnit {
                timer?.cancel()
                timedUnit = scanner.pendingUnit
                startTimer(context)
            }
            context.fireChannelRead(data)
            return
        }
        switch progress {
        case .reading:
            context.fireChannelRead(data)
        case .complete:
            timer?.cancel()
            timer = nil
            firstHeadComplete = true
            if !scanner.isHTTP2 {
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            if scanner.framePending {
                timedUnit = scanner.pendingUnit
                startTimer(context)
            }
            context.fireChannelRead(data)
        case .refused:
            // The bytes go on first: the protocol handler has its own word on them (swift-nio-http2's GOAWAY for a
            // header block too large or too many CONTINUATION frames, the HTTP/1 parser's 431), then the close.
            timer?.cancel()
            context.fireChannelRead(data)
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
    private var frameIsData = false
    private var progress = TLSFirstRequestDeadline.Progress.reading

    /// The connection speaks HTTP/2 (it began with the preface).
    var isHTTP2: Bool { mode == .http2 }

    /// Counts the frames begun outside a header block (a header block counts once, from its HEADERS frame): which
    /// frame or block `framePending` is about, so that a new one is timed from its own first byte.
    private(set) var pendingUnit = 0

    /// HTTP/2: a frame has begun and not ended (a DATA frame only until its header is complete), or a header block
    /// is open (a HEADERS frame without END_HEADERS, waiting for CONTINUATION frames).
    var framePending: Bool {
        mode == .http2 && (!frameHeader.isEmpty || inHeaderBlock || (frameRemaining > 0 && !frameIsData))
    }

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// `maxHeadBytes`: the most bytes before the first head may end (HTTP/2's first frames, SETTINGS and
    /// WINDOW_UPDATE, are counted too).
    init(maxHeadBytes: Int) { self.maxHeadBytes = maxHeadBytes }

    /// After `.complete`, an HTTP/2 connection's frames are still followed (`framePending`), with no size limit.
    /// A frame's payload is skipped by its length, not byte by byte: a client sending megabytes of CONTINUATION or
    /// DATA costs this scanner its frame headers only (a byte loop over a 16-KB frame flood held the event loop
    /// long enough to push another client's p99 past 50 ms).
    mutating func feed<C: RandomAccessCollection>(_ bytes: C) -> TLSFirstRequestDeadline.Progress
    where C.Element == UInt8 {
        if progress == .complete && mode == .http2 {
            var i = bytes.startIndex
            while i != bytes.endIndex {
                if frameRemaining > 0 {
                    let n = Swift.min(frameRemaining, bytes.distance(from: i, to: bytes.endIndex))
                    frameRemaining -= n
                    i = bytes.index(i, offsetBy: n)
                } else {
                    _ = headerBlockEnded(after: bytes[i])
                    i = bytes.index(after: i)
                }
            }
            return progress
        }
        guard progress == .reading else { return progress }
        var i = bytes.startIndex
        while i != bytes.endIndex {
            if mode == .http2 && frameRemaining > 0 {
                // A payload: skipped whole, up to the byte that would pass `maxHeadBytes` (as one byte at a time).
                let n = Swift.min(frameRemaining, bytes.distance(from: i, to: bytes.endIndex),
                                  Swift.max(1, maxHeadBytes + 1 - seen))
                seen += n
                frameRemaining -= n
                i = bytes.index(i, offsetBy: n)
                if blockEndsWithFrame && frameRemaining == 0 { progress = .complete }
            } else {
                let byte = bytes[i]
                i = bytes.index(after: i)
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
            if frameHeader.count == 1 && !inHeaderBlock { pendingUnit &+= 1 }
            guard frameHeader.count == 9 else { return false }
            frameRemaining = Int(frameHeader[0]) << 16 | Int(frameHeader[1]) << 8 | Int(frameHeader[2])
            let type = frameHeader[3], endHeaders = frameHeader[4] & 0x4 != 0
            frameHeader.removeAll(keepingCapacity: true)
            frameIsData = type == 0x0
            blockEndsWithFrame = false
            if type == 0x1 || (type == 0x9 && inHeaderBlock) {
                inHeaderBlock = !endHeaders
                blockEndsWithFrame = endHeaders
            }
        }
        return blockEndsWithFrame && frameRemaining == 0
    }
}
