"""`serve --record DIR` and `--dvr-window`: a recording ended by Ctrl-C is a VOD that passes the package checks; one
killed with SIGKILL plays up to its last complete segment; a 10-minute time-shift window fed 20 minutes of media
lists 10 minutes, every listed segment downloads (most of them read back from the recording), memory stays flat.
"""
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from hlsharness import clients, dashcheck, http, livecheck, m3u8, procs
from hlsharness.segcheck import Errors, SegmentValidator
from hlsharness.testenv import need

SECONDS = 30


def _pattern_server(origin_bin, record_dir):
    return procs.OriginServer(origin_bin, ["--test-pattern-size", "320x180", "--quiet", "--record", record_dir])


@pytest.fixture(scope="module")
def recordings(origin_bin):
    """Two test-pattern servers recording at once for 30 s: one stopped with SIGINT, one killed with SIGKILL."""
    root = tempfile.mkdtemp(prefix="e2e-record-")
    dirs = {"sigint": os.path.join(root, "sigint"), "sigkill": os.path.join(root, "sigkill")}
    servers = {k: _pattern_server(origin_bin, d) for k, d in dirs.items()}
    try:
        for s in servers.values():
            s.start()
        for s in servers.values():
            s.wait_ready(20)
        ready = time.monotonic()
        # The first segment (one LL part, 1/3 s) exists when /index.m3u8 answers: 30 s of media 30 s later.
        time.sleep(SECONDS - 1 / 3)
        servers["sigkill"].proc.send_signal(signal.SIGKILL)
        rc = procs.stop_process(servers["sigint"].proc, grace=10, sig=signal.SIGINT)
        servers["sigkill"].proc.wait(timeout=10)
        print(f"recorded for {time.monotonic() - ready:.1f}s; SIGINT exit {rc}")
        print(servers["sigint"].stderr()[-1500:])
        yield dirs, rc
    finally:
        for s in servers.values():
            s.stop()
        shutil.rmtree(root, ignore_errors=True)


def _ffmpeg_copy(src, out, *extra):
    p = subprocess.run(["timeout", "-s", "KILL", "60", "ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-xerror",
                        *extra, "-i", src, "-map", "0", "-c", "copy", "-y", out],
                       stdin=subprocess.DEVNULL, capture_output=True)
    return p.returncode, p.stderr.decode("utf-8", errors="replace")


def test_sigint_leaves_a_vod_that_passes_the_package_checks(recordings, tmp_path):
    need("ffmpeg", "ffprobe")
    dirs, rc = recordings
    assert rc == 0
    res = livecheck.check_vod_dir(dirs["sigint"])
    assert res.errors == []
    assert abs(res.duration - SECONDS) <= 1.0 + 0.1, res.duration   # ± one segment
    assert res.target_duration == 1
    assert abs(res.media_seconds - res.duration) < 0.1, (res.media_seconds, res.duration)
    rc, err = _ffmpeg_copy(os.path.join(dirs["sigint"], "index.m3u8"), str(tmp_path / "out.mp4"))
    assert rc == 0, err
    span = clients.packet_stats(str(tmp_path / "out.mp4"))
    assert all(abs(v["span"] - res.duration) < 0.2 for v in span.values()), span
    # The static DASH MPD of the same segments (written at the end from the recorded facts).
    errors = []
    mpd = dashcheck.check_static_dir(dirs["sigint"], errors)
    assert not errors, "\n".join(errors)
    assert abs(dashcheck.parse_duration(mpd.attr("mediaPresentationDuration")) - res.duration) < 0.1


def test_sigkill_leaves_a_recording_that_plays_to_its_last_complete_segment(recordings, tmp_path):
    need("ffmpeg", "ffprobe")
    dirs, _ = recordings
    d = dirs["sigkill"]
    mv = m3u8.parse_multivariant(open(os.path.join(d, "index.m3u8")).read())
    assert [v.uri for v in mv.variants] == ["stream.m3u8"]
    pl = m3u8.parse_media(open(os.path.join(d, "stream.m3u8")).read())
    assert pl.playlist_type == "EVENT" and not pl.endlist
    errors = Errors()
    v = SegmentValidator(errors)
    v.set_init(open(os.path.join(d, pl.segments[0].map_uri), "rb").read(), mv.variants[0].attrs.get("CODECS"))
    for s in pl.segments:
        with open(os.path.join(d, s.uri), "rb") as f:
            v.add_segment(s.seq, s.duration, f.read(), s.uri)   # whole fragments, tfdt continuous
    assert errors.list() == []
    assert [s.seq for s in pl.segments] == list(range(len(pl.segments)))
    # Killed ~30 s in: everything but the segment in progress (and at most one written but not yet listed).
    assert SECONDS - 2.1 <= pl.total_duration <= SECONDS + 1.1, pl.total_duration
    listed = {s.uri for s in pl.segments}
    unlisted = sorted(n for n in os.listdir(d) if n.endswith(".m4s") and n not in listed)
    assert len(unlisted) <= 1, unlisted
    # An EVENT playlist without ENDLIST is live to ffmpeg: start at the first segment, stop after 2 idle reloads.
    rc, err = _ffmpeg_copy(os.path.join(d, "index.m3u8"), str(tmp_path / "out.mp4"),
                           "-live_start_index", "0", "-m3u8_hold_counters", "2")
    assert rc == 0, err
    span = clients.packet_stats(str(tmp_path / "out.mp4"))
    assert all(abs(x["span"] - pl.total_duration) < 0.2 for x in span.values()), span


def test_a_non_empty_record_directory_is_refused_before_serving(origin_bin, tmp_path):
    d = tmp_path / "rec"
    d.mkdir()
    (d / "old.m3u8").write_text("#EXTM3U\n")
    p = subprocess.run([origin_bin, "serve", "--record", str(d), "--port", "0"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    err = p.stderr.decode()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert p.returncode != 0 and len(lines) == 1 and "not empty" in lines[0] and "serving" not in err, err
    p = subprocess.run([origin_bin, "serve", "--dvr-window", "10m", "--port", "0"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert p.returncode != 0 and "--record" in p.stderr.decode(), p.stderr.decode()


# --- time-shift ----------------------------------------------------------------------------------------------------

DVR_SOURCE = ["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=15", "-f", "lavfi", "-i",
              "sine=frequency=440:sample_rate=48000", "-t", "10", "-c:v", "libx264", "-preset", "ultrafast",
              "-g", "15", "-keyint_min", "15", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac",
              "-b:a", "32k", "-ac", "1", "-f", "mpegts"]


@pytest.fixture(scope="module")
def twenty_minutes():
    """20 minutes of small H.264 + AAC (MPEG-TS): a 10 s clip joined 120 times (cached)."""
    need("ffmpeg")
    h = hashlib.sha256(repr(DVR_SOURCE).encode()).hexdigest()[:12]
    d = os.path.join(procs.REPO, ".cache", "e2e-media", f"dvr-{h}")
    path = os.path.join(d, "20min.ts")
    if not os.path.exists(path):
        os.makedirs(d, exist_ok=True)
        clip = os.path.join(d, "clip10.ts")
        subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", *DVR_SOURCE, clip], check=True)
        with open(os.path.join(d, "list.txt"), "w") as f:
            f.write("file 'clip10.ts'\n" * 120)
        subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "concat", "-safe", "0",
                        "-i", os.path.join(d, "list.txt"), "-c", "copy", "-f", "mpegts", path + ".part"], check=True)
        os.replace(path + ".part", path)
    return path


def _peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def _ingest(origin_bin, src, workdir, *args):
    """Serve `src` as fast as it reads; returns (server, peak RSS KiB) once the playlist is ended."""
    s = procs.OriginServer(origin_bin, [src, "--no-realtime", "--quiet", *args], workdir=workdir)
    s.start()
    s.wait_ready(20)
    pl = livecheck.wait_for_endlist(s.base_url, 60, proc=s.proc)
    assert pl is not None, s.stderr()[-2000:]
    return s, _peak_rss_kib(s.proc.pid)


def test_dvr_window_offers_10_minutes_and_every_listed_segment_downloads(origin_bin, twenty_minutes, tmp_path):
    need("ffmpeg", "ffprobe")
    base, base_rss = _ingest(origin_bin, twenty_minutes, str(tmp_path), "--record", str(tmp_path / "plain"))
    base.stop()
    t0 = time.monotonic()
    s, rss = _ingest(origin_bin, twenty_minutes, str(tmp_path), "--record", str(tmp_path / "rec"), "--dvr-window", "10m")
    try:
        print(f"ingest + end {time.monotonic() - t0:.1f}s; peak RSS: --dvr-window 10m {rss / 1024:.1f} MiB, "
              f"without {base_rss / 1024:.1f} MiB")
        snap = livecheck.check_http_snapshot(s.base_url)
        assert snap.errors == []          # every listed segment: 200, parses, tfdt continuous
        pl = snap.playlist
        assert 599 <= pl.total_duration <= 601.1, pl.total_duration
        assert pl.segments[0].seq == pl.media_sequence and pl.segments[-1].seq == 1199, (pl.media_sequence,
                                                                                        pl.segments[-1].seq)
        assert abs(snap.media_seconds - pl.total_duration) < 0.1
        # Older than the hot window: read back from the recording (same bytes as on disk).
        oldest = pl.segments[0]
        with open(tmp_path / "rec" / oldest.uri, "rb") as f:
            assert http.get(s.url("/" + oldest.uri)).body == f.read()
        # 600 segments listed, 6 in memory: memory stays where it is without the history.
        assert rss <= base_rss * 1.2 + 8 * 1024, (rss, base_rss)
        # A downloader takes the whole time-shifted presentation.
        rc, err = _ffmpeg_copy(s.url("/index.m3u8"), str(tmp_path / "dvr.mp4"))
        assert rc == 0, err
        span = clients.packet_stats(str(tmp_path / "dvr.mp4"))
        assert all(abs(x["span"] - pl.total_duration) < 0.5 for x in span.values()), span
    finally:
        s.stop()
