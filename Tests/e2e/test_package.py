"""`hls-origin package INPUT -o DIR`: VOD output checked file by file and against the source with ffprobe."""
import os
import subprocess

import pytest

from hlsharness import clients, livecheck
from hlsharness.testenv import need


def run_package(origin_bin, src, out, *args, timeout=120):
    p = subprocess.run([origin_bin, "package", src, "-o", out, *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout)
    return p.returncode, p.stderr.decode("utf-8", errors="replace")


@pytest.mark.parametrize("name", ["vod.mp4", "clip.ts"])
def test_package_copies_h264_aac_exactly(origin_bin, media, tmp_path, name):
    need("ffmpeg", "ffprobe")
    out = str(tmp_path / "out")
    rc, err = run_package(origin_bin, media[name], out)
    assert rc == 0, err
    res = livecheck.check_vod_dir(out)
    assert res.errors == []
    assert sorted(os.listdir(out))[:4] == ["index.m3u8", "init.mp4", "manifest.mpd", "seg0.m4s"]
    # ffmpeg reads the whole VOD silently
    ok, ferr = clients.decode_check(os.path.join(out, "index.m3u8"))
    assert ok, ferr
    # same packets as the source: count per stream, duration span (within one frame)
    src = clients.packet_stats(media[name])
    dst = clients.packet_stats(os.path.join(out, "index.m3u8"))
    src_streams = {s["index"]: s["codec_type"] for s in clients.probe_streams(media[name])["streams"]}
    dst_streams = {s["index"]: s["codec_type"] for s in clients.probe_streams(os.path.join(out, "index.m3u8"))["streams"]}
    by_type_src = {src_streams[i]: v for i, v in src.items()}
    by_type_dst = {dst_streams[i]: v for i, v in dst.items()}
    assert set(by_type_src) == set(by_type_dst) == {"video", "audio"}
    for kind in ("video", "audio"):
        a, b = by_type_src[kind], by_type_dst[kind]
        assert b["count"] == a["count"], f"{kind}: {b['count']} packets, source has {a['count']}"
        assert abs(b["span"] - a["span"]) <= 0.05, f"{kind}: span {b['span']:.3f}s, source {a['span']:.3f}s"
        if kind == "video":
            assert b["keyframes"] == a["keyframes"]
    # segment count follows the source's keyframes (GOP 2 s for vod.mp4, 1 s for clip.ts)
    assert res.segments >= 3


def test_package_transcodes_what_browsers_cannot_play(origin_bin, media, tmp_path):
    """MPEG-4 Part 2 + MP3 (default --transcode auto) comes out as H.264 + AAC."""
    need("ffmpeg", "ffprobe")
    out = str(tmp_path / "out")
    rc, err = run_package(origin_bin, media["mpeg4_mp3.mp4"], out)
    assert rc == 0, err
    res = livecheck.check_vod_dir(out)
    assert res.errors == []
    codecs = [c.strip().lower() for c in res.codecs.split(",")]
    assert any(c.startswith("avc1.") for c in codecs) and "mp4a.40.2" in codecs, res.codecs
    assert abs(res.duration - 3.0) <= 0.15, res.duration
    ok, ferr = clients.decode_check(os.path.join(out, "index.m3u8"))
    assert ok, ferr


def test_package_missing_input_fails_cleanly(origin_bin, tmp_path):
    out = str(tmp_path / "out")
    rc, err = run_package(origin_bin, str(tmp_path / "nope.mp4"), out, timeout=30)
    assert rc != 0 and rc > 0, f"exit {rc}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "nope.mp4" in lines[0], err


def test_package_leaves_no_temporary_directory(origin_bin, media, tmp_path):
    """`package` makes a directory of its own under $TMPDIR only for a remote presentation's subtitle renditions, and
    removes it whatever the outcome. A run that fails (a file that is not media) leaves nothing there, nor does one
    that succeeds; before the fix, every failed run left an empty `hls-origin-package-PID` behind (an error exits
    the process, and the `defer` that removed it never ran)."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(os.urandom(8192))
    for src, ok in ((str(garbage), False), (media["vod.mp4"], True)):
        p = subprocess.run([origin_bin, "package", src, "-o", str(tmp_path / "out")], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        assert (p.returncode == 0) == ok, f"{src}: exit {p.returncode}: {p.stderr.decode(errors='replace')[-500:]}"
        assert os.listdir(tmp) == [], f"left in $TMPDIR after packaging {src}: {os.listdir(tmp)}"
