import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing
@testable import Origin

/// The TLS port's own handlers (`H2SendTimeout`, `LingeringClose`) on an `EmbeddedChannel` with its clock advanced by
/// hand, and the HTTP/2 handler's configuration. The attacks themselves run against the real binary in
/// `Tests/e2e/test_h2_attacks.py`.
@Suite struct H2ConnectionLimitsTests {
    // MARK: H2SendTimeout

    static func stream(timeout: TimeAmount = .seconds(3)) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: H2SendTimeout(timeout: timeout))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func writable(_ channel: EmbeddedChannel, _ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }

    @Test func aStreamThatCannotSendForTheSendTimeoutIsClosed() throws {
        let channel = try Self.stream()
        Self.writable(channel, false)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2900))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(!channel.isActive)
    }

    @Test func aStreamThatMovesAgainIsTimedFromItsLastStall() throws {
        let channel = try Self.stream()
        Self.writable(channel, false)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        Self.writable(channel, true)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        Self.writable(channel, false)  // stalled again at t=4: the deadline is t=7, not t=3
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func aStreamThatNeverStallsIsNeverTimed() throws {
        let channel = try Self.stream()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    // MARK: LingeringClose

    /// Stands for the socket: records a half-close (EmbeddedChannel itself closes whole on any close).
    final class SocketDouble: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var outputClosed = false
        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            if mode == .output {
                outputClosed = true
                promise?.succeed(())
            } else {
                context.close(mode: mode, promise: promise)
            }
        }
    }

    final class Reads: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var count = 0
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { count += 1 }
    }

    static func lingering() throws -> (EmbeddedChannel, SocketDouble, Reads) {
        let socket = SocketDouble(), reads = Reads()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([socket, LingeringClose(linger: .seconds(1)), reads])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, socket, reads)
    }

    @Test func aClosedConnectionHalfClosesAndDropsInputUntilTheLingerEnds() throws {
        let (channel, socket, reads) = try Self.lingering()
        try channel.writeInbound(ByteBuffer(string: "request"))
        #expect(reads.count == 1)
        let closed = channel.close()
        #expect(socket.outputClosed && channel.isActive)
        try channel.writeInbound(ByteBuffer(string: "more frames the client sent before it saw the GOAWAY"))
        #expect(reads.count == 1)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
        try closed.wait()
    }

    @Test func theClientsOwnCloseEndsTheLingerAtOnce() throws {
        let (channel, _, _) = try Self.lingering()
        let closed = channel.close()
        #expect(channel.isActive)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!channel.isActive)
        try closed.wait()
    }

    @Test func aGracefulShutdownClosesWithoutLingering() throws {
        let (channel, socket, _) = try Self.lingering()
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        let closed = channel.close()
        #expect(!socket.outputClosed && !channel.isActive)
        try closed.wait()
    }

    // MARK: The HTTP/2 handler's limits

    @Test func theHTTP2HandlerGetsTheOriginsLimits() {
        var limits = ConnectionLimits()
        limits.maxHeaderBytes = 8192
        limits.maxStreamResets = 20
        let configuration = OriginTLSChannel.http2Configuration(limits)
        let settings = configuration.connection.initialSettings.map { ($0.parameter, $0.value) }
        #expect(settings.contains { $0 == (.maxHeaderListSize, 8192) })
        #expect(settings.contains { $0 == (.maxConcurrentStreams, 100) })
        #expect(configuration.stream.streamResetFrameRateLimit.maximumCount == 20)
        #expect(configuration.connection.maximumSequentialContinuationFrames == 5)
        #expect(configuration.connection.controlFrameRateLimit.maximumCount == 50)
    }
}
