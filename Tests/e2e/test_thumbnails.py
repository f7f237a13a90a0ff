"""Thumbnail tiles (issue 24 §2, `--thumbnails`): JPEG sheets of tiles, the HLS Image Media Playlist
(`EXT-X-IMAGE-STREAM-INF`, `EXT-X-IMAGES-ONLY`, `EXT-X-TILES`), the DASH thumbnail AdaptationSet
(`http://dashif.org/thumbnail_tile`) and the WebVTT `#xywh` sprite list, from `package` and from a live ladder.

The input scrolls a test picture by 1% of its width per frame (30% a second), so the tile for time t is checked
against the frame ffmpeg extracts from the input at t and scales to the tile size (mean absolute RGB difference
under a bound), and against the frame one tile later, which must differ by far more (the check can fail). The image
playlist, the WebVTT list and the MPD are parsed and must name the same sheets and rectangles; over HTTPS a sheet is
the same over HTTP/2 and HTTP/1.1, fast path and full path. About 25 seconds.
"""
import math
import os
import re
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from hlsharness import http, procs
from hlsharness.testenv import need
from test_tls import cert, curl  # noqa: F401 (a fixture)

TILE_W, TILE_H = 160, 90
# A tile against the input's frame at its time, both scaled to 160x90 (JPEG at q 5 and two bicubic scalings apart):
# measured 3.2-4.6 (of 255); against the next frame (1/30 s later) 16-20, so the bound shows the tile is the frame at
# its time and not a neighbour; against the frame a tile later (the picture moved 30% of its width) about 125.
SAME_BOUND = 10
DIFFERENT_BOUND = 60


@pytest.fixture(scope="module")
def scrolling(tmp_path_factory):
    """12 s of 640x360 at 30 fps, a keyframe every second (one segment each), the picture scrolling sideways."""
    need("ffmpeg", "ffprobe")
    path = str(tmp_path_factory.mktemp("thumbs") / "scroll.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30,scroll=horizontal=0.01",
                    "-t", "12", "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-keyint_min", "30",
                    "-sc_threshold", "0", "-pix_fmt", "yuv420p", path], check=True, timeout=60)
    return path


def rgb(args, data=None, size=(TILE_W, TILE_H)):
    """ffmpeg's decode of `args` (an input and filters) as packed rgb24 of `size`."""
    p = subprocess.run(["ffmpeg", "-v", "error", *args, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                       input=data, capture_output=True, timeout=30)
    assert p.returncode == 0 and len(p.stdout) == size[0] * size[1] * 3, (args, p.returncode, len(p.stdout), p.stderr[-300:])
    return p.stdout


def sheet_rgb(jpeg):
    """A sheet's pixels and size, decoded by ffmpeg (it must be a JPEG ffmpeg reads)."""
    assert jpeg[:2] == b"\xff\xd8", "not a JPEG"
    probe = subprocess.run(["ffprobe", "-v", "error", "-f", "jpeg_pipe", "-i", "-", "-show_entries",
                            "stream=width,height,codec_name", "-of", "csv=p=0"], input=jpeg, capture_output=True, timeout=20)
    codec, w, h = (probe.stdout.decode().strip() + ",,").split(",")[:3]
    assert codec == "mjpeg", (codec, probe.stderr[-300:])
    w, h = int(w), int(h)
    return rgb(["-f", "image2pipe", "-c:v", "mjpeg", "-i", "-"], data=jpeg, size=(w, h)), (w, h)


def crop(pixels, size, x, y, w, h):
    row = size[0] * 3
    return b"".join(pixels[(y + j) * row + x * 3:(y + j) * row + (x + w) * 3] for j in range(h))


def frame_at(src, t):
    """The input's frame at `t` seconds (decoded from the keyframe before it), scaled to the tile size."""
    return rgb(["-ss", f"{t:.3f}", "-i", src, "-vf", f"scale={TILE_W}:{TILE_H}:flags=bicubic"])


def mean_abs_diff(a, b):
    assert len(a) == len(b)
    return sum(abs(x - y) for x, y in zip(a, b)) / len(a)


def parse_image_playlist(text):
    """(media sequence, [(tiles attributes, EXTINF seconds, uri)], ended) of an Image Media Playlist."""
    lines = text.strip().splitlines()
    assert lines[0] == "#EXTM3U" and "#EXT-X-IMAGES-ONLY" in lines, text
    seq = int(next(l.split(":")[1] for l in lines if l.startswith("#EXT-X-MEDIA-SEQUENCE:")))
    sheets, tiles, extinf = [], None, None
    for line in lines:
        if line.startswith("#EXT-X-TILES:"):
            tiles = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
        elif line.startswith("#EXTINF:"):
            extinf = float(line.split(":")[1].rstrip(","))
        elif not line.startswith("#"):
            assert tiles is not None and extinf is not None, text
            sheets.append((tiles, extinf, line))
            tiles = extinf = None
    return seq, sheets, "#EXT-X-ENDLIST" in lines


def parse_vtt(text):
    """[(start, end, sheet uri, (x, y, w, h))] of a WebVTT sprite list."""
    assert text.startswith("WEBVTT\n"), text[:40]

    def seconds(s):
        h, m, rest = s.strip().split(":")
        return int(h) * 3600 + int(m) * 60 + float(rest)
    cues = []
    for block in text.split("\n\n")[1:]:
        timing, payload = block.strip().split("\n")
        start, end = (seconds(x) for x in timing.split("-->"))
        uri, xywh = payload.split("#xywh=")
        cues.append((start, end, uri, tuple(int(v) for v in xywh.split(","))))
    return cues


def check_listings(playlist_text, vtt_text, columns, rows, interval=1.0):
    """The image playlist and the WebVTT list describe the same tiles: sheet k of the playlist holds the cues of its
    time span, at the raster positions of a `columns`x`rows` grid of 160x90 tiles. Returns the cues."""
    seq, sheets, _ = parse_image_playlist(playlist_text)
    cues = parse_vtt(vtt_text)
    assert sheets and cues
    per = columns * rows
    start = sheets[0][2]
    t = int(re.search(r"(\d+)\.jpg", start).group(1)) * per * interval
    by_sheet = {}
    for tiles, extinf, uri in sheets:
        assert tiles == {"RESOLUTION": f"{TILE_W}x{TILE_H}", "LAYOUT": f"{columns}x{rows}", "DURATION": f"{interval:.1f}"}, tiles
        by_sheet[uri] = (t, t + extinf)
        t += extinf
    assert int(re.search(r"(\d+)\.jpg", start).group(1)) == seq, "the media sequence is the first sheet's number"
    for start_t, end_t, uri, (x, y, w, h) in cues:
        assert uri in by_sheet, (uri, list(by_sheet))
        lo, hi = by_sheet[uri]
        assert lo <= start_t and end_t <= hi + 1e-6 and abs(end_t - start_t - interval) < 1e-6, (uri, start_t, lo, hi)
        i = round((start_t - lo) / interval)
        assert (x, y, w, h) == ((i % columns) * TILE_W, (i // columns) * TILE_H, TILE_W, TILE_H), (uri, start_t, x, y)
    for (a, b) in zip(cues, cues[1:]):
        assert abs(b[0] - a[1]) < 1e-6, "cues follow each other"
    return cues


def check_tiles(cues, fetch, src, times, loop=None):
    """The tile of each time in `times` looks like the input's frame there, and unlike the frame a tile later."""
    sheets = {}
    for t in times:
        cue = next(c for c in cues if c[0] <= t < c[1])
        if cue[2] not in sheets:
            sheets[cue[2]] = sheet_rgb(fetch(cue[2]))
        pixels, size = sheets[cue[2]]
        tile = crop(pixels, size, *cue[3])
        at = cue[0] % loop if loop else cue[0]
        same = mean_abs_diff(tile, frame_at(src, at))
        other = mean_abs_diff(tile, frame_at(src, (at + 1) % (loop or 1e9)))
        assert same < SAME_BOUND < DIFFERENT_BOUND < other, (t, cue, same, other)


def check_dash(mpd_text, columns, rows, sheet_count, start_number=None):
    ns = {"d": "urn:mpeg:dash:schema:mpd:2011"}
    root = ET.fromstring(mpd_text)
    sets = [a for a in root.iter("{urn:mpeg:dash:schema:mpd:2011}AdaptationSet") if a.get("contentType") == "image"]
    assert len(sets) == 1, mpd_text
    a = sets[0]
    assert a.get("mimeType") == "image/jpeg"
    rep = a.find("d:Representation", ns)
    assert (int(rep.get("width")), int(rep.get("height"))) == (columns * TILE_W, rows * TILE_H)
    prop = rep.find("d:EssentialProperty", ns)
    assert prop.get("schemeIdUri") == "http://dashif.org/thumbnail_tile" and prop.get("value") == f"{columns}x{rows}"
    tpl = a.find("d:SegmentTemplate", ns)
    assert tpl.get("media") == "thumbnails/$Number$.jpg"
    if start_number is not None:
        assert int(tpl.get("startNumber")) == start_number
    count = sum(1 + int(s.get("r", "0")) for s in tpl.find("d:SegmentTimeline", ns))
    assert count == sheet_count, mpd_text
    ids = [x.get("id") for x in root.iter("{urn:mpeg:dash:schema:mpd:2011}AdaptationSet")]
    assert len(ids) == len(set(ids)), ids


def test_package_writes_sheets_playlists_and_sprites(origin_bin, scrolling, tmp_path):
    out = str(tmp_path / "out")
    p = subprocess.run([origin_bin, "package", scrolling, "-o", out, "--thumbnails", "--thumbnail-grid", "3x2"],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert sorted(os.listdir(os.path.join(out, "thumbnails"))) == ["0.jpg", "1.jpg"]
    master = open(os.path.join(out, "index.m3u8")).read()
    assert '#EXT-X-IMAGE-STREAM-INF:' in master
    inf = re.search(r"#EXT-X-IMAGE-STREAM-INF:(.*)", master).group(1)
    assert re.search(r'BANDWIDTH=\d+', inf) and "RESOLUTION=160x90" in inf and 'CODECS="jpeg"' in inf \
        and 'URI="thumbnails.m3u8"' in inf, inf
    playlist = open(os.path.join(out, "thumbnails.m3u8")).read()
    seq, sheets, ended = parse_image_playlist(playlist)
    assert ended and seq == 0 and "#EXT-X-PLAYLIST-TYPE:VOD" in playlist
    assert [s[1] for s in sheets] == [6.0, 6.0] and [s[2] for s in sheets] == ["thumbnails/0.jpg", "thumbnails/1.jpg"]
    cues = check_listings(playlist, open(os.path.join(out, "thumbnails.vtt")).read(), 3, 2)
    assert len(cues) == 12 and cues[0][0] == 0 and cues[-1][1] == 12
    for name in ("0.jpg", "1.jpg"):
        _, size = sheet_rgb(open(os.path.join(out, "thumbnails", name), "rb").read())
        assert size == (480, 180)
    check_tiles(cues, lambda uri: open(os.path.join(out, uri), "rb").read(), scrolling, [0.5, 4.5, 7.5, 10.5])
    check_dash(open(os.path.join(out, "manifest.mpd")).read(), 3, 2, 2, start_number=0)


def test_package_without_thumbnails_lists_none(origin_bin, scrolling, tmp_path):
    out = str(tmp_path / "out")
    p = subprocess.run([origin_bin, "package", scrolling, "-o", out], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert not os.path.exists(os.path.join(out, "thumbnails.m3u8"))
    assert "IMAGE-STREAM-INF" not in open(os.path.join(out, "index.m3u8")).read()
    assert 'contentType="image"' not in open(os.path.join(out, "manifest.mpd")).read()


def test_live_ladder_sheets_move_with_the_window(origin_bin, scrolling):
    """A live ladder (360p and 240p encoded, tiles from the 240p rung) of the looped input, 2x2 sheets (4 s) and a
    4-segment window: sheets appear as the stream goes, the first leaves with the window (404), a sheet is the same
    on the fast path (HTTP/1.1 and HTTP/2 read the same route table) and the full path, and its tiles match the input
    at their time modulo the loop."""
    with procs.serving(origin_bin, [scrolling, "--loop", "--ladder", "360,240", "--thumbnails", "--thumbnail-grid", "2x2",
                                    "--window", "4", "--part-duration", "0"], "thumbnails ladder") as s:
        deadline = time.time() + 40
        seq, sheets = 0, []
        while time.time() < deadline:
            r = http.get(s.url("/thumbnails.m3u8"))
            if r.status == 200:
                seq, sheets, ended = parse_image_playlist(r.text)
                assert not ended
                if seq >= 1:
                    break
            time.sleep(0.5)
        assert seq >= 1, f"the first sheet never left the window ({sheets})"
        assert http.get(s.url("/thumbnails/0.jpg")).status == 404, "a sheet that left the window is gone"
        master = http.get(s.url("/index.m3u8")).text
        assert re.search(r'#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=\d+,RESOLUTION=160x90,CODECS="jpeg",URI="thumbnails.m3u8"',
                         master), master
        playlist = http.get(s.url("/thumbnails.m3u8")).text
        vtt = http.get(s.url("/thumbnails.vtt"))
        assert vtt.status == 200 and vtt.header("content-type", "").startswith("text/vtt")
        cues = check_listings(playlist, vtt.text, 2, 2)
        seq, sheets, _ = parse_image_playlist(playlist)
        uri = sheets[-1][2]
        fast, full = http.get(s.url("/" + uri)), http.get(s.url("/" + uri + "?x=1"))
        assert fast.status == full.status == 200 and fast.body == full.body
        assert fast.header("content-type") == "image/jpeg" and "immutable" in fast.header("cache-control", "")
        assert {k: v for k, v in fast.headers.items() if k != "date"} == {k: v for k, v in full.headers.items() if k != "date"}
        check_tiles(cues, lambda u: http.get(s.url("/" + u)).body, scrolling,
                    [cues[0][0] + 0.5, cues[-1][0] + 0.5], loop=12)
        check_dash(http.get(s.url("/manifest.mpd")).text, 2, 2, len(sheets), start_number=seq)


def test_sheets_over_http2(start_origin, scrolling, cert):  # noqa: F811 (cert: test_tls's fixture)
    """HTTPS with ALPN h2: a sheet comes the same over HTTP/2 (the h2 fast path; the full path for `?x=1`) as over
    HTTP/1.1, and so does the image playlist."""
    s = start_origin(scrolling, "--loop", "--thumbnails", "--thumbnail-grid", "1x1", "--part-duration", "0",
                     "--tls-cert", cert[0], "--tls-key", cert[1], wait=False)
    base = f"https://127.0.0.1:{s.port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        rc, out, _ = curl("-o", "/dev/null", "-w", "%{http_code}", base + "/thumbnails/1.jpg")
        if out == "200":
            break
        time.sleep(0.3)
    else:
        pytest.fail(f"no sheet over https: {s.stderr()[-1000:]}")
    bodies = {}
    body = os.path.join(s.workdir, "sheet.jpg")
    for path in ("/thumbnails/1.jpg", "/thumbnails/1.jpg?x=1"):
        for version in ("--http2", "--http1.1"):
            rc, meta, err = curl(version, "-w", "%{http_version} %{http_code} %{content_type}", "-o", body, base + path)
            assert rc == 0 and meta.split() == ["2" if version == "--http2" else "1.1", "200", "image/jpeg"], \
                (path, version, meta, err)
            bodies[(path, version)] = open(body, "rb").read()
    assert len(set(bodies.values())) == 1 and list(bodies.values())[0][:2] == b"\xff\xd8", {k: len(v) for k, v in bodies.items()}
    rc, out, _ = curl("--http2", base + "/thumbnails.m3u8")
    assert rc == 0 and "#EXT-X-IMAGES-ONLY" in out and "LAYOUT=1x1" in out, out
