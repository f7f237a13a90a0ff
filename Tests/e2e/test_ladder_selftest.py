"""Self-tests of the ladder (multivariant) checkers, without hls-origin (about 40 s, 50 s with cold caches):
every check must pass on correct input and fail on a targeted breakage.

- LL-HLS live: simladder's origin (FFmpeg's media cut in 1/3-s parts, the origin's layout, delta updates,
  rendition reports) with one rule broken at a time, checked by check_live_presentation + check_delta_update.
- Live without LL-HLS: FFmpeg's own live ladder (-re) behind nginx, plus broken multivariant playlists over it.
- VOD: FFmpeg's VOD ladder in the origin's layout and mutations of it, checked by check_vod_presentation.
"""
import concurrent.futures
import os
import random
import re
import shutil

import pytest

from hlsharness import chromium, http, ladders, llcheck, m3u8, mp4, presentation, simladder
from hlsharness.testenv import need

SIM_SECONDS = 5
SIM_PARALLEL = 12   # simulated origins at once (all in this process; more makes the polls too slow to be fair)


# --- LL-HLS: the simulated origin ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim_results():
    need("ffmpeg")
    source = simladder.make_source()

    def run(mutation):
        with simladder.SimLadderOrigin(source, mutation) as o:
            live = presentation.check_live_presentation(o.base_url, SIM_SECONDS)
            delta = presentation.check_delta_update(o.base_url + "/720p.m3u8")
            return live, delta

    with concurrent.futures.ThreadPoolExecutor(SIM_PARALLEL) as ex:
        futs = {m: ex.submit(run, m) for m in simladder.MUTATIONS}
        return {m: f.result() for m, f in futs.items()}


@pytest.mark.parametrize("mutation", sorted(simladder.MUTATIONS))
def test_ll_ladder_checker_detects(sim_results, mutation):
    live, delta = sim_results[mutation]
    errors = live.errors + [f"delta: {e}" for e in delta.errors]
    expected = simladder.MUTATIONS[mutation]
    if not expected:
        assert errors == [], live.summary()
        assert set(live.renditions) == {"720p", "480p", "360p", "audio"}
        for r in live.renditions.values():
            assert r.segments_downloaded >= 9 and len(r.ll.parts) >= 9 and r.ll.reports_checked >= 6, r.summary()
        # 9 s window, CAN-SKIP-UNTIL 6 s: two segments lie wholly beyond the boundary, the third ends on it
        assert delta.skipped == 3 and delta.expected == (2, 3), delta
    else:
        assert any(expected in e for e in errors), f"expected {expected!r} in {errors}"


# --- live without LL-HLS: FFmpeg's own ladder ---------------------------------------------------------------------

def test_ffmpeg_live_ladder_passes_and_broken_multivariants_fail():
    need("ffmpeg", "nginx")
    with ladders.FFmpegLiveLadder() as ref:
        with open(os.path.join(ref.dir, "index.m3u8")) as f:
            good = f.read()
        broken = {"bad_codecs.m3u8": good.replace("avc1.42C015", "avc1.64001F"),
                  "no_audio.m3u8": re.sub(r"#EXT-X-MEDIA:.*\n", "", good),
                  "ascending.m3u8": _reverse_variants(good)}
        for name, text in broken.items():
            with open(os.path.join(ref.dir, name), "w") as f:
                f.write(text)
        paths = ["/index.m3u8"] + [f"/{n}" for n in broken]
        with concurrent.futures.ThreadPoolExecutor(len(paths)) as ex:
            futs = {p: ex.submit(presentation.check_live_presentation, ref.base_url, 8, ll=False, path=p)
                    for p in paths}
            res = {p: f.result() for p, f in futs.items()}
        delta = presentation.check_delta_update(ref.base_url + "/720p/s.m3u8")
    ok = res["/index.m3u8"]
    assert ok.errors == [], ok.summary()
    assert all(r.segments_downloaded >= 6 for r in ok.renditions.values()), ok.summary()
    assert any("CODECS=" in e for e in res["/bad_codecs.m3u8"].errors)
    assert any("no EXT-X-MEDIA TYPE=AUDIO" in e for e in res["/no_audio.m3u8"].errors)
    assert any("not ordered by BANDWIDTH" in e for e in res["/ascending.m3u8"].errors)
    # FFmpeg offers no delta updates: the delta check says so
    assert any("does not advertise" in e for e in delta.errors), delta.errors


def _reverse_variants(text):
    lines = text.splitlines()
    head = [ln for ln in lines if not ln.startswith("#EXT-X-STREAM-INF") and ln.endswith("m3u8") is False]
    pairs = [(a, b) for a, b in zip(lines, lines[1:]) if a.startswith("#EXT-X-STREAM-INF")]
    return "\n".join(head + [x for p in reversed(pairs) for x in p]) + "\n"


# --- VOD ----------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vod_ladder():
    need("ffmpeg", "ffprobe")
    return ladders.cached_ladder(seconds=6)


def test_vod_presentation_accepts_ffmpeg_ladder(vod_ladder):
    res = presentation.check_vod_presentation(vod_ladder)
    assert res.errors == [], res.summary()
    assert sorted(res.renditions) == ["360p", "480p", "720p", "audio"]
    assert all(r.segments_downloaded == 6 for n, r in res.renditions.items() if n != "audio")


def _edit(path, old, new, count=1):
    with open(path) as f:
        s = f.read()
    assert old in s, (path, old)
    with open(path, "w") as f:
        f.write(s.replace(old, new, count) if count else s.replace(old, new))


def _sub(path, pattern, repl):
    with open(path) as f:
        s = f.read()
    with open(path, "w") as f:
        f.write(re.sub(pattern, repl, s, count=1, flags=re.M))


def _patch_segments(d, name, fn, only=None):
    with open(os.path.join(d, name, "init.mp4"), "rb") as f:
        init = mp4.parse_init(f.read())
    for seg in sorted(os.listdir(os.path.join(d, name))):
        if not seg.startswith("seg") or (only and seg != only):
            continue
        p = os.path.join(d, name, seg)
        with open(p, "rb") as f:
            data = f.read()
        with open(p, "wb") as f:
            f.write(fn(data, init))


def _corrupt_first_sample(data, init):
    """Random slice data after the NAL header of the IDR: the boxes stay valid, the picture does not decode."""
    start, size = mp4.first_sample_range(data, init, init.tracks[0].track_id)
    rnd = random.Random(1)
    out = bytearray(data)
    for i in range(start + 20, start + size):
        out[i] = rnd.randrange(256)
    return bytes(out)


VOD_MUTATIONS = {
    "codecs": (lambda d: _edit(f"{d}/index.m3u8", "avc1.42C015", "avc1.64001F"), "CODECS="),
    "no_audio_group": (lambda d: _sub(f"{d}/index.m3u8", r"^#EXT-X-MEDIA:.*\n", ""), "no EXT-X-MEDIA TYPE=AUDIO"),
    "resolution": (lambda d: _edit(f"{d}/index.m3u8", "RESOLUTION=480x270", "RESOLUTION=1280x720"), "RESOLUTION="),
    "frame_rate": (lambda d: _edit(f"{d}/index.m3u8", "FRAME-RATE=30.000", "FRAME-RATE=25.000"), "FRAME-RATE="),
    "frame_rate_form": (lambda d: _edit(f"{d}/index.m3u8", "FRAME-RATE=30.000", "FRAME-RATE=30"), "FRAME-RATE='30'"),
    "no_average": (lambda d: _sub(f"{d}/index.m3u8", r"AVERAGE-BANDWIDTH=\d+,", ""), "no AVERAGE-BANDWIDTH"),
    "bandwidth_under": (lambda d: _sub(f"{d}/index.m3u8", r"BANDWIDTH=(\d+)", "BANDWIDTH=300000"),
                        "the measured peak segment bit rate"),
    "bandwidth_over": (lambda d: _sub(f"{d}/index.m3u8", r"BANDWIDTH=(\d)", r"BANDWIDTH=9\1"), "overstates"),
    "autoselect": (lambda d: _edit(f"{d}/index.m3u8", "AUTOSELECT=YES", "AUTOSELECT=NO"), "AUTOSELECT=NO"),
    "channels": (lambda d: _edit(f"{d}/index.m3u8", 'CHANNELS="2"', 'CHANNELS="6"'), "CHANNELS="),
    "tfdt": (lambda d: _patch_segments(d, "480p", lambda b, i: simladder.patch_tfdt(b, 512)),
             "video starts differ between rungs"),
    "no_idr": (lambda d: _patch_segments(d, "360p", simladder.unmark_idr, "seg2.m4s"), "does not start with an IDR"),
    "audio_offset": (lambda d: _patch_segments(d, "audio", lambda b, i: simladder.patch_tfdt(b, 2048)),
                     "more than one AAC frame"),
    "missing_segment": (lambda d: os.remove(f"{d}/720p/seg3.m4s"), "seg3.m4s"),
    "no_endlist": (lambda d: _edit(f"{d}/480p.m3u8", "#EXT-X-ENDLIST", ""), "no EXT-X-ENDLIST"),
    "event": (lambda d: _edit(f"{d}/360p.m3u8", "PLAYLIST-TYPE:VOD", "PLAYLIST-TYPE:EVENT"), "EXT-X-PLAYLIST-TYPE"),
    "stray_file": (lambda d: shutil.copy(f"{d}/720p/seg0.m4s", f"{d}/720p/seg99.m4s"), "files not referenced"),
    "float_noise": (lambda d: _edit(f"{d}/480p.m3u8", "#EXTINF:1.000000,", "#EXTINF:1.0000000000000002,"),
                    "float noise"),
    "td_differs": (lambda d: _edit(f"{d}/audio.m3u8", "#EXT-X-TARGETDURATION:1", "#EXT-X-TARGETDURATION:2"),
                   "TARGETDURATION differs"),
    "undecodable": (lambda d: _patch_segments(d, "360p", _corrupt_first_sample, "seg2.m4s"),
                    "ffmpeg does not decode"),
}


@pytest.mark.parametrize("mutation", sorted(VOD_MUTATIONS))
def test_vod_presentation_detects(vod_ladder, tmp_path, mutation):
    d = str(tmp_path / "ladder")
    shutil.copytree(vod_ladder, d)
    mutate, expected = VOD_MUTATIONS[mutation]
    mutate(d)
    res = presentation.check_vod_presentation(d, decode=(mutation == "undecodable"))
    assert any(expected in e for e in res.errors), f"expected {expected!r} in {res.errors}"


# --- the arithmetic, on hand-made playlists -----------------------------------------------------------------------

def _playlist(durations, parts_last=0):
    lines = ["#EXTM3U", "#EXT-X-TARGETDURATION:2", "#EXT-X-MEDIA-SEQUENCE:10"]
    for i, d in enumerate(durations):
        lines += [f"#EXTINF:{d},", f"s{10 + i}.m4s"]
    lines += [f'#EXT-X-PART:DURATION=0.5,URI="s{10 + len(durations)}.{i}.m4s"' for i in range(parts_last)]
    return m3u8.parse_media("\n".join(lines) + "\n")


def test_skip_boundary_arithmetic():
    # 12 one-second segments, boundary 6 s before the end: the first 5 lie wholly beyond it, the 6th ends on it
    # (its nearest point is not further than the boundary): it may be skipped or not
    assert presentation.expected_skip(_playlist([1.0] * 12), 6.0) == (5, 6)
    # a segment straddling the boundary may be skipped or not
    assert presentation.expected_skip(_playlist([1.5] * 6), 6.0) == (1, 2)
    assert presentation.expected_skip(_playlist([1.25] * 8), 6.0) == (3, 4)
    # nothing old enough
    assert presentation.expected_skip(_playlist([1.0] * 5), 6.0) == (0, 0)


def test_parser_numbers_parts_after_skip():
    pl = m3u8.parse_media("#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:4\n"
                          "#EXT-X-SKIP:SKIPPED-SEGMENTS=3\n#EXT-X-PART:DURATION=0.5,URI=\"a\"\n"
                          "#EXT-X-PART:DURATION=0.5,URI=\"b\"\n#EXTINF:1.0,\ns7.m4s\n"
                          "#EXT-X-PART:DURATION=0.5,URI=\"c\"\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"d\"\n"
                          "#EXT-X-RENDITION-REPORT:URI=\"x.m3u8\",LAST-MSN=8,LAST-PART=0\n")
    assert pl.skipped_segments == 3 and [s.seq for s in pl.segments] == [7]
    assert [(p["_msn"], p["_index"], p["URI"]) for p in pl.parts] == [(7, 0, "a"), (7, 1, "b"), (8, 0, "c")]
    assert pl.preload_hints[0]["URI"] == "d" and pl.rendition_reports[0]["LAST-MSN"] == "8"
    with pytest.raises(m3u8.PlaylistError):
        m3u8.parse_media("#EXTM3U\n#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n")


def test_number_format_rule():
    ok = "#EXTINF:1.000000,\n#EXT-X-PART:DURATION=0.333333,URI=\"seg0.0.m4s\"\n#EXT-X-PART-INF:PART-TARGET=0.333334\n"
    assert llcheck.number_problems(ok) == []
    assert llcheck.number_problems("#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000000001Z\n") == []
    # PART-TARGET rounded up to the microsecond, PART-HOLD-BACK three times it (what hls-origin writes)
    assert llcheck.number_problems("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.000002\n") == []
    for bad in ("#EXTINF:1.0000001,", "#EXTINF:1.000001,", "#EXTINF:0.999999,",
                "#EXT-X-PART:DURATION=0.30000000000000004,URI=\"a\"", "#EXT-X-PART:DURATION=0.333333000001,URI=\"a\"",
                "#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=0.9999991", "#EXT-X-PART-INF:PART-TARGET=0.1000001"):
        assert llcheck.number_problems(bad), bad


def test_peak_segment_bit_rate_definition():
    recs = {i: presentation.SegmentRecord(i, f"s{i}", d, n, {}) for i, (d, n) in
            enumerate([(1.0, 1000), (1.0, 3000), (0.4, 100), (0.4, 1000)])}
    # contiguous sets lasting 0.5..1.5 x TARGETDURATION 1: {0}, {1}, {1,2}, {2,3}; a 0.4-s segment alone is too short
    assert presentation.peak_segment_bit_rate(recs, 1) == pytest.approx(8 * 3000 / 1.0)
    recs[3] = presentation.SegmentRecord(3, "s3", 0.4, 2000, {})
    assert presentation.peak_segment_bit_rate(recs, 1) == pytest.approx(8 * 3000 / 1.0)
    recs[2] = presentation.SegmentRecord(2, "s2", 0.4, 2500, {})
    assert presentation.peak_segment_bit_rate(recs, 1) == pytest.approx(8 * 4500 / 0.8)
    assert presentation.average_segment_bit_rate(recs) == pytest.approx(8 * 8500 / 2.8)


def test_delta_update_against_sim_url_helpers():
    assert presentation.with_query("http://h/a.m3u8", "_HLS_skip=YES") == "http://h/a.m3u8?_HLS_skip=YES"
    assert presentation.with_query("http://h/a.m3u8?x=1", "_HLS_skip=v2") == "http://h/a.m3u8?x=1&_HLS_skip=v2"
    assert http.join("http://h/720p.m3u8", "audio.m3u8") == "http://h/audio.m3u8"


def test_abr_requirements_logic():
    def sw(t, bitrate):
        return {"t": t, "level": 0, "height": 0, "bitrate": bitrate}
    ok = {"started": True, "levels": [{"bitrate": 1}, {"bitrate": 2}], "fatal_errors": [], "media_error": None,
          "advance_ratio": 0.95, "timeline": [{"t": t, "bitrate": 3000} for t in range(0, 15)],
          "switches": [sw(0, 3000), sw(20, 1000), sw(45, 2000)]}
    assert chromium.abr_problems(ok, 15, 30) == []
    for change, needle in [({"switches": [sw(0, 3000), sw(45, 2000)]}, "no switch below"),
                           ({"switches": [sw(0, 3000), sw(20, 1000)]}, "no switch up"),
                           ({"switches": [sw(0, 3000), sw(20, 1000), sw(25, 2000)]}, "no switch up"),
                           ({"fatal_errors": [{"details": "x", "fatal": True}]}, "fatal"),
                           ({"levels": [{"bitrate": 1}]}, "level(s)"),
                           ({"started": False}, "did not start")]:
        probs = chromium.abr_problems(dict(ok, **change), 15, 30)
        assert any(needle in p for p in probs), (change, probs)
