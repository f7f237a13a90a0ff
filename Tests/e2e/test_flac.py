"""Issue 24 §1, FLAC: FLAC audio copied untouched into fMP4 (`fLaC` + `dfLa`), for `package` and `serve`.

One fixture from FFmpeg's own encoders (H.264 from lavfi testsrc + FLAC of a sine, Matroska, 4 s), proven with
ffprobe first. `package` of it: the audio sample entry is `fLaC` with the `dfLa` FFmpeg's mov muxer writes for the
same stream; the audio samples are the input's FLAC frames byte for byte (framemd5 of `-c copy`); ffmpeg decodes
init + segments to the input's PCM exactly (FLAC is lossless: md5 of the s16 decode); CODECS says `fLaC`, the DASH
codecs `flac`, the audio rendition's CHANNELS the count. A live `serve` plays in hls.js in headless Chromium with the
browser decoding the audio. Each checker is shown to fail: on `--transcode always` output (AAC), on a flipped byte
inside a FLAC frame, on a dfLa with a changed byte.
"""
import glob
import hashlib
import os
import re
import struct
import subprocess

import pytest

from hlsharness import chromium, clients, http, mp4
from hlsharness.procs import package
from hlsharness.testenv import need, need_chromium

SECONDS = 4


def run(cmd, timeout=60):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    return p


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    need("ffmpeg", "ffprobe")
    d = tmp_path_factory.mktemp("flac")
    src = str(d / "flac_h264.mkv")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30",
         "-f", "lavfi", "-i", "sine=f=440:sample_rate=48000", "-t", str(SECONDS),
         "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "flac", "-ac", "2", src])
    # Proven first: H.264 and 48 kHz stereo FLAC, 16 bits.
    streams = clients.probe_streams(src)["streams"]
    a = [s for s in streams if s["codec_type"] == "audio"]
    assert len(a) == 1 and a[0]["codec_name"] == "flac" and a[0]["channels"] == 2 and a[0]["sample_rate"] == "48000", a
    assert a[0].get("bits_per_raw_sample") == "16", a
    assert [s["codec_name"] for s in streams if s["codec_type"] == "video"] == ["h264"]
    # FFmpeg's own mov muxer on the same stream: the reference sample entry.
    ref = str(d / "ref.mp4")
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", src, "-map", "0:a", "-c", "copy", "-strict", "-2", ref])
    return {"src": src, "ref": ref, "dir": d}


@pytest.fixture(scope="module")
def packaged(origin_bin, fixture):
    """The muxed default and a `--ladder source` package of the fixture (FLAC copied by default: no flag)."""
    out = {}
    for name, args in (("muxed", ["--log-level", "info"]), ("ladder", ["--ladder", "source"])):
        p = subprocess.run([origin_bin, "package", fixture["src"], "-o", str(fixture["dir"] / name), *args],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 0, err[-2000:]
        out[name] = (str(fixture["dir"] / name), err)
    return out


# ---- checkers (each returns a list of problems; empty = fine) ----

def flac_entry(data):
    """(channelcount, samplesize, samplerate 16.16 >> 16, dfLa box bytes) of the first `fLaC` sample entry, or None."""
    moov = next(b for b in mp4.boxes(data) if b.type == b"moov")
    for trak in mp4.find_all(data, moov, "trak"):
        stsd = mp4.find(data, trak, "mdia/minf/stbl/stsd")
        for entry in mp4.boxes(data, stsd.body + 8, stsd.end):          # FullBox header + entry_count
            if entry.type != b"fLaC":
                continue
            channels, size = struct.unpack_from(">HH", data, entry.body + 16)
            rate = struct.unpack_from(">I", data, entry.body + 24)[0] >> 16
            dfla = next((b for b in mp4.boxes(data, entry.body + 28, entry.end) if b.type == b"dfLa"), None)
            return channels, size, rate, (bytes(data[dfla.start:dfla.end]) if dfla else None)
    return None


def entry_problems(init, ref):
    """Our `fLaC` entry's fields and `dfLa` are those FFmpeg's mov muxer writes for the same stream."""
    ours, theirs = flac_entry(init), flac_entry(ref)
    if theirs is None or theirs[3] is None:
        return ["the reference has no fLaC/dfLa"]
    if ours is None:
        return ["no fLaC sample entry"]
    if ours[3] is None:
        return ["fLaC without dfLa"]
    problems = [f"{k} {a} != {b}" for k, a, b in zip(("channelcount", "samplesize", "samplerate"), ours, theirs) if a != b]
    if ours[3] != theirs[3]:
        problems.append(f"dfLa {ours[3].hex()} != FFmpeg's {theirs[3].hex()}")
    return problems


def audio_packets(path_or_url, seconds=None):
    """(size, md5) of each audio packet as ffmpeg demuxes it (`-c copy -f framemd5`: the packet bytes, untouched)."""
    cmd = ["timeout", "-s", "KILL", "60", "ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-rw_timeout", "5000000",
           "-i", path_or_url]
    if seconds:
        cmd += ["-t", str(seconds)]
    p = run(cmd + ["-map", "0:a:0", "-c", "copy", "-f", "framemd5", "-"], timeout=90)
    rows = [line.split(",") for line in p.stdout.decode().splitlines() if line and not line.startswith("#")]
    return [(int(r[4]), r[5].strip()) for r in rows]


def packet_times(path):
    """Each audio packet's presentation time in ms, as ffprobe reads it."""
    p = run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path])
    return [round(float(t) * 1000) for t in p.stdout.decode().split()]


def packet_problems(src, out, cyclic=False):
    """Empty when the output's audio packets are the input's, all of them in order (or, live, a run of the loop)."""
    if not out:
        return ["the output has no audio packets"]
    if cyclic:
        starts = [i for i, p in enumerate(src) if p == out[0]]
        if any(all(src[(s + k) % len(src)] == p for k, p in enumerate(out)) for s in starts):
            return []
        return [f"the {len(out)} output packets are no run of the input's {len(src)}"]
    if out == src:
        return []
    first = next((i for i, (a, b) in enumerate(zip(src, out)) if a != b), min(len(src), len(out)))
    return [f"{len(out)} packets out, {len(src)} in; first difference at packet {first}"]


def pcm_md5(path):
    """md5 of the first audio stream decoded to interleaved s16."""
    p = run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"])
    return hashlib.md5(p.stdout).hexdigest(), len(p.stdout)


def joined(out_dir, rendition=""):
    """init + every segment of a package, in order, as one file ffmpeg reads as fragmented MP4."""
    d = os.path.join(out_dir, rendition)
    segs = sorted(glob.glob(os.path.join(d, "seg*.m4s")), key=lambda s: int(os.path.basename(s)[3:-4]))
    path = os.path.join(d, "joined.mp4")
    with open(path, "wb") as f:
        for part in [os.path.join(d, "init.mp4")] + segs:
            f.write(open(part, "rb").read())
    return path


def attributes(line):
    """An attribute list (RFC 8216bis §4.2) as a dict, quotes removed."""
    out, key, val, quoted, in_val = {}, "", "", False, False
    for ch in line.split(":", 1)[1] + ",":
        if in_val:
            if ch == '"':
                quoted = not quoted
            elif ch == "," and not quoted:
                out[key], key, val, in_val = val, "", "", False
            else:
                val += ch
        elif ch == "=":
            in_val = True
        else:
            key += ch
    return out


def signalling_problems(multivariant, mpd, separate_audio):
    """CODECS lists fLaC (with avc1); the audio rendition's CHANNELS is 2; the MPD's audio codecs is flac."""
    lines = multivariant.splitlines()
    variants = [attributes(l) for l in lines if l.startswith("#EXT-X-STREAM-INF:")]
    problems = [] if variants else ["no EXT-X-STREAM-INF"]
    for v in variants:
        codecs = v.get("CODECS", "").split(",")
        if "fLaC" not in codecs or not any(c.startswith("avc1.") for c in codecs):
            problems.append(f"CODECS={v.get('CODECS')}")
    if separate_audio:
        media = [attributes(l) for l in lines if l.startswith("#EXT-X-MEDIA:") and "TYPE=AUDIO" in l]
        if [m.get("CHANNELS") for m in media] != ["2"]:
            problems.append(f"audio renditions' CHANNELS {[m.get('CHANNELS') for m in media]}")
    if mpd is not None:
        lists = [c.split(",") for c in re.findall(r'codecs="([^"]*)"', mpd)]
        if not any("flac" in c for c in lists) or any("fLaC" in c for c in lists):
            problems.append(f"the MPD's codecs {lists} do not say flac")
    return problems


# ---- tests ----

def test_package_copies_flac(fixture, packaged):
    """The muxed default: fLaC + FFmpeg's dfLa, the input's frames byte for byte, the input's PCM, fLaC/flac."""
    out, log = packaged["muxed"]
    assert "audio: flac 48000 Hz 2 ch copied (fLaC)" in log, log[-2000:]
    init = open(os.path.join(out, "init.mp4"), "rb").read()
    assert entry_problems(init, open(fixture["ref"], "rb").read()) == []
    playlist = os.path.join(out, "index.m3u8")
    ok, err = clients.decode_check(playlist)
    assert ok, err
    assert packet_problems(audio_packets(fixture["src"]), audio_packets(playlist)) == []
    whole = joined(out)
    assert packet_problems(audio_packets(fixture["src"]), audio_packets(whole)) == []
    # Each frame at the input's time (Matroska's ms): the durations are the frames' block sizes.
    assert packet_times(whole) == packet_times(fixture["src"])
    src_pcm, out_pcm = pcm_md5(fixture["src"]), pcm_md5(whole)
    assert src_pcm == out_pcm and out_pcm[1] == SECONDS * 48000 * 2 * 2, (src_pcm, out_pcm)
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    assert signalling_problems(open(playlist).read(), mpd, separate_audio=False) == []


def test_ladder_audio_rendition_is_flac(fixture, packaged):
    """`--ladder source`: the shared audio rendition is the FLAC copied, with CHANNELS="2" and DASH codecs flac."""
    out, _ = packaged["ladder"]
    playlist = os.path.join(out, "index.m3u8")
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    assert signalling_problems(open(playlist).read(), mpd, separate_audio=True) == []
    audio_dirs = [d for d in os.listdir(out) if os.path.exists(os.path.join(out, d, "init.mp4"))
                  and flac_entry(open(os.path.join(out, d, "init.mp4"), "rb").read())]
    assert len(audio_dirs) == 1, os.listdir(out)
    init = open(os.path.join(out, audio_dirs[0], "init.mp4"), "rb").read()
    assert entry_problems(init, open(fixture["ref"], "rb").read()) == []
    whole = joined(out, audio_dirs[0])
    assert packet_problems(audio_packets(fixture["src"]), audio_packets(whole)) == []
    assert pcm_md5(whole) == pcm_md5(fixture["src"])


def test_checkers_fail_on_aac_a_flipped_byte_and_another_dfla(origin_bin, fixture, packaged, tmp_path):
    """Each checker objects to output that is wrong its way: `--transcode always` (AAC: no fLaC, other packets,
    other PCM, mp4a in CODECS); a flipped byte inside a FLAC frame (one packet differs, the PCM differs or the decode
    fails); a dfLa with one STREAMINFO byte changed."""
    out = package(origin_bin, fixture["src"], tmp_path / "aac", "--transcode", "always")
    init = open(os.path.join(out, "init.mp4"), "rb").read()
    assert entry_problems(init, open(fixture["ref"], "rb").read()) == ["no fLaC sample entry"]
    whole = joined(out)
    assert packet_problems(audio_packets(fixture["src"]), audio_packets(whole)) != []
    assert pcm_md5(whole) != pcm_md5(fixture["src"])
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    problems = signalling_problems(open(os.path.join(out, "index.m3u8")).read(), mpd, separate_audio=False)
    assert len(problems) == 2 and "mp4a.40.2" in problems[0], problems

    ladder, _ = packaged["ladder"]
    audio_dir = next(d for d in os.listdir(ladder) if os.path.exists(os.path.join(ladder, d, "init.mp4"))
                     and flac_entry(open(os.path.join(ladder, d, "init.mp4"), "rb").read()))
    copy = tmp_path / "flipped"
    copy.mkdir()
    for f in glob.glob(os.path.join(ladder, audio_dir, "*")):
        if f.endswith((".mp4", ".m4s")) and not f.endswith("joined.mp4"):
            open(copy / os.path.basename(f), "wb").write(open(f, "rb").read())
    seg = copy / "seg1.m4s"
    data = bytearray(seg.read_bytes())
    data[len(data) - 100] ^= 0x10                                   # inside the segment's last FLAC frame
    seg.write_bytes(bytes(data))
    whole = joined(str(copy))
    packets = audio_packets(whole)
    src = audio_packets(fixture["src"])
    assert len(packets) == len(src) and sum(a != b for a, b in zip(packets, src)) == 1
    assert packet_problems(src, packets) != []
    p = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", whole, "-map", "0:a", "-f", "s16le", "-"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert p.returncode != 0 or p.stderr or hashlib.md5(p.stdout).hexdigest() != pcm_md5(fixture["src"])[0]

    ref = bytearray(open(fixture["ref"], "rb").read())
    at = ref.find(b"dfLa") + 8 + 4 + 10                               # STREAMINFO's sample rate
    ref[at] ^= 0x01
    problems = entry_problems(open(os.path.join(ladder, audio_dir, "init.mp4"), "rb").read(), bytes(ref))
    assert len(problems) == 1 and problems[0].startswith("dfLa"), problems


@pytest.mark.heavy
def test_live_flac_plays_in_hlsjs(start_origin, fixture):
    """`serve --loop` of the fixture (FLAC copied by default): CODECS says fLaC, ffmpeg's reading of the live
    playlist gives a run of the input's packets, and hls.js plays it in Chromium with the audio decoded."""
    s = start_origin(fixture["src"], "--loop")
    mv = http.get(s.url("/index.m3u8"), timeout=10)
    assert mv.status == 200 and signalling_problems(mv.text, None, separate_audio=False) == [], mv.text
    assert packet_problems(audio_packets(fixture["src"]), audio_packets(s.url("/index.m3u8"), seconds=2),
                           cyclic=True) == []
    need_chromium()
    res = chromium.chromium_play(s.url("/"), 3, screenshots=False)
    print(chromium.summary(res))
    assert res["started"] and res["version"].startswith("1.6") and not res["fatal_errors"] and not res["bad_errors"], \
        chromium.summary(res)
    # Audio is decoded and keeps being decoded: the count rises after its first non-zero sample. (Not "by the play's
    # midpoint": on a slow machine (CI 2026-11-28, 13 of 111 frames dropped) the first audio bytes were counted at
    # the 8th of 13 samples, then rose steadily: [0 x 7, 12550, 21645, ..., 54018].)
    decoded = [x.get("audioDecodedBytes") or 0 for x in res["samples"]]
    started = [d for d in decoded if d > 0]
    assert len(started) >= 2 and started[-1] > started[0], f"FLAC not decoded: {decoded}"
    times = [x.get("t") or 0 for x in res["samples"]]
    assert times[-1] >= 2.0, times
