import NIOCore
import NIOEmbedded
import Testing
@testable import Origin

/// `TLSRecordCoalescer` on an `EmbeddedChannel`: what reaches the TLS handler (here the channel's outbound side) for
/// the writes of one flush.
@Suite struct TLSRecordCoalescerTests {
    static func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: TLSRecordCoalescer())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static func bytes(_ count: Int, _ value: UInt8) -> ByteBuffer { ByteBuffer(repeating: value, count: count) }

    static func written(_ channel: EmbeddedChannel) throws -> [ByteBuffer] {
        var out: [ByteBuffer] = []
        while let b = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = b else { Issue.record("a file region"); continue }
            out.append(buffer)
        }
        return out
    }

    @Test func smallWritesOfOneFlushLeaveAsOneBuffer() throws {
        let channel = try Self.channel()
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        let done = Counter()
        for p in promises { p.futureResult.assumeIsolated().whenSuccess { done.value += 1 } }
        channel.write(IOData.byteBuffer(Self.bytes(9, 1)), promise: nil)            // a HEADERS frame's header
        channel.write(IOData.byteBuffer(Self.bytes(100, 2)), promise: promises[0])
        channel.write(IOData.byteBuffer(Self.bytes(9, 3)), promise: promises[1])    // a DATA frame's header
        channel.write(IOData.byteBuffer(Self.bytes(1016, 4)), promise: promises[2]) // a playlist
        #expect(try Self.written(channel).isEmpty, "nothing before the flush")
        channel.flush()
        let out = try Self.written(channel)
        #expect(out.count == 1)
        #expect(out.first.map { Array($0.readableBytesView) } ==
                [UInt8](repeating: 1, count: 9) + [UInt8](repeating: 2, count: 100) + [UInt8](repeating: 3, count: 9)
                + [UInt8](repeating: 4, count: 1016))
        #expect(done.value == 3, "every gathered write's promise completes with the write that carried it")
    }

    @Test func aLargeWriteGoesByItselfInOrder() throws {
        let channel = try Self.channel()
        channel.write(IOData.byteBuffer(Self.bytes(9, 1)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(20, 2)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(TLSRecordCoalescer.smallWrite + 1, 3)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(9, 4)), promise: nil)
        channel.flush()
        let out = try Self.written(channel)
        #expect(out.map(\.readableBytes) == [29, TLSRecordCoalescer.smallWrite + 1, 9])
        #expect(out.map { $0.readableBytesView.first } == [1, 3, 4])
    }

    @Test func gatheringStopsAtARecordsPlaintext() throws {
        let channel = try Self.channel()
        for i in 0..<5 { channel.write(IOData.byteBuffer(Self.bytes(4000, UInt8(i))), promise: nil) }
        channel.flush()
        let out = try Self.written(channel)
        #expect(out.map(\.readableBytes) == [16_000, 4000])
        #expect(out.allSatisfy { $0.readableBytes <= TLSRecordCoalescer.recordBytes })
    }

    @Test func aLoneWriteIsNotCopied() throws {
        let channel = try Self.channel()
        let buffer = Self.bytes(300, 7)
        let address = buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        channel.writeAndFlush(IOData.byteBuffer(buffer), promise: nil)
        let out = try Self.written(channel)
        #expect(out.count == 1)
        #expect(out.first?.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == address)
    }

    @Test func gatheredWritesGoOutBeforeAClose() throws {
        let channel = try Self.channel()
        let recorder = Recorder()
        try channel.pipeline.syncOperations.addHandler(recorder, position: .first)
        channel.write(IOData.byteBuffer(Self.bytes(10, 1)), promise: nil)
        channel.write(IOData.byteBuffer(Self.bytes(10, 2)), promise: nil)
        #expect(recorder.writes.isEmpty)
        _ = channel.close(mode: .all)
        #expect(recorder.writes == [20], "written (not dropped) ahead of the close, as NIOSSL's shutdown expects")
    }
}

private final class Counter { var value = 0 }

/// Records the sizes of the writes that pass it.
private final class Recorder: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    var writes: [Int] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        writes.append(unwrapOutboundIn(data).readableBytes)
        context.write(data, promise: promise)
    }
}
