"""Issue 24 §1, audio: Opus, AC-3 and E-AC-3 copied untouched (`--transcode never`).

Fixtures come from FFmpeg's own encoders (libopus, ac3, eac3; H.264 video from lavfi testsrc, or audio alone), each
proven with ffprobe before use. `package` and a short live `serve --loop` are read back the way users read them:
ffmpeg reads every playlist to the end without a word on stderr, the audio packets ffmpeg demuxes from the output are
byte for byte the input's (framemd5 of `-c copy`), CODECS and CHANNELS in the multivariant playlist and the DASH
channel configuration are the codec's, and an Opus + H.264 stream plays in hls.js in headless Chromium. Each
checker is shown to fail on output that is wrong in the way it looks for (re-encoded audio, a flipped byte, a cut
segment).
"""
import os
import subprocess

import pytest

from hlsharness import clients, http
from hlsharness.testenv import need
from hlsharness.procs import package

# file name (its container) -> (audio encoder flags, with H.264 video, expected codec_name, channels)
FIXTURES = {
    "opus_h264.mp4": (["-c:a", "libopus", "-b:a", "96k", "-ac", "2"], True, "opus", 2),
    "ac3_51_h264.ts": (["-af", "pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0", "-c:a", "ac3", "-b:a", "384k"], True, "ac3", 6),
    "eac3_h264.mp4": (["-c:a", "eac3", "-b:a", "192k", "-ac", "2"], True, "eac3", 2),
    "opus_audio.ogg": (["-c:a", "libopus", "-b:a", "64k", "-ac", "2"], False, "opus", 2),
    "eac3_51_audio.mp4": (["-af", "pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0", "-c:a", "eac3", "-b:a", "384k"], False, "eac3", 6),
}
CODECS = {"opus": "opus", "ac3": "ac-3", "eac3": "ec-3"}
DOLBY_MASKS = {2: "A000", 6: "F801"}
SECONDS = 4


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    need("ffmpeg", "ffprobe")
    d = tmp_path_factory.mktemp("audio-codecs")
    out = {}
    for name, (audio, video, codec, channels) in FIXTURES.items():
        path = str(d / name)
        cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
        if video:
            cmd += ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30"]
        cmd += ["-f", "lavfi", "-i", "sine=f=440:sample_rate=48000", "-t", str(SECONDS)]
        if video:
            cmd += ["-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p"]
        p = subprocess.run(cmd + audio + [path], capture_output=True, timeout=120)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        # Proven first: the stream is what the test means it to be.
        streams = clients.probe_streams(path)["streams"]
        a = [s for s in streams if s["codec_type"] == "audio"]
        assert len(a) == 1 and a[0]["codec_name"] == codec and a[0]["channels"] == channels, (name, a)
        assert [s["codec_name"] for s in streams if s["codec_type"] == "video"] == (["h264"] if video else [])
        out[name] = path
    return out



def audio_packets(path_or_url, seconds=None):
    """(size, md5) of each audio packet as ffmpeg demuxes it (`-c copy -f framemd5`: the packet bytes, untouched)."""
    cmd = ["timeout", "-s", "KILL", "60", "ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-rw_timeout", "5000000",
           "-i", path_or_url]
    if seconds:
        cmd += ["-t", str(seconds)]
    p = subprocess.run(cmd + ["-map", "0:a:0", "-c", "copy", "-f", "framemd5", "-"], capture_output=True, timeout=90)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    rows = [line.split(",") for line in p.stdout.decode().splitlines() if line and not line.startswith("#")]
    return [(int(r[4]), r[5].strip()) for r in rows]


def bit_exact_problems(src, out, may_drop_leading=0, cyclic=False):
    """Empty when `out` is `src` packet for packet: from its start, or after at most `may_drop_leading` packets (a
    packet presented before the first video frame; the segmenter starts every track at the first keyframe), or, for a
    looped live input, any run of the repeated input."""
    if not out:
        return ["the output has no audio packets"]
    if cyclic:
        starts = [i for i, p in enumerate(src) if p == out[0]]
        for s in starts:
            if all(src[(s + k) % len(src)] == p for k, p in enumerate(out)):
                return []
        return [f"the {len(out)} output packets are no run of the input's {len(src)} (first {out[0]}, found at {starts})"]
    for skip in range(may_drop_leading + 1):
        if out == src[skip:]:
            return []
    first = next((i for i, (a, b) in enumerate(zip(src[may_drop_leading:], out)) if a != b), None)
    return [f"{len(out)} packets out, {len(src)} in; first difference at output packet {first}"]


def attributes(line):
    """An attribute list (RFC 8216bis §4.2) as a dict, quotes removed."""
    out, key, val, quoted, in_val = {}, "", "", False, False
    for ch in line.split(":", 1)[1] + ",":
        if in_val:
            if ch == '"':
                quoted = not quoted
            elif ch == "," and not quoted:
                out[key] = val
                key, val, in_val = "", "", False
            else:
                val += ch
        elif ch == "=":
            in_val = True
        else:
            key += ch
    return out


def signalling_problems(multivariant, codec, channels, separate_audio):
    """CODECS names the codec (and avc1 when there is video); the audio rendition's CHANNELS is the channel count."""
    problems = []
    lines = multivariant.splitlines()
    variants = [attributes(l) for l in lines if l.startswith("#EXT-X-STREAM-INF:")]
    if not variants:
        return ["no EXT-X-STREAM-INF"]
    for v in variants:
        codecs = [c.strip() for c in v.get("CODECS", "").split(",")]
        if CODECS[codec] not in codecs:
            problems.append(f"CODECS={v.get('CODECS')} lacks {CODECS[codec]}")
    if separate_audio:
        media = [attributes(l) for l in lines if l.startswith("#EXT-X-MEDIA:") and "TYPE=AUDIO" in l]
        if [m.get("CHANNELS") for m in media] != [str(channels)]:
            problems.append(f"audio renditions' CHANNELS {[m.get('CHANNELS') for m in media]}, expected ['{channels}']")
    return problems


@pytest.mark.parametrize("name", list(FIXTURES))
def test_package_copies_audio_bit_exact(origin_bin, inputs, tmp_path, name):
    _, video, codec, channels = FIXTURES[name]
    out = package(origin_bin, inputs[name], tmp_path / "out", "--transcode", "never", "--ladder", "source")
    playlist = os.path.join(out, "index.m3u8")
    ok, err = clients.decode_check(playlist)
    assert ok, err
    assert signalling_problems(open(playlist).read(), codec, channels, separate_audio=video) == []
    # With video the first audio packet may start before the first picture (the encoder's priming / pre-skip):
    # the segmenter starts every track at the first keyframe, and that one packet is all that may go.
    assert bit_exact_problems(audio_packets(inputs[name]), audio_packets(playlist), may_drop_leading=1 if video else 0) == []
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    assert f'codecs="{CODECS[codec]}"' in mpd
    if codec == "opus":
        assert 'schemeIdUri="urn:mpeg:mpegB:cicp:ChannelConfiguration" value="2"' in mpd
    else:
        assert ('schemeIdUri="tag:dolby.com,2014:dash:audio_channel_configuration:2011" '
                f'value="{DOLBY_MASKS[channels]}"') in mpd


def test_transcode_always_still_encodes_aac_and_the_checkers_see_it(origin_bin, inputs, tmp_path):
    """`--transcode always` makes AAC of the same AC-3 5.1 input: the codec, channel and packet checkers all object
    (so they can fail), and ffmpeg still reads it."""
    name = "ac3_51_h264.ts"
    out = package(origin_bin, inputs[name], tmp_path / "out", "--transcode", "always", "--ladder", "source")
    playlist = os.path.join(out, "index.m3u8")
    ok, err = clients.decode_check(playlist)
    assert ok, err
    problems = signalling_problems(open(playlist).read(), "ac3", 6, separate_audio=True)
    assert any("lacks ac-3" in p for p in problems) and any("CHANNELS" in p for p in problems), problems
    assert "mp4a.40.2" in open(playlist).read()
    assert bit_exact_problems(audio_packets(inputs[name]), audio_packets(playlist), may_drop_leading=1) != []


def test_checkers_fail_on_a_flipped_byte_and_a_cut_segment(origin_bin, inputs, tmp_path):
    src = inputs["opus_audio.ogg"]
    out = package(origin_bin, src, tmp_path / "out", "--transcode", "never")
    playlist = os.path.join(out, "index.m3u8")
    packets = audio_packets(src)
    assert bit_exact_problems(packets, audio_packets(playlist)) == []
    assert bit_exact_problems(packets, audio_packets(playlist)[1:]) != []          # one packet short at the start
    assert bit_exact_problems(packets, audio_packets(playlist), cyclic=True) == []
    seg = os.path.join(out, "seg1.m4s")
    data = bytearray(open(seg, "rb").read())
    data[len(data) - 40] ^= 0xFF                                                     # inside the last sample
    open(seg, "wb").write(bytes(data))
    assert bit_exact_problems(packets, audio_packets(playlist)) != []
    open(seg, "wb").write(bytes(data[: len(data) // 2]))
    ok, _ = clients.decode_check(playlist)
    assert not ok


def test_transcode_never_still_refuses_what_it_cannot_copy(origin_bin, tmp_path):
    need("ffmpeg")
    src = str(tmp_path / "mp2.ts")
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "2",
                    "-c:a", "mp2", src], check=True, timeout=60)
    p = subprocess.run([origin_bin, "package", src, "-o", str(tmp_path / "out"), "--transcode", "never"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    err = p.stderr.decode()
    assert p.returncode != 0 and "mp2" in err and "--transcode never" in err, err


@pytest.mark.parametrize("name", ["ac3_51_h264.ts", "eac3_h264.mp4"])
def test_live_loop_copies_dolby_audio(start_origin, inputs, name):
    """`serve --loop --transcode never`: ffmpeg reads 3 s of the live playlist silently; its audio packets are a run of
    the looped input's; the multivariant says ac-3 / ec-3 and the channel count."""
    _, _, codec, channels = FIXTURES[name]
    s = start_origin(inputs[name], "--loop", "--transcode", "never", "--ladder", "source")
    r = clients.ffmpeg_read(s.url("/index.m3u8"), seconds=3)
    assert r.ok, str(r)
    assert signalling_problems(text(s.url("/index.m3u8")), codec, channels, separate_audio=True) == []
    out = audio_packets(s.url("/index.m3u8"), seconds=4)
    assert len(out) >= 100
    assert bit_exact_problems(audio_packets(inputs[name]), out, cyclic=True) == []


def test_live_opus_with_h264_copied_bit_exact(start_origin, inputs):
    """A live Opus + H.264 stream: ffmpeg reads it and its audio packets are the input's (hls.js playing Opus in
    Chromium, with its decoded-audio count rising, is test_codecs_play.py's AV1 + Opus test)."""
    s = start_origin(inputs["opus_h264.mp4"], "--loop", "--transcode", "never")
    assert 'CODECS="avc1.42c00d,opus"' in text(s.url("/index.m3u8"))
    r = clients.ffmpeg_read(s.url("/index.m3u8"), seconds=4)
    assert r.ok, str(r)
    assert bit_exact_problems(audio_packets(inputs["opus_h264.mp4"]), audio_packets(s.url("/index.m3u8"), seconds=4),
                              cyclic=True) == []


def text(url):
    r = http.get(url, timeout=10)
    assert r.status == 200, (url, r.status, r.error)
    return r.text
