"""ID3 timed metadata read from the input (issue 22 §1; docs/events.md): an MPEG-TS made by ffmpeg with two ID3v2.4
tags added on a stream-type-0x15 PID as Apple's timed-metadata spec carries them (hlsharness/id3ts.py), proved first
by ffprobe (a `timed_id3` data stream, the tags' PTS) and mutagen (each packet's payload, with the 5 bytes
libavformat 5.1 skips put back, is the injected tag).

- `package` (copied) and `package --ladder` write each tag as an emsg (https://aomedia.org/emsg/ID3) in the segment
  that holds its time, in every rendition, its payload the injected tag byte for byte (mutagen reads its TIT2), its
  presentation time the tag's PTS on the output timeline; the MPD declares the scheme; every media playlist lists
  each tag as an EXT-X-DATERANGE with X-ID3-TIT2, START-DATEs as far apart as the tags.
- A tag whose bytes are garbage is skipped with one warning line, and the rest goes on.
"""
import datetime
import glob
import io
import json
import os
import re
import struct
import subprocess
import xml.etree.ElementTree as ET

import pytest

from hlsharness import id3ts, mp4
from hlsharness.testenv import need, need_python

FPS = 30
TAG_TIMES = (2.5, 5.2)     # seconds after the first video frame
TITLES = ("Song one", "Song two — live")
MPD_NS = {"mpd": "urn:mpeg:dash:schema:mpd:2011"}
SCHEME = "https://aomedia.org/emsg/ID3"


@pytest.fixture(scope="module")
def id3_fixture(tmp_path_factory):
    """(path, first video PTS, [tags]) of an 8-s 320x180 TS with the two tags, and one more path with a garbage tag
    between them."""
    need("ffmpeg", "ffprobe")
    d = tmp_path_factory.mktemp("id3")
    base = str(d / "base.ts")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc=size=320x180:rate={FPS}",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "8",
                    "-c:v", "libx264", "-preset", "ultrafast", "-bf", "0", "-g", str(FPS), "-keyint_min", str(FPS),
                    "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-f", "mpegts", base],
                   check=True, timeout=60)
    probe = json.loads(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries",
                                       "stream=start_pts", "-of", "json", base],
                                      capture_output=True, check=True, timeout=20).stdout)
    video_pts = int(probe["streams"][0]["start_pts"])
    tags = [(video_pts + int(t * id3ts.TICKS), id3ts.text_tag(title)) for t, title in zip(TAG_TIMES, TITLES)]
    with open(base, "rb") as f:
        data = f.read()
    path, bad = str(d / "id3.ts"), str(d / "id3-garbage.ts")
    with open(path, "wb") as f:
        f.write(id3ts.inject(data, tags))
    garbage = (video_pts + int(4.0 * id3ts.TICKS), b"\x00not an ID3 tag at all\x00")
    with open(bad, "wb") as f:
        f.write(id3ts.inject(data, tags + [garbage]))
    return path, video_pts, tags, bad


def test_fixture_carries_the_tags(id3_fixture):
    """ffprobe: a timed_id3 stream whose packets are at the tags' PTS; mutagen reads each packet's payload (libavformat
    5.1 drops its first 5 bytes, "ID3" and the version: put back here) as the injected tag."""
    need_python("mutagen")
    from mutagen.id3 import ID3
    path, _, tags, _ = id3_fixture
    out = json.loads(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "d", "-show_entries",
                                     "stream=codec_name:packet=pts,data", "-show_data", "-of", "json", path],
                                    capture_output=True, check=True, timeout=20).stdout)
    assert [s["codec_name"] for s in out["streams"]] == ["timed_id3"]
    assert [int(p["pts"]) for p in out["packets"]] == [t for t, _ in tags]
    for p, (_, tag) in zip(out["packets"], tags):
        payload = bytes.fromhex("".join(ln.split(":", 1)[1][:40].replace(" ", "") for ln in p["data"].splitlines() if ":" in ln))
        restored = tag[:5] + payload if not payload.startswith(b"ID3") else payload
        assert restored == tag
    assert [str(ID3(io.BytesIO(t))["TIT2"]) for _, t in tags] == list(TITLES)


def emsgs(data):
    """The emsg boxes (version 1) before a segment's first moof: (scheme, timescale, time, payload)."""
    out = []
    for b in mp4.boxes(data):
        if b.type == b"moof":
            break
        if b.type == b"emsg":
            p = b.start + b.header
            assert data[p] == 1, "emsg version 1"
            timescale, time_, _duration, _id = struct.unpack_from(">IQII", data, p + 4)
            scheme, _value, payload = data[p + 24:b.start + b.size].split(b"\0", 2)
            out.append((scheme.decode(), timescale, time_, payload))
    return out


def package(origin_bin, src, out, *extra):
    p = subprocess.run([origin_bin, "package", src, "-o", out, *extra], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return p.stderr.decode(errors="replace")


def messages_by_rendition(out):
    """{rendition directory or prefix: [(segment file, emsg)]} for every .m4s under out."""
    found = {}
    for seg in sorted(glob.glob(os.path.join(out, "**", "*.m4s"), recursive=True)):
        with open(seg, "rb") as f:
            for m in emsgs(f.read()):
                if m[0] == SCHEME:
                    key = os.path.relpath(seg, out).rsplit("seg", 1)[0] or "."
                    found.setdefault(key, []).append((os.path.basename(seg), m))
    return found


@pytest.mark.parametrize("ladder", [False, True], ids=["copied", "ladder"])
def test_package_writes_each_tag_as_an_emsg_in_every_rendition(origin_bin, id3_fixture, tmp_path, ladder):
    need_python("mutagen")
    from mutagen.id3 import ID3
    path, video_pts, tags, _ = id3_fixture
    out = str(tmp_path / "vod")
    package(origin_bin, path, out, *(["--ladder", "180,120"] if ladder else []))
    found = messages_by_rendition(out)
    expected = 3 if ladder else 1     # two rungs and the audio, or the one muxed rendition
    assert len(found) == expected, found.keys()
    times = set()
    for key, ms in found.items():
        assert [m[3] for _, m in ms] == [t for _, t in tags], key        # byte for byte, in order
        assert [str(ID3(io.BytesIO(m[3]))["TIT2"]) for _, m in ms] == list(TITLES)
        # Each tag's presentation time is its PTS on the output timeline: the tags are TAG_TIMES apart.
        (t0, s0), (t1, s1) = [(m[2], m[1]) for _, m in ms]
        assert abs((t1 / s1 - t0 / s0) - (TAG_TIMES[1] - TAG_TIMES[0])) < 0.002, (key, ms)
        times.add(tuple((m[1], m[2]) for _, m in ms))
        # ...and each is in a segment no later than the one holding its time (1-s keyframes: 1-s-ish segments).
        assert ms[0][0] != ms[1][0], "two tags 2.7 s apart are in different segments"
    assert len(times) == 1, "the same times in every rendition"
    # HLS lists each tag's text frames: an EXT-X-DATERANGE with X-ID3-TIT2, its START-DATE on the PDT clock.
    playlists = [p for p in glob.glob(os.path.join(out, "**", "*.m3u8"), recursive=True)
                 if "#EXT-X-TARGETDURATION" in open(p).read() and "#EXT-X-I-FRAMES-ONLY" not in open(p).read()]
    assert playlists
    for p in playlists:
        ranges = [dict(re.findall(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', ln.split(":", 1)[1]))
                  for ln in open(p).read().splitlines() if ln.startswith("#EXT-X-DATERANGE:")]
        assert [r.get("X-ID3-TIT2", "").strip('"') for r in ranges] == list(TITLES), (p, ranges)
        starts = [datetime.datetime.fromisoformat(r["START-DATE"].strip('"').replace("Z", "+00:00")) for r in ranges]
        assert abs((starts[1] - starts[0]).total_seconds() - (TAG_TIMES[1] - TAG_TIMES[0])) < 0.002, ranges
    mpd = ET.parse(os.path.join(out, "manifest.mpd")).getroot()
    sets = mpd.findall("mpd:Period/mpd:AdaptationSet", MPD_NS)
    assert sets and all(a.find("mpd:InbandEventStream", MPD_NS) is not None and
                        a.find("mpd:InbandEventStream", MPD_NS).get("schemeIdUri") == SCHEME for a in sets)


def test_a_garbage_tag_is_skipped_with_one_line(origin_bin, id3_fixture, tmp_path):
    _, _, tags, bad = id3_fixture
    out = str(tmp_path / "vod")
    log = package(origin_bin, bad, out)
    lines = [ln for ln in log.splitlines() if "skipping ID3 timed metadata" in ln]
    assert len(lines) == 1 and "not one whole ID3v2.3/2.4 tag" in lines[0], log
    found = messages_by_rendition(out)
    assert [m[3] for _, m in next(iter(found.values()))] == [t for _, t in tags]
