"""`hls-origin serve --ladder 720,480,360` (the test pattern as an ABR ladder, LL-HLS on) and
`package clip.mp4 -o DIR --ladder 720,480,360`, read by the strict presentation checker, the delta-update
check, ffmpeg on every rendition, hls.js switching rungs under DevTools throttling, and Chromium's own HLS player.

Layout under test: /index.m3u8 -> 720p.m3u8, 480p.m3u8, 360p.m3u8 (video only) + audio.m3u8 (EXT-X-MEDIA,
GROUP-ID "audio"); NAME/init.mp4, NAME/seg<N>.m4s, parts NAME/seg<N>.<i>.m4s. About 2.5 minutes.
"""
import concurrent.futures
import os
import shutil
import subprocess
import time

import pytest

from hlsharness import chromium, clients, grid, http, m3u8, presentation, procs
from hlsharness.testenv import need, need_chromium

LADDER = "720,480,360"
RUNGS = ["720p", "480p", "360p"]
WINDOW = 12          # segments: room for CAN-SKIP-UNTIL (>= 6 target durations) to skip some


@pytest.fixture(scope="module")
def ladder(origin_bin):
    with procs.serving(origin_bin, ["--ladder", LADDER, "--window", str(WINDOW)], "ladder server") as s:
        yield s


@pytest.fixture(scope="module")
def checked(ladder):
    """The presentation checker (20 s) next to ffmpeg reading each rendition for 10 s (two at a time)."""
    need("ffmpeg", "ffprobe")

    def reads(names):
        # FFmpeg's HLS reader (no LL-HLS) needs whole segments: the first playlists may list only parts
        for n in names:
            _wait_segments(ladder.url(f"/{n}.m3u8"), 3, 20)
        return {n: clients.ffmpeg_read(ladder.url(f"/{n}.m3u8"), 10) for n in names}

    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        pres = ex.submit(presentation.check_live_presentation, ladder.base_url, 20)
        a = ex.submit(reads, ["720p", "audio"])
        b = ex.submit(reads, ["480p", "360p"])
        return {"presentation": pres.result(), "ffmpeg": {**a.result(), **b.result()}}


def _wait_segments(url, count, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = http.get(url)
        if r.status == 200 and len(m3u8.parse_media(r.text).segments) >= count:
            return True
        time.sleep(0.25)
    return False


def test_multivariant_layout(ladder):
    r = http.get(ladder.url("/index.m3u8"))
    assert r.status == 200, r
    mv = m3u8.parse_multivariant(r.text)
    assert [v.uri for v in mv.variants] == [f"{n}.m3u8" for n in RUNGS], r.text
    audio = [m for m in mv.media if m.get("TYPE") == "AUDIO"]
    assert len(audio) == 1, r.text
    assert {k: audio[0].get(k) for k in ("GROUP-ID", "NAME", "DEFAULT", "AUTOSELECT", "CHANNELS", "URI")} == {
        "GROUP-ID": "audio", "NAME": "audio", "DEFAULT": "YES", "AUTOSELECT": "YES", "CHANNELS": "2",
        "URI": "audio.m3u8"}, r.text
    for v, height in zip(mv.variants, (720, 480, 360)):
        w, h = (int(x) for x in v.attrs.get("RESOLUTION", "0x0").split("x"))
        assert h == height and w % 2 == 0 and abs(w / h - 16 / 9) < 0.01, v.attrs
        assert v.attrs.get("AUDIO") == "audio" and v.attrs.get("FRAME-RATE") == "30.000", v.attrs
    for n in RUNGS + ["audio"]:
        assert http.get(ladder.url(f"/{n}/init.mp4")).status == 200, n
    assert http.get(ladder.url("/no-such.m3u8")).status == 404


def test_presentation_strict(checked):
    r = checked["presentation"]
    print(r.summary())
    assert r.errors == []
    assert sorted(r.renditions) == sorted(RUNGS + ["audio"])
    for name, rr in r.renditions.items():
        assert rr.segments_downloaded >= 12, rr.summary()
        assert rr.target_duration == 1, rr.summary()
        assert len(rr.ll.parts) >= 30 and rr.ll.reports_checked >= 20, rr.summary()
        # encoded with an IDR on every boundary: each video segment lasts exactly 1 s, after a first segment of one
        # LL part and a second that ends on the grid
        if name != "audio":
            assert rr.first_msn == 0, rr.summary()
            assert grid.encoded_grid_problems(rr.segment_seconds, tolerance=1e-9, includes_last=False) == [], \
                rr.segment_seconds


@pytest.mark.parametrize("name", RUNGS + ["audio"])
def test_ffmpeg_reads_rendition_10s_silently(checked, name):
    r = checked["ffmpeg"][name]
    assert r.ok, str(r)



def test_ffmpeg_reads_every_variant_and_the_audio_at_once(ladder):
    """`ffmpeg -i index.m3u8 -map 0`: FFmpeg opens every variant and the EXT-X-MEDIA audio rendition together (its
    programs) and reads 10 s of all of them with no output on stderr."""
    need("ffmpeg", "ffprobe")
    probe = clients.ffprobe_json(ladder.url("/index.m3u8"), "-show_entries", "stream=codec_name,width")
    streams = probe["streams"]
    assert sorted(s.get("width", 0) for s in streams if s["codec_name"] == "h264") == [640, 854, 1280], streams
    assert any(s["codec_name"] == "aac" for s in streams), streams
    r = clients.ffmpeg_read(ladder.url("/index.m3u8"), 10)
    assert r.ok, str(r)

@pytest.mark.parametrize("name", RUNGS + ["audio"])
def test_delta_update(ladder, name):
    url = ladder.url(f"/{name}.m3u8")
    _wait_segments(url, WINDOW - 1, 20)   # a full window: something lies beyond the Skip Boundary
    res = presentation.check_delta_update(url)
    print(res)
    assert res.errors == []
    assert res.skipped and res.skipped >= 1, res


def test_hlsjs_switches_down_and_up(ladder):
    """hls.js on the player page (LL-HLS mode, the page's default here): throttled by DevTools below the middle
    rung at 15 s it switches down, released at 30 s it switches back up (hls.js 1.6.15 took 5 s and 15 s on the
    reference ladder); no fatal error. The run ends 5 s after the switch up (62 s at most)."""
    need_chromium()

    def below_middle(levels):   # bytes/s: 70% of the middle rung's BANDWIDTH
        return levels[len(levels) // 2]["bitrate"] / 8 * 0.7

    res = chromium.chromium_abr(ladder.url("/"), [(15, "throttle", below_middle), (30, "release")], seconds=62,
                                after_switch_up=5)
    print({k: res[k] for k in ("levels", "switches", "actions", "fatal_errors", "advance_ratio")})
    assert chromium.abr_problems(res, 15, 30) == []
    assert [lv["height"] for lv in sorted(res["levels"], key=lambda lv: -lv["bitrate"])] == [720, 480, 360]


def test_chromium_native_hls_plays(ladder):
    """Chromium 156's own HLS player (a bare <video src=index.m3u8>, no hls.js) on a page from another port."""
    need_chromium()
    res = chromium.chromium_native_play(ladder.url("/index.m3u8"), 15)
    print({k: res[k] for k in ("started", "startup_s", "advance_ratio", "media_error", "can_play", "video_size")})
    assert res["started"], res["console"][:5]
    assert res["media_error"] is None
    assert res["advance_ratio"] >= 0.9


def test_player_page_rendition_menu(ladder, tmp_path):
    """The page's rendition menu lists Auto + each level as "720p · 2.9 Mb/s"; choosing one makes hls.js play it
    and the readout shows that rung."""
    need_chromium()
    with chromium.Browser() as b:
        b.call("Page.addScriptToEvaluateOnNewDocument", source=chromium.HOOK_JS)
        b.call("Page.navigate", url=ladder.url("/"))
        options = _wait(b, "(() => { const s = document.getElementById('quality'); return s && s.options.length > 1"
                           " ? [...s.options].map(o => [o.value, o.textContent]) : null; })()", 15)
        assert options and options[0][0] == "-1" and options[0][1].startswith("Auto"), options
        labels = [t for _, t in options[1:]]
        assert [t.split(" ")[0] for t in labels] == RUNGS and all("Mb/s" in t for t in labels), labels
        value = next(v for v, t in options if t.startswith("360p"))
        b.evaluate(f"(() => {{ const s = document.getElementById('quality'); s.value = '{value}';"
                   " s.dispatchEvent(new Event('change')); })()")
        switched = _wait(b, f"(window.__levelSwitches || []).some(x => x.level == {value}) &&"
                            " document.body.innerText.includes('360p') ? document.body.innerText : null", 15)
        assert switched, b.evaluate("document.body.innerText")
        assert b.evaluate("window.hls.currentLevel") == int(value) or b.evaluate("window.hls.nextLevel") == int(value)
        png = b.screenshot()
    (tmp_path / "player.png").write_bytes(png)
    print(f"screenshot: {tmp_path / 'player.png'}")


def _wait(b, expr, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = b.evaluate(expr)
        if v:
            return v
        time.sleep(0.25)
    return None


def test_package_ladder(origin_bin, media, tmp_path):
    need("ffmpeg", "ffprobe")
    out = str(tmp_path / "out")
    p = subprocess.run([origin_bin, "package", media["clip.mp4"], "-o", out, "--ladder", LADDER],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    res = presentation.check_vod_presentation(out)
    print(res.summary())
    assert res.errors == []
    kinds = res.kinds
    assert "audio" in kinds and set(kinds) - {"audio"} <= set(RUNGS) | {"source"}, kinds
    for name, rr in res.renditions.items():
        assert abs(rr.media_seconds - 4.0) <= 0.1, (name, rr.media_seconds)
