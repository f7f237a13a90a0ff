import Pipeline
import Testing

/// Which network inputs are taken up again, and how (`serve`'s reconnect rules).
@Suite struct InputReconnectTests {
    @Test func listenersAndCallers() {
        #expect(InputKind("srt://0.0.0.0:9000?mode=listener").reconnect == .listen)
        #expect(InputKind("srt://10.0.0.5:9000?latency=200000").reconnect == .call)
        #expect(InputKind("rtmp://0.0.0.0:1935/live/cam?listen").reconnect == .listen)
        #expect(InputKind("rtmp://example.com/live/cam").reconnect == .call)
        #expect(InputKind("udp://239.0.0.1:5000").reconnect == .listen)
        #expect(InputKind("rtsp://10.0.0.5/stream").reconnect == .call)
        #expect(InputKind("https://example.com/live/index.m3u8").reconnect == .call)
        #expect(InputKind("movie.mp4").reconnect == nil)
        #expect(InputKind("-").reconnect == nil)
        #expect(InputKind("/dev/video0").reconnect == nil)
    }

    @Test func rtmpListenModeIsAnOptionNotPartOfTheKey() {
        let a = InputKind.demuxerInput("rtmp://0.0.0.0:1935/live/cam?listen")
        #expect(a.url == "rtmp://0.0.0.0:1935/live/cam" && a.options == ["listen": "1"])
        let b = InputKind.demuxerInput("rtmp://0.0.0.0:1935/live/cam?listen=1&x=y")
        #expect(b.url == "rtmp://0.0.0.0:1935/live/cam?x=y" && b.options == ["listen": "1"])
        let c = InputKind.demuxerInput("srt://0.0.0.0:9000?mode=listener")
        #expect(c.url == "srt://0.0.0.0:9000?mode=listener" && c.options.isEmpty)
    }
}
