"""Test fixtures with CTA-608 closed captions: an x264 stream whose pictures carry ATSC A/53 `cc_data` in SEI, as a
broadcast encoder writes them (no Debian tool writes 608 into a stream: we insert the SEI ourselves).

`make_captioned(path, captions, seconds)` encodes the test pattern (no B-frames, an AUD per access unit), then gives
every access unit an SEI NAL unit (type 6, `user_data_registered_itu_t_t35`: 0xB5 0x0031 `GA94`, type 3, cc_count 2)
with one byte pair of field 1 (CC1) and a field-2 padding pair. The field-1 pairs are pop-on captions (CTA-608 §B.3):
RCL, ENM, a PAC for row 15, the characters, then EOC (doubled control codes) on the caption's first frame, and EDM on
its last. The file is an MP4 with a 440 Hz AAC track.

`read_captions(path)` is the independent reader: FFmpeg's own caption decoder (`movie=FILE[out0+subcc]`) as SubRip,
returned as [(start_s, end_s, text)]. A fixture is proved with it before a test trusts it.
"""
import os
import re
import subprocess
import tempfile

FPS = 30


def _odd(b):
    """Byte with odd parity in bit 7 (CTA-608 §D.1: every byte of a pair carries odd parity)."""
    b &= 0x7F
    return b | (0x80 if bin(b).count("1") % 2 == 0 else 0)


def _pair(a, b):
    return (_odd(a), _odd(b))


RCL, ENM, EOC, EDM = (0x14, 0x20), (0x14, 0x2E), (0x14, 0x2F), (0x14, 0x2C)
PAC_ROW15 = (0x14, 0x70)        # row 15, column 0, white
PAD = (0x80, 0x80)              # null pair (0x00 0x00 with parity)


def _field1_pairs(captions, frames):
    """One field-1 byte pair per frame: the pop-on sequence of each caption ends with EOC on its first frame."""
    out = [PAD] * frames
    for start, end, text in captions:
        text = text.upper()
        chars = [(ord(text[i]), ord(text[i + 1]) if i + 1 < len(text) else 0) for i in range(0, len(text), 2)]
        seq = [RCL, RCL, ENM, ENM, PAC_ROW15, PAC_ROW15] + chars + [EOC, EOC]
        first = round(start * FPS) - (len(seq) - 2)
        assert first >= 0, f"caption {text!r} starts too early to be loaded"
        for i, p in enumerate(seq):
            out[first + i] = _pair(*p)
        e = round(end * FPS)
        if e + 1 < frames:
            out[e] = _pair(*EDM)
            out[e + 1] = _pair(*EDM)
    return out


def _emulation_prevented(rbsp):
    out, zeros = bytearray(), 0
    for b in rbsp:
        if zeros >= 2 and b <= 3:
            out.append(3)
            zeros = 0
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def _sei(pair):
    cc = bytes([0xFC, pair[0], pair[1], 0xFD, 0x80, 0x80])      # cc_valid field 1, then field 2 (padding)
    payload = bytes([0xB5, 0x00, 0x31]) + b"GA94" + bytes([0x03, 0x40 | 2, 0xFF]) + cc + bytes([0xFF])
    rbsp = bytes([4, len(payload)]) + payload + bytes([0x80])
    return b"\x00\x00\x00\x01\x06" + _emulation_prevented(rbsp)


def make_captioned(path, captions, seconds=12, size="640x360", sei=True):
    """Writes `path` (MP4, H.264 + AAC) whose pictures carry `captions` [(start_s, end_s, text)] as CC1; `sei=False`:
    the same pictures without any caption SEI (a twin to compare with)."""
    frames = seconds * FPS
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "v.h264")
        subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                        f"testsrc2=size={size}:rate={FPS}", "-frames:v", str(frames), "-pix_fmt", "yuv420p",
                        "-c:v", "libx264", "-preset", "veryfast", "-bf", "0", "-g", str(FPS),
                        "-x264-params", "aud=1:scenecut=0", "-f", "h264", raw], check=True)
        data = open(raw, "rb").read()
        aud = b"\x00\x00\x00\x01\x09"
        starts = [m.start() for m in re.finditer(re.escape(aud), data)]
        assert len(starts) == frames, f"{len(starts)} access units, expected {frames}"
        pairs = _field1_pairs(captions, frames)
        out = bytearray()
        for i, s in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(data)
            au = data[s:end]
            out += au[:6] + (_sei(pairs[i]) if sei else b"") + au[6:]   # after the AUD (start code, header, pic type)
        captioned = os.path.join(tmp, "cc.h264")
        open(captioned, "wb").write(out)
        subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", "-framerate", str(FPS),
                        "-i", captioned, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                        "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "aac", "-b:a", "64k",
                        "-t", str(seconds), path], check=True)
    return path


def every(seconds, period=3.0, shown=1.5):
    """Captions every `period` seconds through `seconds` of media ("CAPTION 1", "CAPTION 2", …), from 1 s."""
    out, t, n = [], 1.0, 1
    while t + shown < seconds - 0.5:
        out.append((t, t + shown, f"CAPTION {n}"))
        t += period
        n += 1
    return out


def read_captions(path):
    """[(start_s, end_s, text)] of CC1 as FFmpeg's caption decoder reads them from `path`."""
    p = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                        f"movie={path}[out0+subcc]", "-map", "0:s", "-f", "srt", "-"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = []
    for block in p.stdout.strip().split("\n\n"):
        lines = block.strip().splitlines()
        if len(lines) < 3:
            continue
        m = re.match(r"(\d+):(\d+):(\d+),(\d+) --> (\d+):(\d+):(\d+),(\d+)", lines[1])
        if not m:
            continue
        g = [int(x) for x in m.groups()]
        start = g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000
        end = g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000
        text = re.sub(r"<[^>]+>|\{[^}]+\}", "", " ".join(lines[2:])).strip()
        out.append((start, end, text))
    return out
