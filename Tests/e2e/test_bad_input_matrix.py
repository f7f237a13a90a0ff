"""The bad-input matrix: every kind of broken, odd or hostile input the hardening issue lists, each a test against the
real binary. Each case ends in one of two ways, never a crash, a hang or unbounded memory:

- **error**: a non-zero exit with exactly one clear error line (and, for a local file, before "serving" is printed);
- **recovery**: a playlist that passes the VOD checker (hlsharness.livecheck.check_vod_dir: tfdt continuity, keyframe
  starts, EXTINF against the media), whose `EXT-X-TARGETDURATION` bounds every segment (RFC 8216 §4.3.3.1: "The
  EXTINF duration of each Media Segment in the Playlist file, when rounded to the nearest integer, MUST be less than or
  equal to the target duration"), with an `EXT-X-DISCONTINUITY` wherever the input's timestamps or encoding change
  (RFC 8216 §4.3.2.3: the tag "MUST be present if there is a change in ... encoding parameters ... timestamp
  sequence").

Cases that either outcome may end (a truncated or corrupted stream: how much is salvageable depends on where the
damage falls) accept both, but each outcome is checked in full. Most cases run through `package` (the same pipeline
as `serve`, at full speed, with an exit of its own); the ones about a running server (a stall, an input that breaks
while viewers watch) run `serve`.
"""
import os
import random
import re
import shutil
import subprocess
import threading
import time

import pytest

from hlsharness import chromium, http, m3u8, presentation
from hlsharness.livecheck import check_vod_dir
from hlsharness.procs import StdinFeeder
from test_bad_input import CRASH_WORDS, assert_clear_error

V = "testsrc2=size={size}:rate={rate}"
A = "sine=frequency=440:sample_rate={rate}"
# Peak resident memory any case may use (KiB): a bound, not a benchmark (the 8K case holds a few 8K frames; the
# others stay near the idle server's ~90 MB in a debug build).
MAX_RSS_KB = 600 * 1024
SMALL_RSS_KB = 250 * 1024


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", *args], check=True, timeout=120)


def h264_ts(path, seconds=3, size="320x240", rate=30, audio=True, extra=(), offset=None, ar=48000, ac=2, vextra=()):
    args = ["-f", "lavfi", "-i", V.format(size=size, rate=rate)]
    if audio:
        args += ["-f", "lavfi", "-i", A.format(rate=ar)]
    args += ["-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-g", str(rate), "-keyint_min", str(rate),
             "-sc_threshold", "0", "-pix_fmt", "yuv420p", *vextra]
    if audio:
        args += ["-c:a", "aac", "-ac", str(ac), "-ar", str(ar)]
    if offset is not None:
        args += ["-output_ts_offset", str(offset)]
    ffmpeg(*args, *extra, "-f", "mpegts", path)
    return path


def concat(path, *parts):
    with open(path, "wb") as out:
        for p in parts:
            with open(p, "rb") as f:
                out.write(f.read())
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Makes each case's input once, on first use."""
    d = tmp_path_factory.mktemp("badinput")
    made = {}

    def get(name):
        if name not in made:
            made[name] = MAKERS[name](str(d), os.path.join(str(d), name))
        return made[name]
    return get


def _truncated(frac):
    def make(d, path):
        src = h264_ts(os.path.join(d, "t_src.ts"), seconds=4)
        data = open(src, "rb").read()
        open(path, "wb").write(data[: int(len(data) * frac) + 77])
        return path
    return make


def _truncated_mp4(n_bytes=None, frac=None):
    def make(d, path):
        src = os.path.join(d, "t_src.mp4")
        if not os.path.exists(src):
            ffmpeg("-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-f", "lavfi", "-i", A.format(rate=48000),
                   "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p",
                   "-c:a", "aac", "-movflags", "+faststart", src)
        data = open(src, "rb").read()
        open(path, "wb").write(data[: n_bytes if n_bytes is not None else int(len(data) * frac)])
        return path
    return make


def _corrupted(fmt):
    def make(d, path):
        if fmt == "ts":
            src = h264_ts(os.path.join(d, "c_src.ts"), seconds=4)
        else:
            src = os.path.join(d, "c_src.mp4")
            ffmpeg("-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-f", "lavfi", "-i",
                   A.format(rate=48000), "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30",
                   "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart", src)
        data = bytearray(open(src, "rb").read())
        rng = random.Random(12345)
        start = len(data) // 2
        for i in range(start, start + 20000):
            data[i] = rng.randrange(256)
        open(path, "wb").write(bytes(data))
        return path
    return make


def _jump(offsets):
    def make(d, path):
        parts = []
        for i, off in enumerate(offsets):
            parts.append(h264_ts(os.path.join(d, f"j{i}_{off}.ts"), seconds=3, offset=off))
        return concat(path, *parts)
    return make


def _concat_ts(*specs):
    """TS parts made with h264_ts(**spec), timestamps continuing (each part's offset = the time before it)."""
    def make(d, path):
        parts, t = [], 0.0
        for i, spec in enumerate(specs):
            spec = dict(spec)
            secs = spec.pop("seconds", 3)
            parts.append(h264_ts(os.path.join(d, f"{os.path.basename(path)}.{i}.ts"), seconds=secs, offset=t, **spec))
            t += secs
        return concat(path, *parts)
    return make


def _audio_gap(d, path):
    """9 s of A+V with no audio packets from 3 s to 6 s (frames dropped before the AAC encoder: one encode, exact
    timing)."""
    return h264_ts(path, seconds=9, extra=("-af", "aselect='not(between(t\\,3\\,6))'"))


def _mpeg2_then_h264(d, path):
    a = os.path.join(d, "cc_a.ts")
    ffmpeg("-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-f", "lavfi", "-i", A.format(rate=48000), "-t", "3",
           "-c:v", "mpeg2video", "-q:v", "5", "-c:a", "aac", "-f", "mpegts", a)
    b = h264_ts(os.path.join(d, "cc_b.ts"), seconds=3, offset=3)
    return concat(path, a, b)


def _missing_sps_pps(d, path):
    a = h264_ts(os.path.join(d, "ms_a.ts"), seconds=2, extra=("-bsf:v", "filter_units=remove_types=7|8"))
    b = h264_ts(os.path.join(d, "ms_b.ts"), seconds=3, offset=2)
    return concat(path, a, b)


def _sei_only(d, path):
    a = h264_ts(os.path.join(d, "so_a.ts"), seconds=2)
    b = h264_ts(os.path.join(d, "so_b.ts"), seconds=1, offset=2, extra=("-bsf:v", "filter_units=remove_types=1|5"))
    c = h264_ts(os.path.join(d, "so_c.ts"), seconds=2, offset=3)
    return concat(path, a, b, c)


def _zero_size(d, path):
    # The noise bitstream filter with drop keeps the packet but empties it? No: it drops. `filter_units` removing
    # every NAL type leaves packets with no payload at all: zero-size packets on the video stream.
    a = h264_ts(os.path.join(d, "zs_a.ts"), seconds=2)
    b = h264_ts(os.path.join(d, "zs_b.ts"), seconds=1, offset=2,
                extra=("-bsf:v", "filter_units=remove_types=0-31"))
    c = h264_ts(os.path.join(d, "zs_c.ts"), seconds=2, offset=3)
    return concat(path, a, b, c)


def _subtitles_only(d, path):
    srt = os.path.join(d, "s.srt")
    open(srt, "w").write("1\n00:00:00,000 --> 00:00:02,000\nhello\n\n2\n00:00:02,000 --> 00:00:04,000\nworld\n")
    ffmpeg("-i", srt, "-c:s", "srt", "-f", "matroska", path)
    return path


def _mpeg2(d, path):
    ffmpeg("-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-t", "2", "-c:v", "mpeg2video", "-f", "mpegts", path)
    return path


def _vfr(d, path):
    # Frames kept irregularly (every frame for 1 s, then every third, then two in five) with their own times.
    ffmpeg("-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-t", "4", "-vf",
           "select='lt(n\\,30)+between(n\\,30\\,59)*not(mod(n\\,3))+gte(n\\,60)*lt(mod(n\\,5)\\,2)'",
           "-fps_mode", "vfr", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p",
           "-f", "matroska", path)
    return path


def _y4m(width, height, frames=30):
    """A 4:4:4 YUV4MPEG2 stream written by hand (lavfi sources refuse sizes like 1x1): a moving gradient."""
    def make(d, path):
        with open(path, "wb") as f:
            f.write(f"YUV4MPEG2 W{width} H{height} F30:1 Ip A1:1 C444\n".encode())
            for n in range(frames):
                f.write(b"FRAME\n")
                f.write(bytes((x + n * 8) & 255 for x in range(width * height)))
                f.write(bytes([128]) * (2 * width * height))
        return path
    return make


def _8k(d, path):
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=7680x4320:rate=2", "-t", "2", "-c:v", "libx264", "-preset",
           "ultrafast", "-g", "2", "-pix_fmt", "yuv420p", "-f", "mpegts", path)
    return path


def _odd_time_base(d, path):
    """Issue 26's recipe: a raw H.264 stream wrapped into MP4 at 30 fps gets FFmpeg's time base 1/1200000 and average
    frame rate 1000000/33333 (checked with ffprobe before it is used: the fixture proves what it is made to carry)."""
    raw = os.path.join(d, "odd.h264")
    ffmpeg("-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-t", "6", "-c:v", "libx264", "-g", "30",
           "-bf", "0", "-f", "h264", raw)
    ffmpeg("-framerate", "30", "-i", raw, "-c", "copy", path)
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                            "stream=time_base,avg_frame_rate", "-of", "default=nw=1", path],
                           capture_output=True, text=True, check=True).stdout.split()
    assert sorted(probe) == ["avg_frame_rate=1000000/33333", "time_base=1/1200000"], probe
    return path


INBAND_FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                              "inband-parameter-sets-with-captions.mp4")


def _inband_parameter_sets(d, path):
    """Issue 26's repro file (H.264 High 640x360 30 fps + AAC; every keyframe repeats SPS/PPS in-band, then a caption
    SEI). Proved first: the first keyframe's NAL units read by ffprobe are SPS, PPS, SEI, ... and FFmpeg's own caption
    decoder finds text in it."""
    shutil.copy(INBAND_FIXTURE, path)
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_packets", "-show_data",
                          "-read_intervals", "%+#1", path], capture_output=True, text=True, check=True).stdout
    # ffprobe's hex dump: "00000000: 0000 0019 6764 ...  ascii", 16 bytes a line.
    data = bytes.fromhex("".join(line[10:49].replace(" ", "") for line in out.splitlines()
                                 if re.match(r"^[0-9a-f]{8}: ", line)))
    types, i = [], 0
    while i + 4 <= len(data):
        n = int.from_bytes(data[i:i + 4], "big")
        types.append(data[i + 4] & 0x1F)
        i += 4 + n
    assert types[:3] == [7, 8, 6] and 5 in types, f"NAL unit types of the first keyframe: {types}"
    captions = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                               f"movie={path}[out0+subcc]", "-map", "0:s", "-f", "srt", "-"],
                              capture_output=True, text=True, timeout=60).stdout
    assert "-->" in captions, "the fixture's caption SEI decodes to text"
    return path


MAKERS = {
    "odd_time_base.mp4": _odd_time_base,
    "inband_parameter_sets.mp4": _inband_parameter_sets,
    "empty.mp4": lambda d, p: (open(p, "wb").close(), p)[1],
    "truncated_header.mp4": _truncated_mp4(n_bytes=300),
    "truncated_moov.mp4": _truncated_mp4(frac=0.02),
    "truncated_mid.mp4": _truncated_mp4(frac=0.6),
    "truncated_first_key.ts": _truncated(0.03),
    "truncated_mid.ts": _truncated(0.5),
    "corrupt_mid.ts": _corrupted("ts"),
    "corrupt_mid.mp4": _corrupted("mp4"),
    "jump_forward.ts": _jump([0, 3600]),
    "jump_backward.ts": _jump([100, 10]),
    "jump_both.ts": _jump([0, 3600, 10]),
    # 2^33 / 90 kHz = 95,443.7 s: starting 8.7 s before the wrap of the 33-bit MPEG-TS timestamps (26.5 h in).
    "pts_wrap.ts": lambda d, p: h264_ts(p, seconds=20, offset=95435),
    "resolution_change.ts": _concat_ts({"size": "320x240"}, {"size": "480x270"}),
    "codec_change.ts": _mpeg2_then_h264,
    "audio_gap.ts": _audio_gap,
    "aac_config_change.ts": _concat_ts({"ar": 48000, "ac": 2}, {"ar": 44100, "ac": 1}),
    "video_only.ts": lambda d, p: h264_ts(p, audio=False),
    "audio_only.ts": lambda d, p: (ffmpeg("-f", "lavfi", "-i", A.format(rate=48000), "-t", "3", "-c:a", "aac",
                                          "-f", "mpegts", p), p)[1],
    "vfr.mkv": _vfr,
    "zero_size.ts": _zero_size,
    "burst_50M.ts": _concat_ts({"seconds": 2}, {"seconds": 2, "vextra": ("-b:v", "50M", "-minrate", "50M",
                                                                      "-maxrate", "50M", "-bufsize", "25M")},
                               {"seconds": 2}),
    "8k.ts": _8k,
    "1x1.y4m": _y4m(1, 1),
    "4097x3.y4m": _y4m(4097, 3),
    "mpeg2_video.ts": _mpeg2,
    "subtitles_only.mkv": _subtitles_only,
    "sei_only.ts": _sei_only,
    "missing_sps_pps.ts": _missing_sps_pps,
}


class Run:
    def __init__(self, rc, stderr, max_rss_kb, out):
        self.rc, self.stderr, self.max_rss_kb, self.out = rc, stderr, max_rss_kb, out


def run(origin_bin, args, tmp_path, timeout=90, stdin=None):
    """Runs hls-origin to its end (a hang fails the test), with its peak RSS."""
    out = str(tmp_path / "out")
    p = subprocess.Popen([origin_bin, *args], stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if stdin is not None:
        StdinFeeder(p.stdin, stdin).start()
    # Reaped with wait4 (not poll) for this child's own peak RSS (ru_maxrss, KiB on Linux). stderr is drained by a
    # thread so a chatty child cannot block on a full pipe.
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(p.stderr.read()), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            os.wait4(p.pid, 0)
            reader.join(5)
            pytest.fail(f"hls-origin {' '.join(args)} did not finish within {timeout} s (hang)\n"
                        f"{b''.join(chunks).decode(errors='replace')[-3000:]}")
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    reader.join(10)
    rss = ru.ru_maxrss
    stderr = b"".join(chunks).decode(errors="replace")
    assert not any(w in stderr for w in CRASH_WORDS), f"crash:\n{stderr[-3000:]}"
    assert p.returncode >= 0, f"killed by signal {-p.returncode}\n{stderr[-3000:]}"
    assert rss < MAX_RSS_KB, f"peak RSS {rss // 1024} MB: unbounded memory for this input"
    return Run(p.returncode, stderr, rss, out)


def package(origin_bin, tmp_path, path, *extra):
    return run(origin_bin, ["package", path, "-o", str(tmp_path / "out"), *extra], tmp_path)


def assert_error(r, mention=None):
    assert r.rc > 0, f"expected a non-zero exit:\n{r.stderr[-2000:]}"
    assert_clear_error(r.stderr, mention=mention)


def assert_recovered(r, min_seconds, discontinuities=None, max_seconds=None):
    """A playable VOD that passes the checker; `discontinuities`: how many EXT-X-DISCONTINUITY tags (None: any)."""
    assert r.rc == 0, f"expected a recovery, got exit {r.rc}:\n{r.stderr[-2000:]}"
    res = check_vod_dir(r.out)
    assert not res.errors, "\n".join(res.errors[:10])
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    longest = max(s.duration for s in pl.segments)
    assert m3u8.rfc8216_rounded(longest) <= pl.target_duration
    assert pl.target_duration <= 3, f"EXT-X-TARGETDURATION {pl.target_duration}: a segment spans a jump or a gap"
    assert res.duration >= min_seconds, f"only {res.duration:.2f} s of media listed, expected >= {min_seconds}"
    if max_seconds is not None:
        assert res.duration <= max_seconds, f"{res.duration:.2f} s listed, expected <= {max_seconds}"
    found = sum(1 for s in pl.segments if s.discontinuity)
    if discontinuities is not None:
        assert found == discontinuities, f"{found} EXT-X-DISCONTINUITY, expected {discontinuities}"
    return pl


def assert_error_or_recovered(r, min_seconds=0.0):
    if r.rc == 0:
        return assert_recovered(r, min_seconds)
    assert_error(r)
    return None


def assert_memory_bounded(r, limit=SMALL_RSS_KB):
    assert r.max_rss_kb < limit, f"peak RSS {r.max_rss_kb // 1024} MB"


# ---- errors: nothing to serve ----

def test_empty_file(origin_bin, inputs, tmp_path):
    r = package(origin_bin, tmp_path, inputs("empty.mp4"))
    assert_error(r, mention="empty.mp4")


def test_empty_file_serve_fails_before_serving(origin_bin, inputs, tmp_path):
    r = run(origin_bin, ["serve", inputs("empty.mp4"), "--port", "0"], tmp_path, timeout=20)
    assert_error(r, mention="empty.mp4")
    assert "serving" not in r.stderr


def test_empty_stdin(origin_bin, tmp_path):
    r = run(origin_bin, ["serve", "-", "--port", "0"], tmp_path, timeout=20, stdin=b"")
    assert_error(r)


def test_directory(origin_bin, tmp_path):
    d = tmp_path / "a-directory"
    d.mkdir()
    r = run(origin_bin, ["serve", str(d), "--port", "0"], tmp_path, timeout=20)
    assert_error(r, mention="a-directory")
    assert "serving" not in r.stderr


@pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) runs the binary as another user")
def test_unreadable_file(origin_bin, inputs, tmp_path):
    """Permissions: as root every file is readable, so the binary runs as `nobody` when the test is root."""
    src = inputs("video_only.ts")
    # pytest's tmp dirs are private to root: `nobody` must be able to reach the file to be refused by its mode.
    import tempfile
    d = tempfile.mkdtemp(prefix="hls-origin-perm-")
    os.chmod(d, 0o755)
    f = os.path.join(d, "secret.ts")
    shutil.copy(src, f)
    os.chmod(f, 0)
    cmd = ["serve", str(f), "--port", "0"]
    if os.geteuid() == 0:
        binary = os.path.join(d, "hls-origin")
        shutil.copy(origin_bin, binary)
        os.chmod(binary, 0o755)
        r = run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", str(binary), *cmd], tmp_path,
                timeout=20)
    else:
        r = run(origin_bin, cmd, tmp_path, timeout=20)
    assert_error(r, mention="secret.ts")
    assert "serving" not in r.stderr
    assert "permission" in r.stderr.lower()


def test_truncated_in_header(origin_bin, inputs, tmp_path):
    assert_error(package(origin_bin, tmp_path, inputs("truncated_header.mp4")))


def test_truncated_in_moov(origin_bin, inputs, tmp_path):
    assert_error(package(origin_bin, tmp_path, inputs("truncated_moov.mp4")))


def test_subtitles_only(origin_bin, inputs, tmp_path):
    assert_error(package(origin_bin, tmp_path, inputs("subtitles_only.mkv")), mention="no video or audio")


def test_unsupported_codec_without_transcoding(origin_bin, inputs, tmp_path):
    assert_error(package(origin_bin, tmp_path, inputs("mpeg2_video.ts"), "--transcode", "never"), mention="mpeg2video")


# ---- damaged streams: what can be read is kept ----

def test_truncated_at_first_keyframe(origin_bin, inputs, tmp_path):
    assert_error_or_recovered(package(origin_bin, tmp_path, inputs("truncated_first_key.ts")))


def test_truncated_mid_stream_ts(origin_bin, inputs, tmp_path):
    """Cut in the middle: everything before the cut is listed. MPEG-TS carries audio late, so the last segment may
    hold the last video frames alone (nothing is invented for them)."""
    r = package(origin_bin, tmp_path, inputs("truncated_mid.ts"))
    assert r.rc == 0, r.stderr[-2000:]
    res = check_vod_dir(r.out)
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    last = pl.segments[-1].uri
    assert not [e for e in res.errors if not e.startswith(f"{last}: no samples for track")], res.errors[:10]
    assert res.duration >= 1.5 and pl.target_duration == 1


def test_truncated_mid_stream_mp4(origin_bin, inputs, tmp_path):
    # A faststart MP4 cut in its media data: the index promises more than the file holds.
    r = package(origin_bin, tmp_path, inputs("truncated_mid.mp4"))
    assert_error_or_recovered(r, min_seconds=1.0)


def test_corrupted_middle_ts(origin_bin, inputs, tmp_path):
    assert_recovered(package(origin_bin, tmp_path, inputs("corrupt_mid.ts")), min_seconds=3.0)


def test_corrupted_middle_mp4(origin_bin, inputs, tmp_path):
    assert_error_or_recovered(package(origin_bin, tmp_path, inputs("corrupt_mid.mp4")), min_seconds=3.0)


# ---- timestamps ----

def test_timestamps_jump_forward_an_hour(origin_bin, inputs, tmp_path):
    pl = assert_recovered(package(origin_bin, tmp_path, inputs("jump_forward.ts")), min_seconds=5.8,
                          discontinuities=1, max_seconds=6.3)
    assert pl.target_duration == 1


def test_timestamps_jump_backward(origin_bin, inputs, tmp_path):
    assert_recovered(package(origin_bin, tmp_path, inputs("jump_backward.ts")), min_seconds=5.8, discontinuities=1,
                     max_seconds=6.3)


def test_timestamps_jump_forward_then_back(origin_bin, inputs, tmp_path):
    """The issue's finding: three clips, the second shifted by +1 h, the third back near the start; all 9 s listed."""
    assert_recovered(package(origin_bin, tmp_path, inputs("jump_both.ts")), min_seconds=8.8, discontinuities=2,
                     max_seconds=9.3)


def test_timestamp_jumps_on_a_live_pipe(origin_bin, inputs, tmp_path):
    """The same input on stdin to `serve`: the live playlist's header values never change, and the recording shows
    every second with two discontinuities."""
    data = open(inputs("jump_both.ts"), "rb").read()
    rec = tmp_path / "rec"
    p = subprocess.Popen([origin_bin, "serve", "-", "--port", "0", "--record", str(rec)], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        StdinFeeder(p.stdin, data).start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (rec / "stream.m3u8").exists():
            time.sleep(0.1)
        while time.monotonic() < deadline and "#EXT-X-ENDLIST" not in (rec / "stream.m3u8").read_text():
            time.sleep(0.1)
    finally:
        p.terminate()
        p.wait(timeout=10)
    err = p.stderr.read().decode()
    assert p.returncode == 0, err[-2000:]
    assert err.count("timestamps jumped") == 2, err[-2000:]
    pl = m3u8.parse_media((rec / "stream.m3u8").read_text())
    assert pl.target_duration == 1
    assert sum(1 for s in pl.segments if s.discontinuity) == 2
    assert 8.8 <= pl.total_duration <= 9.3


@pytest.mark.parametrize("how", ["file", "pipe"])
def test_33_bit_timestamp_wrap(origin_bin, inputs, tmp_path, how):
    """MPEG-TS timestamps wrap at 2^33 ticks of 90 kHz (26.5 h): the wrap is not a jump. The 20 s across it stay one
    timeline: no discontinuity, tfdt continuous (the checker), every second listed."""
    if how == "file":
        r = package(origin_bin, tmp_path, inputs("pts_wrap.ts"))
    else:
        r = run(origin_bin, ["package", "-", "-o", str(tmp_path / "out")], tmp_path,
                stdin=open(inputs("pts_wrap.ts"), "rb").read())
    assert_recovered(r, min_seconds=19.8, discontinuities=0, max_seconds=20.2)
    assert "jumped" not in r.stderr


def test_variable_frame_rate(origin_bin, inputs, tmp_path):
    assert_recovered(package(origin_bin, tmp_path, inputs("vfr.mkv")), min_seconds=3.5, discontinuities=0)


# ---- changes mid-stream ----

def test_resolution_change(origin_bin, inputs, tmp_path):
    r = package(origin_bin, tmp_path, inputs("resolution_change.ts"))
    assert r.rc == 0, r.stderr[-2000:]
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    assert sum(1 for s in pl.segments if s.discontinuity) == 1
    assert len({s.map_uri for s in pl.segments}) == 2, "a new init segment for the new resolution"
    assert pl.total_duration >= 5.8


def test_codec_change(origin_bin, inputs, tmp_path):
    """MPEG-2 video, then H.264 on the same PID: encoded or copied, never a crash or a broken stream."""
    r = package(origin_bin, tmp_path, inputs("codec_change.ts"))
    if r.rc != 0:
        assert_error(r)
        return
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    assert pl.total_duration >= 2.8


def test_audio_disappears_and_returns(origin_bin, inputs, tmp_path):
    """Audio stops for 3 s and comes back: the video runs on unbroken; the segments of the silent stretch carry no
    audio samples, and the audio comes back at its own time (A/V sync kept), not pulled forward over the hole."""
    r = package(origin_bin, tmp_path, inputs("audio_gap.ts"))
    assert r.rc == 0, r.stderr[-2000:]
    res = check_vod_dir(r.out)
    other = [e for e in res.errors if not re.search(r"no samples for track \d+ \(soun\)", e)
             and not re.search(r"track \d+ \(soun\) tfdt \d+ but previous segment ended", e)]
    assert not other, "\n".join(other[:10])
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    assert pl.total_duration >= 8.8 and pl.target_duration == 1
    # The audio frame before the hole lasts until the audio returns (a muxed fMP4 track cannot leave a hole in its
    # decode times), and the audio that returns is in sync with the video: same tfdt within one video frame.
    from hlsharness import mp4
    init = mp4.parse_init(open(os.path.join(r.out, pl.segments[0].map_uri), "rb").read())
    audio = next(t for t in init.tracks if t.handler == "soun")
    video = next(t for t in init.tracks if t.handler == "vide")
    silent, synced = 0, 0
    for seg in pl.segments:
        frag = mp4.parse_fragment(open(os.path.join(r.out, seg.uri), "rb").read(), init)
        a, v = frag.track_runs(audio.track_id), frag.track_runs(video.track_id)
        if not a or not any(x.durations for x in a):
            silent += 1
            continue
        if silent and not synced:
            synced = 1
            gap = a[0].base_decode_time / audio.timescale - v[0].base_decode_time / video.timescale
            assert abs(gap) <= 1 / 30 + 1e-3, f"the audio returns {gap * 1000:.1f} ms from the video"
    assert silent >= 1 and synced, "segments without audio in the hole, then audio again"


def test_aac_configuration_change(origin_bin, inputs, tmp_path):
    r = package(origin_bin, tmp_path, inputs("aac_config_change.ts"))
    assert r.rc == 0, r.stderr[-2000:]
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    assert sum(1 for s in pl.segments if s.discontinuity) == 1, "a new AudioSpecificConfig is a new init segment"
    assert len({s.map_uri for s in pl.segments}) == 2
    assert pl.total_duration >= 5.8


def test_missing_sps_pps_until_late(origin_bin, inputs, tmp_path):
    """The first 2 s carry no SPS/PPS: the stream starts at the first keyframe that has them."""
    assert_recovered(package(origin_bin, tmp_path, inputs("missing_sps_pps.ts")), min_seconds=2.8)


def test_sei_only_access_units(origin_bin, inputs, tmp_path):
    """A second of access units with no picture (AUD, SEI, parameter sets): skipped; before and after are kept."""
    assert_recovered(package(origin_bin, tmp_path, inputs("sei_only.ts")), min_seconds=3.8)


def test_zero_size_packets(origin_bin, inputs, tmp_path):
    assert_recovered(package(origin_bin, tmp_path, inputs("zero_size.ts")), min_seconds=3.8)


# ---- shapes and sizes ----

def test_video_only(origin_bin, inputs, tmp_path):
    assert_recovered(package(origin_bin, tmp_path, inputs("video_only.ts")), min_seconds=2.9, discontinuities=0)


def test_audio_only(origin_bin, inputs, tmp_path):
    assert_recovered(package(origin_bin, tmp_path, inputs("audio_only.ts")), min_seconds=2.9, discontinuities=0)


def test_50_mbit_burst(origin_bin, inputs, tmp_path):
    r = package(origin_bin, tmp_path, inputs("burst_50M.ts"))
    # The 50 Mbit/s encode has other parameter sets (level): a new init segment with a discontinuity is right.
    assert_recovered(r, min_seconds=5.8)
    assert_memory_bounded(r)


def test_8k_frames(origin_bin, inputs, tmp_path):
    r = package(origin_bin, tmp_path, inputs("8k.ts"))
    assert_recovered(r, min_seconds=1.9)
    assert_memory_bounded(r, MAX_RSS_KB)


@pytest.mark.parametrize("name", ["1x1.y4m", "4097x3.y4m"])
def test_odd_picture_sizes(origin_bin, inputs, tmp_path, name):
    """Sizes H.264 4:2:0 cannot carry as they are: encoded to the nearest size it can, or one clear error."""
    r = package(origin_bin, tmp_path, inputs(name))
    assert_error_or_recovered(r, min_seconds=0.9)
    assert_memory_bounded(r)


# ---- issue 26: an ordinary frame rate in an unusual time base; parameter sets repeated in-band ----

def test_odd_time_base_ladder_package(origin_bin, inputs, tmp_path):
    """Time base 1/1200000 at 1000000/33333 fps (it trapped in the encoder's GOP arithmetic): a ladder that passes the
    strict presentation checker, with 1-second segments (the keyframe on the frame nearest each grid point)."""
    r = run(origin_bin, ["package", inputs("odd_time_base.mp4"), "-o", str(tmp_path / "out"), "--ladder", "240"], tmp_path)
    assert r.rc == 0, r.stderr[-2000:]
    res = presentation.check_vod_presentation(r.out)
    assert res.errors == [], "\n".join(res.errors[:10])
    pl = m3u8.parse_media(open(os.path.join(r.out, "240p.m3u8")).read())
    assert len(pl.segments) == 6 and pl.target_duration == 1
    assert all(abs(s.duration - 1.0) < 0.02 for s in pl.segments), [s.duration for s in pl.segments]


# Solo: it bounds dropped frames, and on the heavy worker beside a light module it dropped 20% of them once (CI,
# 2026-11-28: 43 of 217, a 240p rung on 2 busy cores).
@pytest.mark.solo
def test_odd_time_base_ladder_serve_plays_in_hlsjs(start_origin, inputs):
    """The same input served as a live ladder (it said "serving", then died with SIGILL): hls.js plays it."""
    s = start_origin(inputs("odd_time_base.mp4"), "--ladder", "240", "--loop")
    # Joined once the rung lists two segments, past the start of the debug build's live encode: in the parallel
    # phase, a join on the first segment's first part could stall once right after playback began (CI, 2026-11-27).
    rung = s.url("/" + m3u8.parse_multivariant(http.get(s.url("/index.m3u8")).text).variants[0].uri)
    deadline = time.monotonic() + 10
    while len(m3u8.parse_media(http.get(rung).text).segments) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    res = chromium.chromium_play(s.url("/"), 6)
    # What this case proves is the ladder's timing (keyframes, segments, a live encode that does not die); a few
    # frames dropped by a loaded 2-core machine during 6 s of playback, or while hls.js plays at up to 1.5x to reach
    # its target from the keyframe it started on, are the machine's (test_multistream allows 10%).
    # A non-fatal stall in the first second of playback (CI, twice on 2026-11-27: "Playback stalling at @1 due to low
    # buffer", currentTime still advancing 99%) is the loaded machine's; one later, or a longer one, still fails.
    problems = chromium.playback_problems(res, max_dropped=0.05, start_stall_grace_s=1.0)
    assert problems == [], chromium.summary(res)
    assert s.proc.poll() is None


def test_inband_parameter_sets_are_not_a_format_change(origin_bin, inputs, tmp_path):
    """The SPS/PPS every keyframe repeats are the avcC's own (its PPS only carries a trailing zero byte): no notice, no
    new init segment, no discontinuity."""
    r = package(origin_bin, tmp_path, inputs("inband_parameter_sets.mp4"))
    pl = assert_recovered(r, min_seconds=3.9, discontinuities=0)
    assert "format changed" not in r.stderr, r.stderr[-2000:]
    assert len({s.map_uri for s in pl.segments}) == 1


def test_inband_parameter_sets_single_file(origin_bin, inputs, tmp_path):
    """`package --single-file` of the same input: one file, no discontinuity, no warning per keyframe."""
    r = package(origin_bin, tmp_path, inputs("inband_parameter_sets.mp4"), "--single-file")
    assert r.rc == 0, r.stderr[-2000:]
    assert "warning" not in r.stderr and "format changed" not in r.stderr, r.stderr[-2000:]
    assert sorted(os.listdir(r.out)) == ["index.m3u8", "manifest.mpd", "stream.iframes.m3u8", "stream.m3u8",
                                         "stream.mp4"]
    pl = m3u8.parse_media(open(os.path.join(r.out, "stream.m3u8")).read())
    assert not any(s.discontinuity for s in pl.segments) and pl.total_duration >= 3.9


def test_real_format_change_single_file_is_one_error(origin_bin, inputs, tmp_path):
    """A real change (320x240 -> 480x270) cannot go into one CMAF file: one clear error line, not a warning per packet
    nor a crash while the pipeline flushes into the output that refused."""
    r = package(origin_bin, tmp_path, inputs("resolution_change.ts"), "--single-file")
    assert_error(r, mention="single-file")
    assert "skipping a packet" not in r.stderr, r.stderr[-2000:]


# ---- a running server ----

def test_stall_then_resume(start_origin, inputs):
    """10 s without data on a live pipe: the playlist stays valid (200, same header values) through the stall, then
    the stream goes on; no segment lasts the stall."""
    first = open(h264_ts(os.path.join(os.path.dirname(inputs("video_only.ts")), "stall_a.ts"), seconds=3), "rb").read()
    second = open(h264_ts(os.path.join(os.path.dirname(inputs("video_only.ts")), "stall_b.ts"), seconds=3,
                          offset=3), "rb").read()
    s = start_origin("-", stdin=subprocess.PIPE, wait=False)
    s.proc.stdin.write(first)
    s.proc.stdin.flush()
    http.wait_for_200(s.url("/stream.m3u8"), 20, proc=s.proc)
    time.sleep(2)
    before = m3u8.parse_media(http.get(s.url("/stream.m3u8")).text)
    for _ in range(8):
        time.sleep(1)
        r = http.get(s.url("/stream.m3u8"), timeout=3)
        assert r.status == 200
        pl = m3u8.parse_media(r.text)
        assert pl.target_duration == before.target_duration and not pl.endlist
        assert http.get(s.url("/" + pl.segments[-1].uri)).status == 200
    s.proc.stdin.write(second)
    s.proc.stdin.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pl = m3u8.parse_media(http.get(s.url("/stream.m3u8")).text)
        if pl.endlist:
            break
        time.sleep(0.25)
    assert pl.endlist, "the stream went on and ended after the stall"
    assert max(seg.duration for seg in pl.segments) <= pl.target_duration + 0.5
    assert pl.target_duration == before.target_duration
    assert s.proc.poll() is None, "still serving"


def test_input_breaks_while_serving(start_origin, inputs):
    """A good stream, then garbage: the playlist ends (or one clear error) and the server keeps serving its window."""
    good = open(inputs("video_only.ts"), "rb").read()
    s = start_origin("-", stdin=subprocess.PIPE, wait=False)
    StdinFeeder(s.proc.stdin, good + os.urandom(1 << 19), rate=len(good) / 3 * 1.5).start()
    deadline = time.monotonic() + 30
    pl = None
    while time.monotonic() < deadline:
        if s.proc.poll() is not None:
            break
        r = http.get(s.url("/stream.m3u8"), timeout=2)
        if r.status == 200:
            pl = m3u8.parse_media(r.text)
            if pl.endlist:
                break
        time.sleep(0.25)
    if s.proc.poll() is not None:
        assert_clear_error(s.stderr())
        return
    assert pl is not None and pl.endlist, "the playlist ends after the garbage"
    assert pl.total_duration >= 2.5
    time.sleep(1)
    assert s.proc.poll() is None
    assert http.get(s.url("/" + pl.segments[-1].uri)).status == 200
