"""A live input whose codec parameters change mid-stream (two encodes of different sizes concatenated in MPEG-TS on
stdin, as a camera or encoder restart gives): a new init segment, EXT-X-DISCONTINUITY, continuous numbering, and
hls.js plays through the change.

The encodes are live-encoder style (x264 zerolatency: no B-frames). Two B-frame encodes concatenated overlap by
their reorder delay in decode time; hls.js then places the new timeline one frame late and stalls on a 33 ms hole
until its gap controller skips it (known, see docs/limits.md)."""
import os
import subprocess
import tempfile

from hlsharness import chromium, http, m3u8
from hlsharness.procs import stop_process
from hlsharness.testenv import need, need_chromium

PART_SECONDS = 10


def _encode(path, size, tone, offset):
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=30", "-f", "lavfi", "-i", f"sine=f={tone}:sample_rate=48000",
                    "-t", str(PART_SECONDS), "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "30",
                    "-pix_fmt", "yuv420p",
                    "-c:a", "aac", "-ac", "2", "-output_ts_offset", str(offset), "-f", "mpegts", path], check=True)


def test_resolution_change_mid_stream(start_origin):
    need("ffmpeg")
    need_chromium()
    d = tempfile.mkdtemp(prefix="fmtchange-")
    a, b, ab = (os.path.join(d, n) for n in ("a.ts", "b.ts", "ab.ts"))
    _encode(a, "640x360", 440, 0)
    _encode(b, "480x270", 660, PART_SECONDS)
    with open(ab, "wb") as out:
        for p in (a, b):
            with open(p, "rb") as f:
                out.write(f.read())
    # Paced at real time, as a live encoder would send it.
    feed = subprocess.Popen(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-re", "-i", ab, "-c", "copy",
                             "-f", "mpegts", "-"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        s = start_origin("-", "--window", "20", stdin=feed.stdout)
        feed.stdout.close()
        res = chromium.chromium_play(s.url("/"), 2 * PART_SECONDS - 4)  # ends before the input does
        print(chromium.summary(res))
        assert chromium.playback_problems(res) == [], chromium.summary(res)
        sizes = {(x.get("videoWidth"), x.get("videoHeight")) for x in res["samples"] if x.get("videoWidth")}
        assert (640, 360) in sizes and (480, 270) in sizes, f"hls.js did not play both sizes: {sizes}"

        text = http.get(s.url("/stream.m3u8")).text
        pl = m3u8.parse_media(text)
        assert "#EXT-X-DISCONTINUITY\n" in text and 'URI="init1.mp4"' in text, text
        assert [sg.seq for sg in pl.segments] == list(range(pl.media_sequence, pl.media_sequence + len(pl.segments)))
        changed = [sg for sg in pl.segments if sg.discontinuity]
        assert len(changed) == 1 and changed[0].map_uri == "init1.mp4", text
        init1 = http.get(s.url("/init1.mp4"))
        assert init1.status == 200 and init1.body != http.get(s.url("/init.mp4")).body
    finally:
        stop_process(feed)
