"""The player page with thumbnail tiles (issue 24 §2): when the stream has `thumbnails.vtt`, the page shows a seek bar
over the seekable (DVR) window, and hovering it shows the tile for the hovered time. Checked in headless Chromium:
the mouse moved over the bar (CDP `Input.dispatchMouseEvent`) shows the preview; the hovered time, mapped to media
time with hls.js's initPTS, falls in the cue the page chose; a screenshot of the preview looks like the input's
frame at that tile's time (mean absolute luma difference under a bound) and unlike the frame a tile later; and the
video itself, paused at the tile's time in the element's own time, shows that picture (the window has moved on when
the page opens, so media time and the element's time differ and the mapping counts).

A Chromium module: listed in HEAVY_MODULES (and so solo) in conftest.py. About 30 seconds.
"""
import subprocess
import time

import pytest

from hlsharness import chromium, http, procs
from hlsharness.testenv import need, need_chromium
from test_thumbnails import TILE_H, TILE_W, parse_image_playlist, scrolling  # noqa: F401 (a fixture)

# Measured: 1.8 (of 255) from the frame at the tile's time, 96 from the frame a tile later.
SAME_BOUND = 12
DIFFERENT_BOUND = 40
# The tile against the video element's own picture at the tile's time (Chromium's decode and scaling to 1068 px, then
# ffmpeg's to 160): measured 13.9-14.0; a tile later (what a mapping off by a tile's time would show) 89.7.
VIDEO_BOUND = 30


def frame_png(src, t):
    p = subprocess.run(["ffmpeg", "-v", "error", "-ss", f"{t:.3f}", "-i", src, "-vf", f"scale={TILE_W}:{TILE_H}:flags=bicubic",
                        "-frames:v", "1", "-c:v", "png", "-pix_fmt", "rgb24", "-f", "image2pipe", "-"],
                       capture_output=True, timeout=30)
    assert p.returncode == 0 and p.stdout[:4] == b"\x89PNG", p.stderr[-300:]
    return p.stdout


def video_picture(b, t):
    """The video element's picture paused at `t` (its own time), controls hidden, as a tile-sized PNG."""
    b.evaluate(f"(() => {{ const v = document.querySelector('video'); v.controls = false; v.pause(); v.currentTime = {t}; }})()")
    deadline = time.time() + 10
    while time.time() < deadline:
        v = b.evaluate("(() => { const v = document.querySelector('video'); v.scrollIntoView({ block: 'start' });"
                       " const r = v.getBoundingClientRect(); return { t: v.currentTime, seeking: v.seeking,"
                       " ready: v.readyState, x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height }; })()")
        if not v["seeking"] and v["ready"] >= 2 and abs(v["t"] - t) < 0.05:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"the video did not seek to {t}: {v}")
    time.sleep(0.5)
    png = b.screenshot({"x": v["x"], "y": v["y"], "width": v["w"], "height": v["h"]})
    p = subprocess.run(["ffmpeg", "-v", "error", "-f", "png_pipe", "-i", "-", "-vf", f"scale={TILE_W}:{TILE_H}:flags=bicubic",
                        "-c:v", "png", "-pix_fmt", "rgb24", "-f", "image2pipe", "-"], input=png, capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr[-300:]
    return p.stdout


def test_hovering_the_seek_bar_shows_the_tile(origin_bin, scrolling, hlsjs):  # noqa: F811
    need("ffmpeg")
    need_chromium()
    with procs.serving(origin_bin, [scrolling, "--loop", "--thumbnails", "--thumbnail-grid", "2x2", "--window", "8",
                                    "--part-duration", "0"], "thumbnails page") as s:
        # The page opens once the window has moved on (the first sheet left it): media time and the video element's
        # time differ then, and the page must map one to the other.
        deadline = time.time() + 40
        while time.time() < deadline:
            r = http.get(s.url("/thumbnails.m3u8"))
            if r.status == 200 and parse_image_playlist(r.text)[0] >= 1:
                break
            time.sleep(0.5)
        else:
            pytest.fail("the first sheet never left the window")
        with chromium.Browser() as b:
            b.call("Page.navigate", url=s.url("/"))
            state = None
            deadline = time.time() + 20
            while time.time() < deadline:
                state = b.evaluate("""(() => { const v = document.querySelector('video'), p = window.player || {};
                    const seek = document.getElementById('seek');
                    if (seek) seek.scrollIntoView({ block: 'center' });
                    const r = seek && seek.getBoundingClientRect();
                    return { t: v ? v.currentTime : 0, cues: p.tiles ? p.tiles.cues.length : 0,
                             offset: p.tiles ? p.tiles.offset : null, shown: !(document.getElementById('dvr') || { hidden: true }).hidden,
                             min: seek ? Number(seek.min) : 0, max: seek ? Number(seek.max) : 0,
                             rect: r ? { x: r.x, y: r.y, width: r.width, height: r.height } : null }; })()""")
                if state["t"] > 1 and state["cues"] >= 8 and state["shown"] and state["max"] - state["min"] > 4:
                    break
                time.sleep(0.5)
            assert state and state["shown"] and state["cues"] >= 8 and state["max"] - state["min"] > 4, state
            r = state["rect"]
            # Hover a quarter of the way into the window: an older tile, not the one playing.
            x, y = r["x"] + r["width"] * 0.25, r["y"] + r["height"] / 2
            b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            time.sleep(0.5)  # the sheet loads as the preview's background
            hovered = b.evaluate("""(() => { const p = window.player, e = document.getElementById('preview');
                const r = e.getBoundingClientRect();
                return { tile: p.hoveredTile, offset: p.tiles.offset, display: getComputedStyle(e).display,
                         scroll: { x: scrollX, y: scrollY },
                         bg: e.style.backgroundImage, pos: e.style.backgroundPosition,
                         rect: { x: r.x, y: r.y, width: r.width, height: r.height } }; })()""")
            tile = hovered["tile"]
            assert tile and hovered["display"] == "block", hovered
            expected_time = state["min"] + 0.25 * (state["max"] - state["min"])
            assert abs(tile["time"] - expected_time) < 2, (tile, state)
            media = tile["time"] + hovered["offset"]
            vtt = http.get(s.url("/thumbnails.vtt")).text
            from test_thumbnails import parse_vtt
            cue = next(c for c in parse_vtt(vtt) if c[0] <= media < c[1])
            assert tile["url"].endswith("/" + cue[2]) and (tile["x"], tile["y"]) == cue[3][:2], (tile, cue)
            assert hovered["pos"] == f"{-cue[3][0]}px {-cue[3][1]}px" or (cue[3][:2] == (0, 0) and hovered["pos"] in ("0px 0px", "")), hovered
            # What the viewer sees inside the preview's 2-px border.
            pr = hovered["rect"]
            # Screenshot clips are in page coordinates: the bounding rectangle is in the (scrolled) viewport's.
            shot = b.screenshot({"x": pr["x"] + hovered["scroll"]["x"] + 2, "y": pr["y"] + hovered["scroll"]["y"] + 2,
                                 "width": TILE_W, "height": TILE_H})
            at = cue[0] % 12
            same = chromium.mean_abs_diff(shot, frame_png(scrolling, at))
            other = chromium.mean_abs_diff(shot, frame_png(scrolling, (at + 1) % 12))
            print(f"hovered tile {cue}: luma difference {same:.1f} from the frame at its time, {other:.1f} a tile later")
            assert same < SAME_BOUND < DIFFERENT_BOUND < other, (cue, same, other)
            # The video itself at the tile's time (the cue's start, in the element's time): the picture the tile stands
            # for, so the page's mapping from media time to the element's time is right (controls hidden: they cover it).
            target = cue[0] - hovered["offset"] + 0.01
            at_tile = chromium.mean_abs_diff(shot, video_picture(b, target))
            a_tile_later = chromium.mean_abs_diff(shot, video_picture(b, target + 1))
            print(f"offset {hovered['offset']:.3f} s; the video at {target:.3f} s: luma difference {at_tile:.1f} from the "
                  f"tile, {a_tile_later:.1f} a tile later")
            assert at_tile < VIDEO_BOUND < DIFFERENT_BOUND < a_tile_later, (target, at_tile, a_tile_later)
            b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y - 200)
            time.sleep(0.2)
            assert b.evaluate("getComputedStyle(document.getElementById('preview')).display") == "none"
