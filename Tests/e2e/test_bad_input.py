"""Bad input never hangs or crashes: either a clear one-line error on stderr and a non-zero exit, or (for a stream
that was fine until it broke) an ended playlist that the server keeps serving."""
import os
import re
import subprocess
import time

import pytest

from hlsharness import http, m3u8
from hlsharness.procs import StdinFeeder

FFMPEG_LOG_LINE = re.compile(r"^\[[\w-]+ @ 0x[0-9a-f]+\]")
CRASH_WORDS = ("Fatal error", "Stack dump", "Segmentation fault", "Illegal instruction", "Swift runtime failure",
               "Current stack trace", "Aborted")


def error_lines(stderr):
    return [ln for ln in stderr.splitlines() if re.search(r"error", ln, re.I)]


def assert_clear_error(stderr, mention=None):
    assert not any(w in stderr for w in CRASH_WORDS), f"crash output:\n{stderr[-3000:]}"
    raw = [ln for ln in stderr.splitlines() if FFMPEG_LOG_LINE.match(ln)]
    assert not raw, f"raw FFmpeg log lines leaked to stderr: {raw[:3]}"
    errs = error_lines(stderr)
    assert len(errs) == 1, f"expected exactly one error line, got {len(errs)}:\n{stderr[-3000:]}"
    assert len(errs[0]) <= 300, f"error line too long: {errs[0]!r}"
    if mention:
        assert mention.lower() in errs[0].lower(), f"error line should mention {mention!r}: {errs[0]!r}"


def outcome(server, timeout):
    """Wait for a clean end: ('exited', rc) or ('ended', playlist). Fails the test on a hang or crash."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rc = server.proc.poll()
        if rc is not None:
            assert rc > 0, f"exit status {rc} (0 after an input error, or killed by a signal)\n{server.stderr()[-3000:]}"
            return "exited", rc
        r = http.get(server.url("/stream.m3u8"), timeout=2)
        if r.status == 200:
            try:
                pl = m3u8.parse_media(r.text)
                if pl.endlist:
                    return "ended", pl
            except m3u8.PlaylistError:
                pass
        time.sleep(0.25)
    pytest.fail(f"no exit and no EXT-X-ENDLIST within {timeout}s (hang)\nstderr:\n{server.stderr()[-3000:]}")


def test_random_bytes_on_stdin(start_origin):
    s = start_origin("-", stdin=subprocess.PIPE, wait=False)
    StdinFeeder(s.proc.stdin, os.urandom(1 << 20)).start()
    kind, _ = outcome(s, 20)
    assert kind == "exited", "random bytes cannot become a stream"
    assert_clear_error(s.stderr())


def test_missing_file(start_origin, tmp_path):
    missing = str(tmp_path / "does-not-exist.mp4")
    s = start_origin(missing, wait=False)
    kind, _ = outcome(s, 15)
    assert kind == "exited"
    assert_clear_error(s.stderr(), mention="does-not-exist.mp4")


def test_file_that_is_not_media_fails_before_serving(origin_bin, tmp_path):
    """A file that cannot be probed is a startup error: one line, non-zero exit, and no "serving" announced
    (nothing listens, so no client is told to come)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("hello, this is not a video\n")
    p = subprocess.run([origin_bin, "serve", str(notes), "--port", "0"], capture_output=True, text=True, timeout=20)
    assert p.returncode > 0
    assert "serving" not in p.stderr, p.stderr
    assert_clear_error(p.stderr, mention="notes.txt")


def test_invalid_raw_video_size(start_origin):
    s = start_origin("-", "--input-format", "rawvideo", "--video-size", "0x0", "--framerate", "30",
                     stdin=subprocess.PIPE, wait=False)
    StdinFeeder(s.proc.stdin, b"\x80" * 100000).start()
    kind, _ = outcome(s, 15)
    assert kind == "exited"
    assert_clear_error(s.stderr())


def test_raw_video_size_does_not_match_data(start_origin, media):
    """Frames declared 640x480 but the data is 320x240 (22.5 frames): clean error or an ended playlist."""
    with open(media["raw.yuv"], "rb") as f:
        data = f.read()
    s = start_origin("-", "--input-format", "rawvideo", "--video-size", "640x480", "--pixel-format", "yuv420p",
                     "--framerate", "30", stdin=subprocess.PIPE, wait=False)
    StdinFeeder(s.proc.stdin, data).start()
    kind, _ = outcome(s, 25)
    if kind == "exited":
        assert_clear_error(s.stderr())
    else:
        assert s.proc.poll() is None
        assert not any(w in s.stderr() for w in CRASH_WORDS)


def test_cut_stream_ends_cleanly(start_origin, media):
    """A TS stream cut mid-packet: the playlist ends (or a clean error); the server does not hang."""
    with open(media["clip.ts"], "rb") as f:
        data = f.read()
    cut = data[: int(len(data) * 0.6) + 77]  # not on a 188-byte packet boundary
    s = start_origin("-", stdin=subprocess.PIPE, wait=False)
    StdinFeeder(s.proc.stdin, cut, rate=len(data) / 4 * 1.5).start()
    kind, pl = outcome(s, 25)
    if kind == "exited":
        assert_clear_error(s.stderr())
    else:
        assert pl.segments, "ended playlist has no segments"
        time.sleep(1)
        assert s.proc.poll() is None, "server should keep serving the ended stream"
        assert http.get(s.url("/" + pl.segments[-1].uri)).status == 200


def test_transcode_never_rejects_mpeg2(start_origin, media):
    s = start_origin(media["mpeg2.ts"], "--transcode", "never", wait=False)
    kind, _ = outcome(s, 15)
    assert kind == "exited", "--transcode never cannot serve MPEG-2 video to browsers"
    assert_clear_error(s.stderr())


def test_transcode_never_rejects_mpeg2_on_stdin(start_origin, media):
    with open(media["mpeg2.ts"], "rb") as f:
        data = f.read()
    s = start_origin("-", "--transcode", "never", stdin=subprocess.PIPE, wait=False)
    StdinFeeder(s.proc.stdin, data).start()
    kind, _ = outcome(s, 15)
    assert kind == "exited"
    assert_clear_error(s.stderr())


def test_unknown_option_is_a_usage_error(origin_bin):
    p = subprocess.run([origin_bin, "serve", "--no-such-flag"], stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=15)
    assert p.returncode > 0
    assert p.stderr.strip(), "usage error must go to stderr"
