"""ID3 timed metadata in MPEG-TS for the events tests, as Apple's "Timed Metadata for HTTP Live Streaming" carries it
(and libavformat reads it as a `timed_id3` data stream): a PID of stream type 0x15 (metadata in PES) in the PMT with a
metadata_descriptor (tag 0x26, format identifier "ID3 "), the program's metadata_pointer_descriptor (tag 0x25), and
each tag in one PES packet (stream_id 0xBD, private_stream_1, its PTS the tag's time, data_alignment_indicator set)
of one TS packet, padded with adaptation-field stuffing. Written here byte for byte into a TS made by ffmpeg.
"""
import struct

from .scte35 import TICKS, _packets, _payload, _pid, crc32_mpeg

# ISO/IEC 13818-1 2.6.58/2.6.60 with the values Apple's spec gives: application format 0xFFFF (registered identifier
# follows), "ID3 ", format 0xFF, "ID3 ", metadata_service_id 0, then the flags.
METADATA_POINTER = bytes([0x25, 0x0F, 0xFF, 0xFF]) + b"ID3 " + bytes([0xFF]) + b"ID3 " + bytes([0x00, 0x1F, 0x00, 0x01])
METADATA = bytes([0x26, 0x0D, 0xFF, 0xFF]) + b"ID3 " + bytes([0xFF]) + b"ID3 " + bytes([0x00, 0x0F])


def text_tag(text, frame=b"TIT2"):
    """An ID3v2.4 tag of one text frame (UTF-8): the tag a broadcaster's song-title feed sends."""
    body = b"\x03" + text.encode()
    data = frame + _syncsafe(len(body)) + b"\x00\x00" + body
    return b"ID3\x04\x00\x00" + _syncsafe(len(data)) + data


def _syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def _pes(pts, tag):
    p = pts & ((1 << 33) - 1)
    stamp = bytes([0x21 | ((p >> 29) & 0x0E), (p >> 22) & 0xFF, 0x01 | ((p >> 14) & 0xFE), (p >> 7) & 0xFF,
                   0x01 | ((p << 1) & 0xFE)])
    header = bytes([0x84, 0x80, 5]) + stamp       # '10', data_alignment_indicator; PTS only
    return b"\x00\x00\x01\xBD" + struct.pack(">H", len(header) + len(tag)) + header + tag


def _ts_packet(pid, cc, payload):
    """One TS packet starting a PES that fits in it, stuffed with an adaptation field to 188 bytes."""
    assert len(payload) <= 182, "an ID3 tag of this fixture fits one TS packet"
    stuffing = 184 - len(payload)
    head = bytes([0x47, 0x40 | (pid >> 8), pid & 0xFF, 0x30 | cc])
    af = bytes([stuffing - 1]) + (bytes([0x00]) + b"\xFF" * (stuffing - 2) if stuffing >= 2 else b"")
    return head + af + payload


def inject(ts, tags, pid=0x1F5, lead=1.0):
    """`tags`: [(PTS in 90 kHz ticks, ID3 tag bytes)]. The TS with the ID3 PID declared and carried, each tag sent
    `lead` seconds before its PTS by the video's."""
    out = bytearray()
    pmt_pid = video_pid = None
    pending = sorted(tags)
    cc = 0
    for p in _packets(ts):
        off = _payload(p)
        if _pid(p) == 0 and off is not None and pmt_pid is None:
            sec = p[off + 1 + p[off]:]
            pmt_pid = ((sec[10] & 0x1F) << 8) | sec[11]
        elif _pid(p) == pmt_pid and off is not None and p[1] & 0x40:
            start = off + 1 + p[off]
            sec = bytes(p[start:])
            length = ((sec[1] & 0x0F) << 8) | sec[2]
            body = sec[3:3 + length - 4]
            pi_len = ((body[7] & 0x0F) << 8) | body[8]
            prog_info = body[9:9 + pi_len] + METADATA_POINTER
            es = body[9 + pi_len:]
            i = 0
            while i < len(es):
                if es[i] in (0x1B, 0x24) and video_pid is None:
                    video_pid = ((es[i + 1] & 0x1F) << 8) | es[i + 2]
                i += 5 + (((es[i + 3] & 0x0F) << 8) | es[i + 4])
            es += bytes([0x15, 0xE0 | (pid >> 8), pid & 0xFF, 0xF0, len(METADATA)]) + METADATA
            new = body[:7] + bytes([0xF0 | (len(prog_info) >> 8), len(prog_info) & 0xFF]) + prog_info + es
            full = bytes([sec[0], (sec[1] & 0xF0) | ((len(new) + 4) >> 8), (len(new) + 4) & 0xFF]) + new
            full += struct.pack(">I", crc32_mpeg(full))
            p = bytearray(p[:start]) + full
            p += b"\xFF" * (188 - len(p))
        elif _pid(p) == video_pid and off is not None and p[1] & 0x40 and pending:
            pes = p[off:]
            if pes[:3] == b"\x00\x00\x01" and pes[7] & 0x80:
                b = pes[9:14]
                pts = ((b[0] >> 1) & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1
                while pending and pts >= pending[0][0] - int(lead * TICKS):
                    at, tag = pending.pop(0)
                    out += _ts_packet(pid, cc, _pes(at, tag))
                    cc = (cc + 1) & 0xF
        out += p
    assert not pending, "tags after the end of the input"
    return bytes(out)
