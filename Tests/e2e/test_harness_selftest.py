"""Self-tests of the harness (no hls-origin needed): every checker must pass on a correct origin and fail on a
broken one. The live checker runs against a simulated origin that breaks one rule at a time (all cases in
parallel, ~6 s), the VOD checker against FFmpeg's own HLS output and mutations of it."""
import concurrent.futures
import os
import shutil
import subprocess
import zlib
import struct

import pytest

from hlsharness import chromium, livecheck, m3u8, mp4, simorigin
from hlsharness.testenv import need

RUN_SECONDS = 5.5


@pytest.fixture(scope="module")
def vod_source(tmp_path_factory):
    need("ffmpeg")
    return simorigin.make_vod_source(str(tmp_path_factory.mktemp("simvod")))


@pytest.fixture(scope="module")
def sim_results(vod_source):
    """Run check_live_playlist against every mutation of the simulated origin, concurrently."""

    def run(mutation):
        with simorigin.SimLiveOrigin(vod_source, mutation) as o:
            return livecheck.check_live_playlist(o.base_url, RUN_SECONDS, poll_interval=0.25)

    with concurrent.futures.ThreadPoolExecutor(len(simorigin.MUTATIONS)) as ex:
        futs = {m: ex.submit(run, m) for m in simorigin.MUTATIONS}
        return {m: f.result() for m, f in futs.items()}


@pytest.mark.parametrize("mutation", sorted(simorigin.MUTATIONS))
def test_live_checker_detects(sim_results, mutation):
    res = sim_results[mutation]
    expected = simorigin.MUTATIONS[mutation]
    if not expected:
        assert res.errors == [], res.summary()
        assert res.segments_downloaded >= 8, res.summary()
        assert res.min_full_window is not None and res.min_full_window >= 3
    else:
        assert any(expected in e for e in res.errors), f"expected {expected!r} in {res.errors}"


def _ffmpeg_vod(out, extra=(), gop=25, seconds=4):
    os.makedirs(out, exist_ok=True)
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y",
           "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
           "-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-g", str(gop), "-pix_fmt", "yuv420p",
           "-c:a", "aac", "-ac", "2", "-f", "hls", "-hls_time", "1", "-hls_segment_type", "fmp4",
           "-hls_playlist_type", "vod", "-hls_fmp4_init_filename", "init.mp4", *extra,
           "-hls_segment_filename", os.path.join(out, "seg%d.m4s"), "-master_pl_name", "index.m3u8",
           os.path.join(out, "stream.m3u8")]
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    return out


def test_vod_checker_accepts_ffmpeg_output(vod_source):
    res = livecheck.check_vod_dir(vod_source)
    assert res.errors == []
    assert res.segments == 24 and abs(res.duration - 24.0) < 0.01
    assert abs(res.media_seconds - 24.0) < 0.05
    assert res.codecs.lower() in ("avc1.42c00b,mp4a.40.2", "avc1.42c00c,mp4a.40.2")


def test_vod_checker_detects_segments_without_keyframe(tmp_path):
    need("ffmpeg")
    d = _ffmpeg_vod(str(tmp_path / "split"), extra=("-hls_flags", "split_by_time"), gop=60)
    res = livecheck.check_vod_dir(d)
    assert any("does not start with a keyframe" in e for e in res.errors), res.errors


def test_vod_checker_detects_mutations(vod_source, tmp_path):
    def mutated(name, fn):
        d = str(tmp_path / name)
        shutil.copytree(vod_source, d)
        fn(d)
        return livecheck.check_vod_dir(d).errors

    def edit(path, old, new):
        with open(path) as f:
            s = f.read()
        assert old in s
        with open(path, "w") as f:
            f.write(s.replace(old, new, 1))

    errs = mutated("codecs", lambda d: edit(os.path.join(d, "index.m3u8"), "avc1.42c00", "avc1.64001"))
    assert any("CODECS=" in e for e in errs), errs
    errs = mutated("extinf", lambda d: edit(os.path.join(d, "stream.m3u8"), "#EXTINF:1.000000,", "#EXTINF:1.700000,"))
    assert any("rounds above TARGETDURATION" in e for e in errs), errs
    assert any("samples last" in e for e in errs), errs
    errs = mutated("missing", lambda d: os.remove(os.path.join(d, "seg3.m4s")))
    assert any("seg3.m4s" in e for e in errs), errs
    errs = mutated("noendlist", lambda d: edit(os.path.join(d, "stream.m3u8"), "#EXT-X-ENDLIST", ""))
    assert any("ENDLIST" in e for e in errs), errs
    errs = mutated("swap", lambda d: (os.rename(os.path.join(d, "seg4.m4s"), os.path.join(d, "x")),
                                      shutil.copy(os.path.join(d, "seg5.m4s"), os.path.join(d, "seg4.m4s"))))
    assert any("gap/overlap" in e for e in errs), errs

    def truncate(d):
        p = os.path.join(d, "seg2.m4s")
        with open(p, "rb") as f:
            b = f.read()
        with open(p, "wb") as f:
            f.write(b[:len(b) // 2])
    errs = mutated("truncated", truncate)
    assert any("seg2.m4s" in e and "parse" in e for e in errs), errs


def test_box_walker_codecs_of_other_codecs(tmp_path):
    """mpeg4 part 2 + MP3 in fMP4 (what FFmpeg writes): the walker names them."""
    need("ffmpeg")
    out = str(tmp_path / "m4v.mp4")
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i", "sine", "-t", "1", "-c:v", "mpeg4",
                    "-c:a", "libmp3lame", "-movflags", "frag_keyframe+empty_moov", out], check=True)
    with open(out, "rb") as f:
        data = f.read()
    moov_end = next(b.end for b in mp4.boxes(data) if b.type == b"moov")
    init = mp4.parse_init(data[:moov_end])
    assert init.codecs[0].startswith("mp4v.20")
    assert init.codecs[1].lower() in ("mp4a.6b", "mp4a.40.34")
    assert init.tracks[0].width == 160 and init.tracks[0].height == 120


def test_m3u8_parser_rejects_garbage():
    with pytest.raises(m3u8.PlaylistError):
        m3u8.parse_media("hello")
    with pytest.raises(m3u8.PlaylistError):
        m3u8.parse_media("#EXTM3U\nseg0.m4s\n")
    pl = m3u8.parse_media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:7\n"
                          "#EXT-X-PROGRAM-DATE-TIME:2024-01-01T00:00:00.000Z\n#EXTINF:1.5,\na7.m4s\n"
                          "#EXTINF:2.4,\na8.m4s\n")
    assert [s.seq for s in pl.segments] == [7, 8]
    assert pl.segments[1].pdt_computed - pl.segments[0].pdt_computed == pytest.approx(1.5)
    assert m3u8.rfc8216_rounded(2.4) == 2 and m3u8.rfc8216_rounded(2.5) == 3


def _png(w, h, rgb):
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_png_luma():
    black, white = _png(8, 4, (0, 0, 0)), _png(8, 4, (255, 255, 255))
    assert chromium.mean_luma(black) == 0
    assert chromium.mean_luma(white) == 255
    assert chromium.mean_abs_diff(black, white) == 255
    assert chromium.mean_abs_diff(white, white) == 0


def test_playback_requirements_logic():
    ok = {"has_hls": True, "started": True, "startup_s": 1.0, "advance_ratio": 0.99, "max_stall_s": 0.0,
          "fatal_errors": [], "bad_errors": [], "total_frames": 900, "dropped_frames": 2, "max_buffered_ranges": 1,
          "buffered_gaps": [], "media_error": None, "lumas": [120.0, 121.0], "screenshot_diff": 3.0,
          "samples": []}
    assert chromium.playback_problems(ok) == []
    for k, v, needle in [("startup_s", 6.0, "startup"), ("advance_ratio", 0.5, "advanced"),
                         ("dropped_frames", 20, "dropped"), ("max_buffered_ranges", 2, "gaps"),
                         ("lumas", [2.0, 3.0], "black"), ("screenshot_diff", 0.0, "frozen"),
                         ("fatal_errors", [{"details": "x", "fatal": True}], "fatal"),
                         ("bad_errors", [{"details": "bufferStalledError"}], "bufferStalledError")]:
        bad = dict(ok, **{k: v})
        probs = chromium.playback_problems(bad)
        assert any(needle in p for p in probs), (k, probs)
    # hls.js appending while its SourceBuffer is still updating (non-fatal, appended again) is its own race; any other
    # bufferAppendError, or a fatal one, fails.
    race = {"details": "bufferAppendError", "fatal": False, "reason": "Failed to execute 'appendBuffer' on "
            "'SourceBuffer': This SourceBuffer is still processing an 'appendBuffer' or 'remove' operation."}
    assert chromium.playback_problems(dict(ok, bad_errors=[race])) == []
    for other in (dict(race, fatal=True), dict(race, reason="QuotaExceededError"), dict(race, reason=None)):
        assert any("bufferAppendError" in p for p in chromium.playback_problems(dict(ok, bad_errors=[other]))), other
    # The one append that race lost may be a hole hls.js seeks over: one hole of up to 1 s after a race passes; a
    # hole without a race, a longer one, or two holes fail.
    holed = dict(ok, max_buffered_ranges=2, max_hole_s=0.32)
    assert chromium.playback_problems(dict(holed, bad_errors=[race])) == []
    assert any("gaps" in p for p in chromium.playback_problems(holed))
    assert any("gaps" in p for p in chromium.playback_problems(dict(holed, bad_errors=[race], max_hole_s=1.5)))
    assert any("gaps" in p for p in chromium.playback_problems(dict(holed, bad_errors=[race], max_buffered_ranges=3)))
    # Drops while hls.js plays faster than real time to reach the live edge have their own bound (10%), and are not
    # counted against the 1% one; past either bound, the result fails.
    assert chromium.playback_problems(dict(ok, dropped_frames=20, dropped_catching_up=19)) == []
    assert chromium.playback_problems(dict(ok, dropped_frames=70, dropped_catching_up=67)) == []
    assert any("faster than real time" in p
               for p in chromium.playback_problems(dict(ok, dropped_frames=100, dropped_catching_up=95)))
    assert any("dropped 10/900" in p
               for p in chromium.playback_problems(dict(ok, dropped_frames=30, dropped_catching_up=20)))
