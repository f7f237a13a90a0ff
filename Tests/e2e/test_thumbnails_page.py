"""The player page with thumbnail tiles (issue 24 §2): when the stream has `thumbnails.vtt`, the page shows a seek bar
over the seekable (DVR) window, and hovering it shows the tile for the hovered time. Checked in headless Chromium:
the mouse moved over the bar (CDP `Input.dispatchMouseEvent`) shows the preview; the hovered time, mapped to media
time with hls.js's initPTS, falls in the cue the page chose; a screenshot of the preview looks like the input's
frame at that tile's time (mean absolute luma difference under a bound) and unlike the frame a tile later.

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


def frame_png(src, t):
    p = subprocess.run(["ffmpeg", "-v", "error", "-ss", f"{t:.3f}", "-i", src, "-vf", f"scale={TILE_W}:{TILE_H}:flags=bicubic",
                        "-frames:v", "1", "-c:v", "png", "-pix_fmt", "rgb24", "-f", "image2pipe", "-"],
                       capture_output=True, timeout=30)
    assert p.returncode == 0 and p.stdout[:4] == b"\x89PNG", p.stderr[-300:]
    return p.stdout


def test_hovering_the_seek_bar_shows_the_tile(origin_bin, scrolling, hlsjs):  # noqa: F811
    need("ffmpeg")
    need_chromium()
    with procs.serving(origin_bin, [scrolling, "--loop", "--thumbnails", "--thumbnail-grid", "2x2", "--window", "20",
                                    "--part-duration", "0"], "thumbnails page") as s:
        deadline = time.time() + 30
        while time.time() < deadline:
            r = http.get(s.url("/thumbnails.m3u8"))
            if r.status == 200 and len(parse_image_playlist(r.text)[1]) >= 2:
                break
            time.sleep(0.5)
        else:
            pytest.fail("fewer than 2 sheets after 30 s")
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
                if state["t"] > 1 and state["cues"] >= 8 and state["shown"] and state["offset"] and state["max"] - state["min"] > 6:
                    break
                time.sleep(0.5)
            assert state and state["shown"] and state["cues"] >= 8 and state["max"] - state["min"] > 6, state
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
            b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y - 200)
            time.sleep(0.2)
            assert b.evaluate("getComputedStyle(document.getElementById('preview')).display") == "none"
