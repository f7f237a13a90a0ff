import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOHTTPTypesHTTP2
import NIOSSL

/// The TLS port's child channel: TLS, ALPN, then HTTP/2 or HTTP/1.1, as HummingbirdHTTP2's `HTTP2UpgradeChannel`
/// sets it up, but with the origin's `ConnectionLimits` in force on both (HummingbirdHTTP2 2.28 builds swift-nio-http2's
/// handler with its defaults and HummingbirdCore's HTTP/1.1 channel, and lets neither be configured):
///
/// ```
/// LingeringClose | NIOSSLServerHandler | TLSRecordCoalescer (a flush's small writes in one record) |
/// TLSFirstRequestDeadline | ALPN ->
///   h2:       NIOHTTP2Handler(http2Configuration(limits)) | NIOHTTP2ServerConnectionManagementHandler |
///             H2FrameFastPath (answers what is in memory, no stream channel) | HTTP2StreamMultiplexer |
///             H2ConnectionErrorHandler   ->  per other stream: HTTP2FramePayloadToHTTPServerCodec | H2SendTimeout |
///             HTTPConnectionStateHandler | NIOAsyncChannel -> Hummingbird's request handling
///   http/1.1: the plain port's guarded HTTP/1 pipeline (ConnectionGuard: header, idle and send timeouts, 408/414/431)
///             | HTTP1ToHTTPServerCodec | TLSHTTP1FastPathHandler | NIOAsyncChannel
/// ```
struct OriginTLSChannel: HTTPChannelHandler {
    typealias Stream = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>
    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<Stream, AsyncStream<Stream>>>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let sslContext: NIOSSLContext
    let limits: ConnectionLimits
    let connections: ConnectionCounter
    let fastPath: FastPath

    init(tlsConfiguration: TLSConfiguration, limits: ConnectionLimits, connections: ConnectionCounter, fastPath: FastPath,
         responder: @escaping HTTPChannelHandler.Responder) throws {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        self.limits = limits
        self.connections = connections
        self.fastPath = fastPath
        self.responder = responder
    }

    /// swift-nio-http2's limits, from the origin's. The library's own defaults are kept where they already bound an
    /// attack (their values in 1.46 are written out here so that a change of default does not pass unnoticed):
    /// - SETTINGS_MAX_HEADER_LIST_SIZE = `maxHeaderBytes`, the HTTP/1.1 port's header limit (the library's default is
    ///   16 KiB). The HPACK decoder stops at it (an HPACK bomb: COMPRESSION_ERROR), and a header block gathered from
    ///   CONTINUATION frames that cannot fit is refused before it is decoded (PROTOCOL_ERROR).
    /// - SETTINGS_MAX_CONCURRENT_STREAMS = 100, the lowest RFC 9113 §6.5.2 recommends; one more stream is a connection
    ///   error (PROTOCOL_ERROR).
    /// - Requests' header blocks are checked against RFC 9113 §8.2–8.3 by `H2RequestValidation` in `H2FrameFastPath`
    ///   (a malformed one: RST_STREAM PROTOCOL_ERROR; more than 200 in 30 s: GOAWAY ENHANCE_YOUR_CALM), not by the
    ///   library's check of every block sent and received.
    /// - At most `maxStreamResets` RST_STREAM frames in 30 s (CVE-2023-44487, rapid reset; 200 by default), 5
    ///   CONTINUATION frames in a row (CVE-2024-27316's flood), 200 stream errors and 50 PING/SETTINGS/PRIORITY
    ///   frames in 30 s (the library allows 200: a burst of 200 acknowledgements held a debug build's event loop for up
    ///   to 140 ms, and players send a handful), 200 glitches a connection: beyond each, GOAWAY ENHANCE_YOUR_CALM. At most 10,000 control frames (PING and SETTINGS acknowledgements) queued for
    ///   a client that does not read.
    static func http2Configuration(_ limits: ConnectionLimits) -> NIOHTTP2Handler.Configuration {
        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: limits.maxHeaderBytes),
        ]
        // Requests' header blocks are checked by `H2RequestValidation` (in `H2FrameFastPath`) instead of in every
        // block sent and received: the same rules on what clients send, 11% more small answers a second.
        configuration.connection.headerBlockValidation = .disabled
        configuration.connection.maximumSequentialContinuationFrames = 5
        configuration.connection.maximumBufferedControlFrames = 10_000
        configuration.connection.maximumConnectionGlitches = 200
        configuration.connection.controlFrameRateLimit.maximumCount = 50
        configuration.connection.controlFrameRateLimit.windowLength = .seconds(30)
        configuration.stream.streamResetFrameRateLimit.maximumCount = limits.maxStreamResets
        configuration.stream.streamResetFrameRateLimit.windowLength = .seconds(30)
        configuration.stream.streamErrorRateLimit.maximumCount = 200
        configuration.stream.streamErrorRateLimit.windowLength = .seconds(30)
        return configuration
    }

    static let maxConcurrentStreams = 100
    /// How long a closed connection's input is still read and dropped, so that its last answer (a GOAWAY, a `408`)
    /// reaches a client that is still sending (`LingeringClose`).
    static let linger = TimeAmount.seconds(1)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // `--max-connections`: one more connection is closed at once, before its handshake (a 503 would cost the
        // handshake it is refused to save); the others are not disturbed.
        let counter = connections
        let admitted = counter.open()
        channel.closeFuture.whenComplete { _ in counter.close() }
        guard admitted else {
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(
                Value(negotiated: channel.eventLoop.makeFailedFuture(ConnectionRefused()), channel: channel))
        }
        do {
            if let bytes = limits.sendBufferBytes {
                try channel.syncOptions?.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(bytes))
            }
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(LingeringClose(linger: Self.linger))
            try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
            try pipeline.addHandler(TLSRecordCoalescer())
            try pipeline.addHandler(TLSFirstRequestDeadline(timeout: TimeAmount(limits.headerTimeout),
                                                            maxHeadBytes: 2 * limits.maxHeaderBytes + 4096))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let limits = self.limits, fastPath = self.fastPath
        return channel.configureHTTP2AsyncSecureUpgrade { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                try OriginHTTP1Channel.addGuardedHTTP1(to: pipeline, limits: limits)
                try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: true))
                if fastPath.enabled { try pipeline.addHandler(TLSHTTP1FastPathHandler(fastPath)) }
                return try Stream(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            }
        } http2ConnectionInitializer: { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                let configuration = Self.http2Configuration(limits)
                try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: configuration.connection,
                                                        streamConfiguration: configuration.stream))
                // Told of streams by the connection handler's events (NIOHTTP2StreamCreatedEvent, StreamClosedEvent),
                // those answered by the fast path included.
                try pipeline.addHandler(NIOHTTP2ServerConnectionManagementHandler(
                    eventLoop: channel.eventLoop,
                    configuration: .init(maxIdleTime: TimeAmount(limits.idleTimeout), maxAge: nil,
                                         maxGraceTime: TimeAmount(limits.sendTimeout), keepalive: nil)))
                if fastPath.enabled {
                    try pipeline.addHandler(H2FrameFastPath(fastPath, sendTimeout: TimeAmount(limits.sendTimeout)))
                }
                let (streams, continuation) = AsyncStream<Stream>.makeStream()
                try pipeline.addHandler(HTTP2StreamMultiplexer(mode: .server, channel: channel) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        let pipeline = stream.pipeline.syncOperations
                        try pipeline.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                        try pipeline.addHandler(H2SendTimeout(timeout: TimeAmount(limits.sendTimeout)))
                        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: limits.idleTimeout, logger: logger))
                        continuation.yield(try Stream(wrappingChannelSynchronously: stream))
                    }
                })
                try pipeline.addHandler(H2ConnectionErrorHandler(deadline: TimeAmount(limits.sendTimeout) + .seconds(2)))
                channel.closeFuture.whenComplete { _ in continuation.finish() }
                return streams
            }
        }
        .map { Value(negotiated: $0, channel: channel) }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection):
                await handleHTTP(asyncChannel: connection, logger: logger)
            case .http2(let streams):
                await withDiscardingTaskGroup { group in
                    for await stream in streams {
                        group.addTask { await handleHTTP(asyncChannel: stream, logger: logger) }
                    }
                }
            }
        } catch {
            logger.debug("TLS connection ended: \(error)")
        }
    }
}

/// A TLS connection beyond `--max-connections`, closed before its handshake.
struct ConnectionRefused: Error {}
