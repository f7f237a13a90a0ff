"""The bench's glass-to-glass figure reads the test pattern's burnt-in clock from screenshots
(`hlsharness/clockread.py`). Here the reader is checked on frames decoded from the origin's own segments, full size
and at the 640x360 a player page shows: the clock it reads is the segment's EXT-X-PROGRAM-DATE-TIME (the same
wall clock, stamped on the same frame) within half a second. About 10 seconds."""
import subprocess

from hlsharness import clockread, http, m3u8, procs
from hlsharness.testenv import need


def first_frame_gray(data, size):
    p = subprocess.run(["ffmpeg", "-v", "error", "-i", "-", "-frames:v", "1", "-vf", f"scale={size[0]}:{size[1]}",
                        "-f", "rawvideo", "-pix_fmt", "gray", "-"], input=data, capture_output=True, timeout=30)
    assert p.returncode == 0 and len(p.stdout) == size[0] * size[1], p.stderr[-300:]
    return p.stdout


def test_clock_reader_reads_the_frames_clock(origin_bin):
    need("ffmpeg")
    with procs.serving(origin_bin, ["--test-pattern-size", "1280x720", "--window", "4"], "clock server") as s:
        for _ in range(100):
            pl = m3u8.parse_media(http.get(s.url("/stream.m3u8")).text)
            if len(pl.segments) >= 2:
                break
        seg = pl.segments[-1]
        data = http.get(s.url("/init.mp4")).body + http.get(s.url("/" + seg.uri)).body
    pdt = seg.pdt if seg.pdt is not None else seg.pdt_computed
    for size, place in (((1280, 720), (1.0, 0, 0)), ((640, 360), (0.5, 0, 0)),
                        ((700, 500), clockread.contain_place((1280, 720), (700, 500)))):
        k, x0, y0 = place
        shown = (round(1280 * k) & ~1, round(720 * k) & ~1)
        gray = first_frame_gray(data, shown)
        if size == (700, 500):
            # letterboxed in a taller box, as <video> shows it (object-fit: contain): the picture centred
            box = bytearray(700 * 500)
            ox, oy = round(x0), round(y0)
            for y in range(shown[1]):
                box[(oy + y) * 700 + ox:(oy + y) * 700 + ox + shown[0]] = gray[y * shown[0]:(y + 1) * shown[0]]
            gray, width = bytes(box), 700
        else:
            width = shown[0]
        ms = clockread.read_clock(lambda x, y: gray[y * width + x], (1280, 720), place)
        assert ms is not None, f"no clock read at {size}"
        t = clockread.clock_at(ms, pdt)
        assert abs(t - pdt) < 0.5, (size, ms, t, pdt)
