"""Several streams in one process (issue 11 §1): `serve cam1=srt://...?mode=listener movie=clip.mp4
clock=testpattern: --loop` serves each under /NAME/, lists them at / and in /streams.json, and one input failing or
coming back does not disturb the others; two play in hls.js at once (the one killed and restarted, and a neighbour)
while the strict checker watches the other two. About 1.5 minutes.

Independence is checked with the strict live checker on the two other streams while the SRT publisher is killed
and restarted: it fails a stream whose playlist goes more than 1.5 target durations without a new segment (RFC
8216 §6.2.1: "the server MUST make a new version of the Playlist file available ... no later than one-and-a-half
times the Target Duration after the previous one"), whose header values change, or whose segments do not load.
"""
import concurrent.futures
import json
import signal
import subprocess
import time

from hlsharness import chromium, clients, http, livecheck, m3u8
from hlsharness.procs import free_port, stop_process
from hlsharness.testenv import need, need_chromium
from test_ingest import publish_when_listening, wait_for_segments


class Named:
    """A view of one named stream of an OriginServer, for helpers that take a server."""

    def __init__(self, server, name):
        self.server, self.name = server, name
        self.proc = server.proc
        self.base_url = f"{server.base_url}/{name}"

    def url(self, path):
        return self.base_url + path

    def stderr(self):
        return self.server.stderr()


def streams_json(s):
    r = http.get(s.url("/streams.json"))
    assert r.status == 200 and r.headers.get("content-type") == "application/json", (r.status, r.headers)
    return {x["name"]: x for x in json.loads(r.text)["streams"]}


def check_thumbnail(s, name):
    """`/NAME/thumbnail.jpg` is a JPEG ffmpeg decodes to 320x180 (the 640x360 stream's display aspect) with the test
    sources' saturated colour bars in it (a picture decoded wrongly, or never decoded, is grey or green)."""
    r = http.get(s.url(f"/{name}/thumbnail.jpg"))
    assert r.status == 200 and r.headers.get("content-type") == "image/jpeg" and r.body[:2] == b"\xff\xd8", (name, r.status)
    p = subprocess.run(["ffmpeg", "-v", "error", "-f", "image2pipe", "-c:v", "mjpeg", "-i", "-", "-f", "rawvideo",
                        "-pix_fmt", "rgb24", "-"], input=r.body, capture_output=True, timeout=20)
    assert p.returncode == 0 and len(p.stdout) == 320 * 180 * 3, (name, p.returncode, len(p.stdout), p.stderr[-300:])
    px = [p.stdout[i:i + 3] for i in range(0, len(p.stdout), 3)]
    saturated = sum(1 for c in px if max(c) - min(c) > 100)
    luma = sum(0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] for c in px) / len(px)
    assert saturated > len(px) * 0.05 and 20 < luma < 235, (name, saturated, luma)


def test_three_streams_one_killed_and_restarted(start_origin, media):
    need("ffmpeg")
    port = free_port()
    # A 40-segment window keeps cam1's discontinuity listed through the plays and checks after it (25 s and more on
    # a loaded machine; CI once saw it leave a 20-segment window just before the check).
    s = start_origin(f"cam1=srt://127.0.0.1:{port}?mode=listener", f"movie={media['clip.mp4']}", "clock=testpattern:",
                     "--loop", "--test-pattern-size", "640x360", "--window", "40", "--log-level", "info", wait=False)
    pub = publish_when_listening(f"srt://127.0.0.1:{port}", "mpegts")
    pub2 = None
    try:
        cam, movie, clock = (Named(s, n) for n in ("cam1", "movie", "clock"))
        for n in (cam, movie, clock):
            wait_for_segments(n, 2)
        # The directory: / lists the three streams with links to their pages; /streams.json describes them.
        page = http.get(s.url("/"))
        assert page.status == 200 and "text/html" in page.headers.get("content-type", "")
        for name in ("cam1", "movie", "clock"):
            assert f'href="/{name}/"' in page.text
        info = streams_json(s)
        assert sorted(info) == ["cam1", "clock", "movie"]
        for name, x in info.items():
            assert x["state"] == "live" and x["playlist"] == f"/{name}/index.m3u8", x
            assert x["renditions"][0]["width"] == 640 and x["renditions"][0]["bandwidth"] > 0, x
        # /cam1 → /cam1/ (the page's relative URLs), and the page and its hls.js are served there.
        r = http.get(s.url("/cam1"))
        assert r.status == 301 and r.headers.get("location") == "/cam1/"
        assert http.get(s.url("/cam1/")).status == 200 and http.get(s.url("/cam1/hls.mjs")).status in (200, 404)

        # The list's thumbnails: each stream's newest keyframe as a JPEG, 320 wide.
        for name in ("cam1", "movie", "clock"):
            assert f'src="/{name}/thumbnail.jpg?v=' in page.text
            assert info[name]["thumbnail"] == f"/{name}/thumbnail.jpg"
            check_thumbnail(s, name)
        first = http.get(s.url("/clock/thumbnail.jpg")).body
        time.sleep(3)
        assert http.get(s.url("/clock/thumbnail.jpg")).body != first, "the thumbnail follows the newest keyframe"

        # cam1 and movie play in hls.js at once (a browser each) while cam1's publisher is killed and another comes
        # back; meanwhile the strict checker watches the other two. (Three browsers, the clock's too, beside the
        # origin's encoder and the SRT publisher's on 2 cores, failed CI twice in five runs on a loaded machine: a
        # starved player's drops and stalls, not the streams'. The clock plays in hls.js in test_live_pattern.)
        if not chromium.chromium_binary():
            need_chromium()
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            plays = {n.name: ex.submit(chromium.chromium_play, n.url("/"), 18) for n in (cam, movie)}
            checks = {n.name: ex.submit(livecheck.check_live_playlist, n.base_url, 14) for n in (movie, clock)}
            time.sleep(6)
            last_before = m3u8.parse_media(http.get(cam.url("/stream.m3u8")).text).segments[-1].seq
            pub.send_signal(signal.SIGKILL)
            pub.wait()
            time.sleep(2)
            pub2 = publish_when_listening(f"srt://127.0.0.1:{port}", "mpegts")
            wait_for_segments(cam, last_before + 1, timeout=30)
            back_at = time.monotonic()
            results = {k: f.result() for k, f in checks.items()}
            played = {k: f.result() for k, f in plays.items()}
        for name, res in results.items():
            print(name, res.summary())
            assert res.errors == [], f"{name} was disturbed by cam1's outage: {res.errors}"
        for name, res in played.items():
            print(name, chromium.summary(res))
            assert list(res["video_size"]) == [640, 360], name
        # Two Chromiums decoding at once beside the origin's encoder and the SRT publisher's, on 2 cores: a frame the
        # starved compositor drops is the machine's, not the stream's (CI saw 19 of 538 once with three). Playback
        # itself must be whole: no stall, currentTime keeping pace, no hls.js error, a picture that moves. The same
        # holds for the frames dropped while hls.js plays at up to 1.5x to reach the live edge (CI saw 30 of 566 once
        # with three, 5.3%). A non-fatal bufferStalledError in the first second of play is not counted (hls.js starts
        # at the live edge with about a second buffered; CI on a slow hour, 2026-11-28, saw one 0.65 s after the first
        # 'playing', with no stall the harness measured and 95% of real time played); any stall still counts in
        # `max_stall_s` and `advance_ratio`.
        assert chromium.playback_problems(played["movie"], max_dropped=0.1, start_stall_grace_s=1.0) == [], "movie"
        # cam1 stalls through its outage (SRT notices the killed peer after its 5-s idle timeout) and plays on once the
        # new publisher's segments come: no fatal error, no error but the stall, and its picture moves after.
        res = played["cam1"]
        problems = [p for p in chromium.playback_problems(res, max_dropped=0.1, min_advance=0.3)
                    if not p.startswith("hls.js errors") and not p.startswith("buffered ranges have gaps")]
        assert problems == [], problems
        assert [e for e in res["bad_errors"] if e.get("details") != "bufferStalledError"] == []
        at_back = [x["t"] for x in res["samples"] if x["mono"] <= back_at and x.get("t") is not None]
        assert at_back and res["samples"][-1]["t"] > max(at_back) + 1.5, "cam1 played on after the reconnect"

        wait_for_segments(cam, last_before + 3, timeout=30)
        pl = m3u8.parse_media(http.get(cam.url("/stream.m3u8")).text)
        assert [seg.seq for seg in pl.segments if seg.discontinuity], "cam1 continues after a discontinuity"
        strict = livecheck.check_live_playlist(cam.base_url, 4)
        # The killed publisher's last segment may hold video frames whose audio died with it (MPEG-TS carries audio
        # in PES packets of several frames): its parts were published as they came, so the segment ends as they did.
        cut = {f"seg{seg.seq - 1}.m4s" for seg in pl.segments if seg.discontinuity}
        other = [e for e in strict.errors if not any(e == f"{c}: no samples for track 2 (soun)" for c in cut)]
        assert other == [], strict.summary()
        assert streams_json(s)["cam1"]["state"] == "live"
        assert "stream=cam1" in s.stderr() and "publisher disconnected" in s.stderr()
        for n in (cam, movie, clock):
            ff = clients.ffmpeg_read(n.url("/index.m3u8"), 2)
            assert ff.ok, f"{n.name}: {ff}"
    finally:
        stop_process(pub)
        if pub2:
            stop_process(pub2)


def test_stream_names_are_checked(origin_bin):
    """Two unnamed inputs, a name given twice, or a reserved name: one clear error line, exit 64 (usage)."""
    for args, words in ((["a.mp4", "b.mp4"], "name each one"), (["x=testpattern:", "x=testpattern:"], "given twice"),
                        (["time=testpattern:", "b=testpattern:"], "cannot name a stream")):
        p = subprocess.run([origin_bin, "serve", *args, "--port", "0"], capture_output=True, text=True, timeout=20)
        assert p.returncode != 0 and words in p.stderr, (args, p.returncode, p.stderr)
        assert len([ln for ln in p.stderr.splitlines() if ln.strip()]) <= 3, p.stderr


CONFIG_TOML = """
[streams.movie]
input = "{clip}"
loop = true
segment_duration = 2

[streams.clock]
input = "testpattern:"
part_duration = 0
window = 4
"""

CONFIG_YAML = """
streams:
  movie: {{ input: "{clip}", loop: true, segment_duration: 2 }}
  clock:
    input: "testpattern:"
    part_duration: 0
    window: 4
"""


def test_config_file_sets_options_per_stream(start_origin, media, tmp_path):
    """`--config streams.toml` (then the same in YAML): each stream gets its own options over the flags'
    defaults (segment_duration 2 → EXT-X-TARGETDURATION:2; part_duration 0 → no LL-HLS parts; window 4), and both
    pass the strict checker."""
    for name, text in (("streams.toml", CONFIG_TOML), ("streams.yaml", CONFIG_YAML)):
        path = tmp_path / name
        path.write_text(text.format(clip=media["clip.mp4"]))
        s = start_origin("--config", str(path), "--test-pattern-size", "320x180", wait=False)
        movie, clock = Named(s, "movie"), Named(s, "clock")
        wait_for_segments(clock, 5)
        wait_for_segments(movie, 2)
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            checks = [ex.submit(livecheck.check_live_playlist, n.base_url, 4) for n in (movie, clock)]
            for n, f in zip((movie, clock), checks):
                res = f.result()
                assert res.errors == [], f"{name} {n.name}: {res.summary()}"
        mv = http.get(movie.url("/stream.m3u8")).text
        assert "#EXT-X-TARGETDURATION:2\n" in mv and "#EXT-X-PART:" in mv, mv
        ck = http.get(clock.url("/stream.m3u8")).text
        pl = m3u8.parse_media(ck)
        assert "#EXT-X-PART" not in ck and len(pl.segments) <= 4 and pl.target_duration == 1, ck
        s.stop()


def test_config_file_errors(origin_bin, tmp_path):
    """A typo, a wrong type, a missing input, a missing file, or inputs given twice: one clear line, exit 1."""
    cases = {
        "typo.toml": ('[streams.a]\ninput = "x.mp4"\nladr = "720"\n', "streams.a: unknown key 'ladr'"),
        "type.yaml": ("streams:\n  a: { input: x.mp4, loop: 3 }\n", "streams.a.loop: expected true or false"),
        "noinput.toml": ("[streams.a]\nloop = true\n", "streams.a.input: missing"),
        "badladder.toml": ('[streams.a]\ninput = "testpattern:"\nladder = "abc"\n', "streams.a: "),
        "badname.yaml": ('streams:\n  "a b": { input: "testpattern:" }\n', "streams.a b: a stream name is"),
    }
    for name, (text, words) in cases.items():
        (tmp_path / name).write_text(text)
        p = subprocess.run([origin_bin, "serve", "--config", str(tmp_path / name), "--port", "0"],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 1 and words in p.stderr, (name, p.returncode, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, (name, p.stderr)
    p = subprocess.run([origin_bin, "serve", "--config", str(tmp_path / "absent.toml"), "--port", "0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 1 and "No such file or directory" in p.stderr, p.stderr
    p = subprocess.run([origin_bin, "serve", "x.mp4", "--config", str(tmp_path / "typo.toml"), "--port", "0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode != 0 and "either as arguments or in --config" in p.stderr, p.stderr
