"""Redundant origins (issue 10 §5): two origins fed the same MPEG-TS input (UDP multicast on loopback), started 3 s
apart with `--epoch-from-input`, serve byte-identical init segments, segments, parts and media playlists: the same
names, media sequence numbers, EXT-X-PROGRAM-DATE-TIME and tfdt, all taken from the input's clock. Behind the shipped
nginx edge with both as upstreams, one origin is killed mid-playback and hls.js plays on. About 60 seconds.

The publisher stamps its capture clock as an epoch-locked encoder does: MPEG-TS timestamps are UTC modulo 2^33 ticks of
90 kHz (`-output_ts_offset`), with a keyframe every second (the segment duration)."""
import concurrent.futures
import hashlib
import os
import signal
import subprocess
import time

import pytest

from hlsharness import chromium, http, m3u8, procs
from hlsharness.procs import OriginServer, free_port, stop_process
from hlsharness.testenv import need, need_chromium

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPEGTS_WRAP_S = 2 ** 33 / 90000
WINDOW = 22
# The failover test's window: it waits for B's window to fill before playing, and needs no 20 common segments.
PLAY_WINDOW = 8


def epoch_publisher(group):
    """ffmpeg sending 640x360 25 fps H.264 (a keyframe each second, no B-frames) + AAC to a multicast group, its
    timestamps the UTC clock modulo the 33-bit wrap."""
    offset = time.time() % MPEGTS_WRAP_S
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i",
           "testsrc2=size=640x360:rate=25", "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
           "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "25", "-keyint_min", "25",
           "-sc_threshold", "0", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2",
           "-output_ts_offset", f"{offset:.3f}", "-muxdelay", "0", "-muxpreload", "0",
           "-f", "mpegts", f"udp://{group}?localaddr=127.0.0.1&ttl=0&pkt_size=1316"]
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def two_origins(origin_bin, request):
    need("ffmpeg")
    window = getattr(request, "param", WINDOW)
    port = free_port()
    group = f"239.255.{port // 256 % 256}.{port % 256}:{port}"
    pub = epoch_publisher(group)
    # REDUNDANT_TEST_FLAGS="" runs the origins without epoch locking: both tests then fail (checked).
    flags = os.environ.get("REDUNDANT_TEST_FLAGS", "--epoch-from-input").split()
    args = [f"udp://{group}?localaddr=127.0.0.1", *flags, "--window", str(window), "--log-level", "debug", "--quiet"]
    a = OriginServer(origin_bin, args)
    b = OriginServer(origin_bin, args)
    try:
        time.sleep(0.5)
        a.start()
        a.wait_ready(20)
        time.sleep(3)
        b.start()
        b.wait_ready(20)
        a.window = b.window = window
        yield a, b
    finally:
        for o, label in ((a, "origin A"), (b, "origin B")):
            if o.proc is not None:
                rc = o.stop()
                print(f"\n--- {label} exit {rc}; stderr tail:\n{o.stderr()[-1500:]}")
        stop_process(pub)


def media(origin, query=""):
    r = http.get(origin.url("/stream.m3u8") + query, timeout=15)
    assert r.status == 200, (origin.port, query, r.status, r.body[:200])
    return r


def both(a, b, path, timeout=15):
    """GET path from both origins at the same time."""
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        fa, fb = ex.submit(http.get, a.url(path), timeout), ex.submit(http.get, b.url(path), timeout)
        return fa.result(), fb.result()


def wait_for_b_window(a, b, same_start=False):
    """Until B's window is (nearly) full, or with same_start until B's playlist starts where A's does. B's first
    segments are where it joined A's stream mid-flight, and until its window is full its playlists start later than
    A's: a delta update from A then skips segments that a player's last playlist, from B, never listed, and hls.js
    1.6 stops loading after a few of those (docs/delivery.md: put a new origin in rotation once its window is full)."""
    deadline = time.monotonic() + 45
    while True:
        pb = m3u8.parse_media(media(b).text)
        if len(pb.segments) >= b.window - 2 and (not same_start or pb.media_sequence == m3u8.parse_media(media(a).text).media_sequence):
            return
        assert time.monotonic() < deadline, "origin B never listed enough segments"
        time.sleep(0.5)


def test_two_origins_started_3_s_apart_serve_the_same_bytes(two_origins):
    a, b = two_origins
    wait_for_b_window(a, b)
    pa, pb = m3u8.parse_media(media(a).text), m3u8.parse_media(media(b).text)
    b_first = pb.segments[0].seq
    common = sorted({s.seq for s in pa.segments} & {s.seq for s in pb.segments})
    assert len(common) >= 20, (len(common), pa.media_sequence, pb.media_sequence)
    # The numbering is the input clock's: a segment's number is its second since 1970 (1-s segments), not a
    # count from when either process started, and its EXT-X-PROGRAM-DATE-TIME is that second on the input clock.
    last = pb.segments[-1]
    assert abs(last.seq - time.time()) < 15, (last.seq, time.time())
    assert abs((last.pdt or last.pdt_computed) - last.seq) < 1.0, (last.pdt, last.seq)

    r_a, r_b = both(a, b, "/init.mp4")
    assert r_a.status == r_b.status == 200 and r_a.body == r_b.body, "init segments differ"
    compared = 0
    for seq in common:
        r_a, r_b = both(a, b, f"/seg{seq}.m4s")
        assert r_a.status == r_b.status == 200, (seq, r_a.status, r_b.status)
        assert r_a.body == r_b.body, (f"segment {seq} differs ({len(r_a.body)} vs {len(r_b.body)} bytes; "
                                      f"B's first segment is {b_first})")
        assert r_a.headers.get("etag") == r_b.headers.get("etag"), seq
        compared += 1
    # Parts listed now (the newest segments' and the one in progress).
    pa, pb = m3u8.parse_media(media(a).text), m3u8.parse_media(media(b).text)
    part_uris = sorted({p["URI"] for p in pa.parts} & {p["URI"] for p in pb.parts})
    assert len(part_uris) >= 6, part_uris
    for uri in part_uris:
        r_a, r_b = both(a, b, "/" + uri)
        assert r_a.status == r_b.status == 200 and r_a.body == r_b.body, f"part {uri} differs"
    # Media playlists: once B's window is full too, the answer to the same delivery directive (RFC 8216bis
    # §6.2.5.2), blocking until the part exists on each origin, is the same bytes, full and as a delta update.
    deadline = time.monotonic() + 15
    while len(pb.segments) < WINDOW:
        assert time.monotonic() < deadline, "origin B's window never filled"
        time.sleep(0.5)
        pb = m3u8.parse_media(media(b).text)
    playlists = 0
    nxt = pb.media_sequence + len(pb.segments)
    for msn in (nxt + 1, nxt + 2):
        for part in (0, 1, 2):
            for skip in ("", "&_HLS_skip=YES"):
                query = f"?_HLS_msn={msn}&_HLS_part={part}{skip}"
                r_a, r_b = both(a, b, "/stream.m3u8" + query)
                assert r_a.status == r_b.status == 200, (query, r_a.status, r_b.status)
                assert r_a.body == r_b.body, f"playlists for {query} differ:\n{r_a.text}\n---\n{r_b.text}"
                playlists += 1
    print(f"identical: init, {compared} segments (from {common[0]}, B's first {b_first}), "
          f"{len(part_uris)} parts, {playlists} playlists")


@pytest.mark.parametrize("two_origins", [PLAY_WINDOW], indirect=True, ids=["window8"])
def test_an_edge_fails_over_between_them_mid_playback(two_origins):
    """Both origins behind one nginx edge (scripts/edge with two --origin: round robin, proxy_next_upstream):
    hls.js plays from a mix of the two, origin A is killed about 8 s into playback, and playback goes on without a fatal error,
    a stall or a gap in the buffer (the timelines are the same, so no discontinuity either)."""
    need("nginx")
    need_chromium()
    a, b = two_origins
    wait_for_b_window(a, b, same_start=True)
    port = free_port()
    d = os.path.join(a.workdir, "edge")
    edge = subprocess.Popen([os.path.join(REPO, "scripts", "edge"), "--origin", f"127.0.0.1:{a.port}",
                             "--origin", f"127.0.0.1:{b.port}", "--listen", f"127.0.0.1:{port}", "--dir", d],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"

    def media_requests(o):
        return sum(1 for ln in o.stderr().splitlines() if " request" in ln and ".m4s " in ln)
    before = {o.port: media_requests(o) for o in (a, b)}
    try:
        assert http.wait_for_200(base + "/stream.m3u8", 10, proc=edge) is not None, edge.stderr.read().decode()
        with concurrent.futures.ThreadPoolExecutor(1) as ex:
            play = ex.submit(chromium.chromium_play, base + "/", 20, screenshots=False)
            time.sleep(10)
            served = {o.port: media_requests(o) - before[o.port] for o in (a, b)}
            a.proc.send_signal(signal.SIGKILL)
            a.proc.wait(5)
            killed_at = time.monotonic()
            res = play.result(timeout=90)
        print(chromium.summary(res), "media requests before the kill:", served)
        # Both origins fed the player before the kill: nginx spread the requests over them.
        assert all(n > 0 for n in served.values()), served
        problems = chromium.playback_problems(res, max_dropped=0.1, require_screens=False)
        assert problems == [], "\n".join(problems)
        after = [s for s in res["samples"] if s["mono"] > killed_at + 1 and s.get("t")]
        assert len(after) >= 10 and after[-1]["t"] - after[0]["t"] > 0.8 * (after[-1]["mono"] - after[0]["mono"]), \
            "playback did not go on after origin A was killed"
    finally:
        procs.stop_process(edge, sig=15)
        try:
            print("\n--- edge error.log tail:\n" + open(os.path.join(d, "error.log")).read()[-1000:])
        except OSError:
            pass


def test_epoch_locking_refuses_an_input_without_a_clock(origin_bin, tmp_path):
    """A file or the test pattern starts its timestamps at zero: `--epoch-from-input` is one error line, exit 64."""
    movie = tmp_path / "a.mp4"
    movie.write_bytes(b"\0" * 16)
    for args in ([], [str(movie)]):
        p = subprocess.run([origin_bin, "serve", *args, "--epoch-from-input", "--port", "0"], capture_output=True,
                           text=True, timeout=20)
        assert p.returncode == 64, (args, p.returncode, p.stderr)
        assert "--epoch-from-input takes the timeline from a live input's clock" in p.stderr, p.stderr
