"""`hls-origin package --single-file`: one CMAF file per rendition (ftyp moov [free] sidx, then the segments),
addressed by EXT-X-MAP BYTERANGE and EXT-X-BYTERANGE; checked at box level (hlsharness/singlefile.py), by ffmpeg,
and by hls.js in headless Chromium reading it from a static server that answers Range requests."""
import os
import re
import shutil
import subprocess

import pytest

from hlsharness import chromium, clients, http, livecheck, presentation, procs, singlefile, staticserver
from hlsharness.testenv import need, need_chromium


def run_package(origin_bin, src, out, *args, timeout=120):
    p = subprocess.run([origin_bin, "package", src, "-o", out, "--single-file", *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout)
    assert p.returncode == 0, p.stderr.decode("utf-8", errors="replace")
    return out


@pytest.fixture(scope="module")
def single(origin_bin, media, tmp_path_factory):
    """vod.mp4 (6 s, B-frames, GOP 2 s) packaged once for the whole module."""
    return run_package(origin_bin, media["vod.mp4"], str(tmp_path_factory.mktemp("single") / "out"))


def test_single_file_passes_the_vod_checks_and_keeps_every_packet(single, media):
    need("ffmpeg", "ffprobe")
    assert sorted(os.listdir(single)) == ["index.m3u8", "manifest.mpd", "stream.iframes.m3u8", "stream.m3u8",
                                   "stream.mp4"]
    res = livecheck.check_vod_dir(single)
    assert res.errors == []
    assert res.segments >= 3 and abs(res.duration - 6.0) <= 0.15, (res.segments, res.duration)
    sidx = res.single_files["stream.mp4"]
    assert len(sidx["refs"]) == res.segments
    # The sidx's durations add up to the playlist's and its sizes to the file after it.
    assert abs(sum(r["duration"] for r in sidx["refs"]) / sidx["timescale"] - res.duration) < 0.01
    text = open(os.path.join(single, "stream.m3u8")).read()
    assert re.search(r'^#EXT-X-MAP:URI="stream.mp4",BYTERANGE="\d+@0"$', text, re.M), text
    assert int(re.search(r"^#EXT-X-VERSION:(\d+)$", text, re.M).group(1)) >= 6  # MAP needs 6, BYTERANGE 4 (RFC 8216 §7)
    # ffmpeg reads the whole VOD silently, with the same packets as the source.
    ok, err = clients.decode_check(os.path.join(single, "index.m3u8"))
    assert ok, err
    src = clients.packet_stats(media["vod.mp4"])
    dst = clients.packet_stats(os.path.join(single, "index.m3u8"))
    assert sorted((v["count"], v.get("keyframes")) for v in src.values()) == sorted((v["count"], v.get("keyframes")) for v in dst.values())
    # The file alone is a plain fragmented MP4 too.
    ok, err = clients.decode_check(os.path.join(single, "stream.mp4"))
    assert ok, err


def test_checker_catches_ranges_off_the_box_boundaries(single, tmp_path):
    """The single-file checks can fail: a range moved by one byte, or a wrong sidx size, is reported."""
    bad = str(tmp_path / "bad")
    shutil.copytree(single, bad)
    path = os.path.join(bad, "stream.m3u8")
    text = open(path).read()
    m = re.findall(r"^#EXT-X-BYTERANGE:(\d+)@(\d+)$", text, re.M)
    n, o = m[1]
    open(path, "w").write(text.replace(f"#EXT-X-BYTERANGE:{n}@{o}\n", f"#EXT-X-BYTERANGE:{n}@{int(o) + 1}\n"))
    errors = livecheck.check_vod_dir(bad).errors
    assert any("does not start on a styp/moof box" in e for e in errors), errors
    open(path, "w").write(text)
    data = bytearray(open(os.path.join(bad, "stream.mp4"), "rb").read())
    sidx_at = data.index(b"sidx") - 4
    data[sidx_at + 8 + 32] ^= 0x01  # first referenced_size (v1: 32 bytes of fields before the references)
    open(os.path.join(bad, "stream.mp4"), "wb").write(bytes(data))
    errors = livecheck.check_vod_dir(bad).errors
    assert any("referenced sizes" in e for e in errors), errors


def test_hlsjs_plays_single_file_over_range_requests(single, origin_bin, hlsjs):
    need_chromium()
    # The player page and hls.js as the origin serves them, then the VOD from a static server with Range support.
    with procs.serving(origin_bin, ["--window", "3"], "page server") as s:
        page = http.get(s.url("/")).body
        hls_mjs = http.get(s.url("/hls.mjs")).body
    assert page and hls_mjs
    extra = {"/": (page, "text/html; charset=utf-8"), "/hls.mjs": (hls_mjs, "text/javascript")}
    log = []
    with staticserver.serving(single, extra, log) as base:
        r = http.get(base + "/stream.mp4", headers={"Range": "bytes=0-7"})
        assert r.status == 206 and r.body[4:8] == b"ftyp"
        res = chromium.chromium_play(base + "/?lowLatency=0", 4, screenshots=False)
    print(chromium.summary(res))
    assert res["started"], res.get("setup_error") or res["errors"]
    assert res.get("has_hls"), "played natively, not through hls.js"
    ranged = [e for e in log if e[1] == "/stream.mp4" and e[3] == 206]
    assert len(ranged) >= 3, log  # the init segment and the segments, each fetched as a byte range
    assert res["fatal_errors"] == [], res["fatal_errors"]
    played = max((x.get("t") or 0) for x in res["samples"])
    assert played >= 3.0, f"currentTime reached only {played:.2f}s"


def test_ladder_single_file_one_file_per_rendition(origin_bin, media, tmp_path):
    need("ffmpeg", "ffprobe")
    out = run_package(origin_bin, media["clip.mp4"], str(tmp_path / "ladder"), "--ladder", "360")
    assert sorted(os.listdir(out)) == ["360p.iframes.m3u8", "360p.m3u8", "360p.mp4", "audio.m3u8", "audio.mp4", "index.m3u8",
                                "manifest.mpd"]
    res = presentation.check_vod_presentation(out)
    assert res.errors == []
    for name in ("360p", "audio"):
        sidx = res.renditions[name].single_files[f"{name}.mp4"]
        assert sidx and len(sidx["refs"]) == len(res.renditions[name].playlist.segments)


def test_help_lists_single_file(origin_bin):
    p = subprocess.run([origin_bin, "package", "--help"], capture_output=True, timeout=30)
    assert re.search(r"--single-file\s+One CMAF file per rendition", p.stdout.decode()), p.stdout.decode()
