"""Network ingest through libavformat (issue 11 §2): an SRT listener, an RTMP listener, UDP MPEG-TS and RTSP pull
(TCP and UDP transport, from GStreamer's gst-rtsp-server started here), each checked strictly while it plays and
read by ffmpeg; and publishers that go away and come back. About 3 minutes.

The rules checked across an outage:
- "While nothing arrives, the playlist stays valid and viewers get the last window, not errors" (the issue): every
  reload during the outage is 200 with the same EXT-X-TARGETDURATION, no EXT-X-ENDLIST, and its segments load.
- The stream continues with the next media sequence number and one EXT-X-DISCONTINUITY: RFC 8216 §4.3.2.3 requires
  the tag for "a change in ... timestamp sequence" (a new encoder session), and §6.2.1: "The server MUST NOT
  change the Media Sequence Number of a URI" (segment numbers continue, none is reused).
- EXT-X-DISCONTINUITY-SEQUENCE counts discontinuities that left the window (§4.3.3.3), checked on the final
  window.
"""
import os
import re
import signal
import subprocess
import time
import concurrent.futures

import pytest

from hlsharness import chromium, clients, http, livecheck, m3u8
from hlsharness.procs import free_port, stop_process
from hlsharness.testenv import need, need_chromium

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"  # PyGObject (python3-gi) is Debian's, not the virtualenv's


def publisher(url, fmt, seconds=None, extra=()):
    """ffmpeg sending a live 640x360 30 fps H.264 (a keyframe each second) + AAC test source at real time. x264's
    ultrafast preset: a publisher starved of CPU by the tests beside it falls behind real time, and the origin then
    re-dates its segments (a PROGRAM-DATE-TIME step of 6.35 s in a CI run with three workers, 2026-11-28).
    `extra`: output options before the format (`-listen 1`, `-output_ts_offset`)."""
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
           "testsrc2=size=640x360:rate=30", "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
           "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p",
           "-c:a", "aac", "-ac", "2"]
    if seconds:
        cmd += ["-t", str(seconds)]
    cmd += [*extra, "-f", fmt, url]
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)


def publish_when_listening(url, fmt, seconds=None, timeout=20):
    """Starts the publisher once the origin listens: a publisher that finds no listener exits (RTMP at once, an SRT
    caller after its 3-s connection timeout) and is started again (the origin listens a moment after its HTTP
    server, and again only once it has noticed that the previous publisher is gone: SRT's 5-s peer idle timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        p = publisher(url, fmt, seconds)
        try:
            p.wait(timeout=4)
        except subprocess.TimeoutExpired:
            return p
        if time.monotonic() > deadline:
            raise AssertionError(f"the publisher to {url} keeps failing: {p.stderr.read().decode()[-1000:]}")
        time.sleep(0.3)


def media(s):
    r = http.get(s.url("/stream.m3u8"), timeout=3)
    assert r.status == 200, f"stream.m3u8: {r.status} {r.error}"
    return m3u8.parse_media(r.text)


def wait_for_segments(s, n, timeout=30):
    """Waits until the playlist lists segment number >= n (counting from its media sequence)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert s.proc.poll() is None, f"origin exited: {s.stderr()[-2000:]}"
        r = http.get(s.url("/stream.m3u8"), timeout=3)
        if r.status == 200:
            pl = m3u8.parse_media(r.text)
            if pl.segments and pl.segments[-1].seq >= n:
                return pl
        time.sleep(0.25)
    raise AssertionError(f"no segment {n} within {timeout}s; stderr:\n{s.stderr()[-2000:]}")


def check_outage(s, seconds, before):
    """Reloads during an outage: valid, same header, not ended, listed segments load (the viewers' last window)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pl = media(s)
        assert pl.target_duration == before.target_duration and not pl.endlist
        assert pl.segments, "the window emptied during the outage"
        assert http.get(s.url("/" + pl.segments[-1].uri), timeout=3).status == 200
        time.sleep(0.5)


def check_continued(pl, first_seq, discontinuities=1):
    """The window after a reconnect: numbers continue without a gap or reuse, `discontinuities` new
    EXT-X-DISCONTINUITY tags, and the first segment after each starts with a keyframe-decodable init (checked by
    the strict checker separately)."""
    seqs = [seg.seq for seg in pl.segments]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    nums = [int(re.search(r"(\d+)\.m4s$", seg.uri).group(1)) for seg in pl.segments]
    assert nums == seqs, "segment URIs follow the media sequence numbers"
    assert seqs[0] <= first_seq, f"the window no longer reaches back to segment {first_seq}; use a larger --window"
    found = [seg.seq for seg in pl.segments if seg.discontinuity]
    assert len(found) == discontinuities, f"EXT-X-DISCONTINUITY before segments {found}"
    return found


@pytest.fixture
def srt_origin(start_origin):
    need("ffmpeg")
    port = free_port()
    url = f"srt://127.0.0.1:{port}?mode=listener"
    s = start_origin(url, "--window", "30", "--log-level", "info", wait=False)
    return s, f"srt://127.0.0.1:{port}"


def test_srt_listener_publisher_restart_plays_on(srt_origin):
    """ffmpeg publishes over SRT to our listener; hls.js, ffmpeg and the strict checker play it; the publisher is
    killed (SIGKILL) and another one connects 4 s later: the stream goes on with one discontinuity, the window is
    served throughout, and hls.js plays across the reconnect without a fatal error."""
    s, target = srt_origin
    pub = publish_when_listening(target, "mpegts")
    pub2 = None
    try:
        wait_for_segments(s, 2)
        with concurrent.futures.ThreadPoolExecutor(3) as ex:
            ch = ex.submit(chromium.chromium_play, s.url("/"), 24) if chromium.chromium_binary() else None
            strict = ex.submit(livecheck.check_live_playlist, s.base_url, 6)
            ff = ex.submit(clients.ffmpeg_read, s.url("/index.m3u8"), 4)
            strict, ff = strict.result(), ff.result()
            print(strict.summary())
            assert strict.errors == []
            assert ff.ok, str(ff)
            before = media(s)
            last_before = before.segments[-1].seq
            pub.send_signal(signal.SIGKILL)
            pub.wait()
            check_outage(s, 4, before)
            pub2 = publish_when_listening(target, "mpegts")
            after = wait_for_segments(s, last_before + 4)
            res = ch.result() if ch else None
        strict2 = livecheck.check_live_playlist(s.base_url, 5)
        print(strict2.summary())
        assert strict2.errors == []
        found = check_continued(media(s), last_before)
        assert found[0] > last_before - 1
        err = s.stderr()
        assert "publisher disconnected" in err and "publisher connected" in err
        if res is None:
            need_chromium()
        else:
            print(chromium.summary(res))
            # The outage itself is a stall (SRT notices a killed peer after its 5-s idle timeout, then nothing plays
            # until the new publisher's first segment): hls.js reports it as bufferStalledError. Anything else it
            # reports as bad (an append or parsing error at the discontinuity), a fatal error, or a gap in the
            # buffered ranges fails the test.
            # A publisher killed mid-stream loses the tail of its audio (MPEG-TS carries audio in PES packets of
            # several frames), so the last segment before the discontinuity has less audio than video and the
            # buffered range (audio and video both) shows a gap of up to 0.5 s there, which hls.js jumps; the
            # strict checker allows the same gap (segcheck). Any other gap fails.
            problems = [p for p in chromium.playback_problems(res, max_dropped=0.03, min_advance=0.5)
                        if "screenshot" not in p and not p.startswith("hls.js errors")
                        and not p.startswith("buffered ranges have gaps")]
            assert problems == []
            for _, ranges in res.get("buffered_gaps") or []:
                gaps = [b[0] - a[1] for a, b in zip(ranges, ranges[1:])]
                assert len(gaps) <= 1 and all(0 < g < 0.5 for g in gaps), f"buffered ranges {ranges}"
            assert [e for e in res["bad_errors"] if e.get("details") != "bufferStalledError"] == []
            last = res["samples"][-1]
            assert last.get("t", 0) > 14, f"hls.js did not play on after the reconnect: {chromium.summary(res)}"
    finally:
        stop_process(pub)
        if pub2:
            stop_process(pub2)


def test_srt_no_reconnect_ends_the_stream(start_origin):
    """`--no-reconnect`: the publisher's end is the stream's end (EXT-X-ENDLIST), and the server keeps serving it."""
    need("ffmpeg")
    port = free_port()
    s = start_origin(f"srt://127.0.0.1:{port}?mode=listener", "--no-reconnect", wait=False)
    pub = publish_when_listening(f"srt://127.0.0.1:{port}", "mpegts", seconds=6)
    try:
        pub.wait(timeout=30)
        ended = livecheck.wait_for_endlist(s.base_url, 15, proc=s.proc)
        assert ended is not None, s.stderr()[-2000:]
        assert s.proc.poll() is None
        snap = livecheck.check_http_snapshot(s.base_url)
        assert snap.errors == []
    finally:
        stop_process(pub)


def test_rtmp_listener_and_a_second_publisher(start_origin):
    """`rtmp://127.0.0.1:P/live/cam?listen`: ffmpeg publishes FLV, the strict checker and ffmpeg read it; the
    publisher ends and a second one publishes: one discontinuity, numbers continue."""
    need("ffmpeg")
    port = free_port()
    s = start_origin(f"rtmp://127.0.0.1:{port}/live/cam?listen", "--window", "30", wait=False)
    pub = publish_when_listening(f"rtmp://127.0.0.1:{port}/live/cam", "flv", seconds=7)
    pub2 = None
    try:
        wait_for_segments(s, 1)
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            strict = ex.submit(livecheck.check_live_playlist, s.base_url, 4)
            ff = ex.submit(clients.ffmpeg_read, s.url("/index.m3u8"), 3)
            strict, ff = strict.result(), ff.result()
        assert strict.errors == [], strict.summary()
        assert ff.ok, str(ff)
        pub.wait(timeout=30)
        last_before = media(s).segments[-1].seq
        pub2 = publish_when_listening(f"rtmp://127.0.0.1:{port}/live/cam", "flv")
        wait_for_segments(s, last_before + 3)
        strict2 = livecheck.check_live_playlist(s.base_url, 4)
        assert strict2.errors == [], strict2.summary()
        check_continued(media(s), last_before)
    finally:
        stop_process(pub)
        if pub2:
            stop_process(pub2)


def test_udp_mpegts_and_an_encoder_restart(start_origin):
    """UDP MPEG-TS (`udp://127.0.0.1:P`): a UDP input never ends, so a restarted encoder shows up as timestamps
    that start over; it becomes one discontinuity, not a broken tfdt or a long segment."""
    need("ffmpeg")
    port = free_port()
    s = start_origin(f"udp://127.0.0.1:{port}", "--window", "30", wait=False)
    dest = f"udp://127.0.0.1:{port}?pkt_size=1316"
    pub = publisher(dest, "mpegts")
    pub2 = None
    try:
        wait_for_segments(s, 2)
        strict = livecheck.check_live_playlist(s.base_url, 5)
        assert strict.errors == [], strict.summary()
        ff = clients.ffmpeg_read(s.url("/index.m3u8"), 3)
        assert ff.ok, str(ff)
        stop_process(pub)
        before = media(s)
        last_before = before.segments[-1].seq
        check_outage(s, 3, before)
        pub2 = publisher(dest, "mpegts")
        wait_for_segments(s, last_before + 3)
        strict2 = livecheck.check_live_playlist(s.base_url, 4)
        assert strict2.errors == [], strict2.summary()
        pl = media(s)
        check_continued(pl, last_before)
        assert max(seg.duration for seg in pl.segments) <= pl.target_duration + 0.5
    finally:
        stop_process(pub)
        if pub2:
            stop_process(pub2)


# 2^33 / 90 kHz = 95,443.7 s: a publisher starting at 95,440 s wraps its 33-bit MPEG-TS timestamps 3.7 s in (26.5 h).
PTS_WRAP_OFFSET = "95440"


@pytest.mark.parametrize("case", ["srt-caller", "rtmp-caller", "rtp-pts-wrap", "udp-multicast"])
def test_callers_and_rtp_across_the_33_bit_wrap(start_origin, case):
    """The origin as the caller: it pulls SRT from an ffmpeg listener and RTMP from ffmpeg's RTMP server
    (`-listen 1`); RTP MPEG-TS (`rtp://`) whose timestamps start 3.7 s before the 33-bit wrap; and UDP multicast
    (group 239.255.x.y on the loopback interface, TTL 0: nothing leaves the machine). Each is checked
    strictly over its first 6 segments: no EXT-X-DISCONTINUITY (the wrap is not a jump, RFC 8216 §4.3.2.3 asks for
    one only for a change "in ... timestamp sequence"), no segment over the target duration, tfdt continuous."""
    need("ffmpeg")
    port = free_port()
    if case == "srt-caller":
        pub = publisher(f"srt://127.0.0.1:{port}?mode=listener", "mpegts")
        source = f"srt://127.0.0.1:{port}"
    elif case == "rtmp-caller":
        pub = publisher(f"rtmp://127.0.0.1:{port}/live/cam", "flv", extra=("-listen", "1"))
        source = f"rtmp://127.0.0.1:{port}/live/cam"
    elif case == "rtp-pts-wrap":
        pub = publisher(f"rtp://127.0.0.1:{port}", "rtp_mpegts", extra=("-output_ts_offset", PTS_WRAP_OFFSET))
        source = f"rtp://127.0.0.1:{port}"
    else:
        group = f"239.255.{port // 256 % 256}.{port % 256}:{port}"
        source = f"udp://{group}?localaddr=127.0.0.1"
        pub = publisher(f"udp://{group}?localaddr=127.0.0.1&ttl=0&pkt_size=1316", "mpegts")
    try:
        time.sleep(0.5)
        s = start_origin(source, "--window", "20", wait=False)
        wait_for_segments(s, 5)
        # The strict checker downloads every listed segment (from the first: the window holds 20) and checks tfdt
        # continuity from one to the next, across the wrap.
        strict = livecheck.check_live_playlist(s.base_url, 3)
        assert strict.errors == [], strict.summary()
        pl = media(s)
        assert pl.media_sequence == 0 and not [seg.seq for seg in pl.segments if seg.discontinuity], case
        assert max(seg.duration for seg in pl.segments) <= pl.target_duration + 0.5 and pl.target_duration == 1
    finally:
        stop_process(pub)


class RTSPServer:
    """Tests/e2e/hlsharness/rtsp_server.py (gst-rtsp-server) on a free loopback port."""

    def __init__(self, port=None):
        self.port = port or free_port()
        self.proc = None

    @property
    def url(self):
        return f"rtsp://127.0.0.1:{self.port}/test"

    def start(self):
        self.proc = subprocess.Popen([SYSTEM_PYTHON, os.path.join(HERE, "hlsharness", "rtsp_server.py"),
                                      str(self.port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("rtsp://"):
            raise RuntimeError(f"rtsp_server.py did not start: {self.proc.stderr.read().decode()[-1500:]}")
        return self

    def stop(self):
        if self.proc:
            stop_process(self.proc, sig=signal.SIGTERM)


def need_rtsp_server():
    need("ffmpeg")
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import gi; gi.require_version('GstRtspServer', '1.0'); "
                            "from gi.repository import GstRtspServer"], capture_output=True)
    if probe.returncode != 0:
        from hlsharness.testenv import missing
        missing("gst-rtsp-server for Python is not installed (gir1.2-gst-rtsp-server-1.0, python3-gi)")


@pytest.mark.parametrize("transport", ["tcp", "udp"])
def test_rtsp_pull(start_origin, transport):
    """RTSP pull (`--input-option rtsp_transport=tcp|udp`) from gst-rtsp-server: strict checks and ffmpeg read."""
    need_rtsp_server()
    server = RTSPServer().start()
    try:
        s = start_origin(server.url, "--input-option", f"rtsp_transport={transport}", wait=False)
        wait_for_segments(s, 2)
        strict = livecheck.check_live_playlist(s.base_url, 5)
        assert strict.errors == [], strict.summary()
        ff = clients.ffmpeg_read(s.url("/index.m3u8"), 3)
        assert ff.ok, str(ff)
    finally:
        server.stop()


def test_rtsp_server_restart_reconnects_with_backoff(start_origin):
    """The RTSP server goes away for 4 s: the origin retries with back-off (1 s, 2 s, …), keeps serving its window
    meanwhile, and continues after one discontinuity once the server is back."""
    need_rtsp_server()
    server = RTSPServer().start()
    try:
        s = start_origin(server.url, "--input-option", "rtsp_transport=tcp", "--window", "30", wait=False)
        wait_for_segments(s, 2)
        server.stop()
        time.sleep(1)
        before = media(s)
        last_before = before.segments[-1].seq
        check_outage(s, 3, before)
        server = RTSPServer(server.port).start()
        wait_for_segments(s, last_before + 3, timeout=40)
        strict = livecheck.check_live_playlist(s.base_url, 4)
        assert strict.errors == [], strict.summary()
        check_continued(media(s), last_before)
        assert "reconnecting to rtsp://" in s.stderr()
    finally:
        server.stop()


def test_hls_pull_and_upstream_restart(start_origin, origin_bin):
    """HLS pull: `serve http://upstream/index.m3u8` re-serves another origin's live stream (libavformat's HLS
    demuxer); the upstream is stopped for 4 s and started again on the same port: the window is served meanwhile,
    the pull reconnects with back-off and continues after one discontinuity."""
    need("ffmpeg")
    from hlsharness.procs import OriginServer
    port = free_port()
    args = ["--test-pattern-size", "640x360", "--quiet"]
    upstream = OriginServer(origin_bin, args, port=port).start()
    try:
        upstream.wait_ready()
        time.sleep(4)   # past the upstream's first (one-part) segment: the pull starts 3 segments from the live edge
        s = start_origin(f"http://127.0.0.1:{port}/index.m3u8", "--window", "30", wait=False)
        wait_for_segments(s, 2)
        strict = livecheck.check_live_playlist(s.base_url, 5)
        assert strict.errors == [], strict.summary()
        ff = clients.ffmpeg_read(s.url("/index.m3u8"), 3)
        assert ff.ok, str(ff)
        upstream.stop()
        time.sleep(1)
        before = media(s)
        last_before = before.segments[-1].seq
        check_outage(s, 3, before)
        upstream = OriginServer(origin_bin, args, port=port).start()
        upstream.wait_ready()
        wait_for_segments(s, last_before + 3, timeout=40)
        strict2 = livecheck.check_live_playlist(s.base_url, 4)
        assert strict2.errors == [], strict2.summary()
        check_continued(media(s), last_before)
        assert "reconnecting to http://" in s.stderr()
    finally:
        upstream.stop()
