"""SCTE-35 in MPEG-TS for the events tests: sections made by threefive (the independent encoder and decoder), and an
injector that adds them to a TS made by ffmpeg as libavformat and real muxers carry them: a PID of stream type 0x86
in the PMT, with the program's registration descriptor "CUEI" (without it libavformat treats 0x86 as PES), one
section per packet (pointer_field 0), each sent `lead` seconds before its splice time by the video's PTS.

A re-mux would lose it: `ffmpeg -c copy` rewrites a 0x86 PID as stream type 0x06 (docs/events.md), so the fixture is
written here, byte for byte, and read by the origin as a file.
"""
import struct

TICKS = 90_000


def crc32_mpeg(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


def splice_insert(event_id, pts_seconds, out, duration=None):
    """A splice_insert section (program splice, time specified) encoded by threefive; its bytes."""
    import threefive
    cue = threefive.Cue()
    si = threefive.SpliceInsert()
    si.splice_event_id = event_id
    si.splice_event_cancel_indicator = False
    si.event_id_compliance_flag = True
    si.out_of_network_indicator = out
    si.program_splice_flag = True
    si.duration_flag = duration is not None
    if duration is not None:
        si.break_auto_return = True
        si.break_duration = duration
    si.splice_immediate_flag = False
    si.time_specified_flag = True
    si.pts_time = pts_seconds
    si.unique_program_id = 1
    si.avail_num = 0
    si.avails_expected = 0
    cue.command = si
    cue.encode()
    return bytes.fromhex(cue.hex()[2:])


def time_signal(event_id, pts_seconds, type_id):
    """A time_signal section with one segmentation descriptor (no duration, no UPID), encoded by threefive."""
    import threefive
    cue = threefive.Cue()
    ts = threefive.TimeSignal()
    ts.time_specified_flag = True
    ts.pts_time = pts_seconds
    cue.command = ts
    sd = threefive.SegmentationDescriptor()
    sd.tag, sd.identifier = 2, "CUEI"
    sd.segmentation_event_id = f"{event_id:#010x}"
    sd.segmentation_event_cancel_indicator = False
    sd.segmentation_event_id_compliance_indicator = True
    sd.program_segmentation_flag = True
    sd.segmentation_duration_flag = False
    sd.delivery_not_restricted_flag = True
    sd.segmentation_upid_type, sd.segmentation_upid_length, sd.segmentation_upid = 0, 0, ""
    sd.segmentation_type_id = type_id
    sd.segment_num = sd.segments_expected = 0
    cue.descriptors = [sd]
    cue.encode()
    return bytes.fromhex(cue.hex()[2:])


def decode(section):
    """threefive's decode of a section (bytes, or a 0x-hex string): its dict."""
    import threefive
    if isinstance(section, (bytes, bytearray)):
        section = "0x" + bytes(section).hex()
    cue = threefive.Cue(section)
    cue.decode()
    return cue.get()


def _packets(data):
    for i in range(0, len(data) - 187, 188):
        yield bytearray(data[i:i + 188])


def _pid(p):
    return ((p[1] & 0x1F) << 8) | p[2]


def _payload(p):
    afc = (p[3] >> 4) & 3
    off = 4 + (1 + p[4] if afc & 2 else 0)
    return off if afc & 1 else None


def inject(ts, cues, cue_pid=0x1F4, lead=2.0):
    """`cues`: [(splice time in 90 kHz ticks, section bytes)]. The TS with the cues' PID declared and carried."""
    out = bytearray()
    pmt_pid = video_pid = None
    pending = sorted(cues)
    cc = 0
    for p in _packets(ts):
        pid, off = _pid(p), _payload(p)
        if pid == 0 and off is not None and pmt_pid is None:
            sec = p[off + 1 + p[off]:]
            pmt_pid = ((sec[10] & 0x1F) << 8) | sec[11]
        elif pid == pmt_pid and off is not None and p[1] & 0x40:
            start = off + 1 + p[off]
            sec = bytes(p[start:])
            length = ((sec[1] & 0x0F) << 8) | sec[2]
            body = sec[3:3 + length - 4]
            pi_len = ((body[7] & 0x0F) << 8) | body[8]
            prog_info = body[9:9 + pi_len] + b"\x05\x04CUEI"
            es = body[9 + pi_len:]
            i = 0
            while i < len(es):
                if es[i] in (0x1B, 0x24) and video_pid is None:
                    video_pid = ((es[i + 1] & 0x1F) << 8) | es[i + 2]
                i += 5 + (((es[i + 3] & 0x0F) << 8) | es[i + 4])
            es += bytes([0x86, 0xE0 | (cue_pid >> 8), cue_pid & 0xFF, 0xF0, 0x00])
            new = body[:7] + bytes([0xF0 | (len(prog_info) >> 8), len(prog_info) & 0xFF]) + prog_info + es
            full = bytes([sec[0], (sec[1] & 0xF0) | ((len(new) + 4) >> 8), (len(new) + 4) & 0xFF]) + new
            full += struct.pack(">I", crc32_mpeg(full))
            p = bytearray(p[:start]) + full
            p += b"\xFF" * (188 - len(p))
        elif pid == video_pid and off is not None and p[1] & 0x40 and pending:
            pes = p[off:]
            if pes[:3] == b"\x00\x00\x01" and pes[7] & 0x80:
                b = pes[9:14]
                pts = ((b[0] >> 1) & 7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1
                while pending and pts >= pending[0][0] - int(lead * TICKS):
                    section = pending.pop(0)[1]
                    q = bytearray([0x47, 0x40 | (cue_pid >> 8), cue_pid & 0xFF, 0x10 | cc]) + b"\x00" + section
                    q += b"\xFF" * (188 - len(q))
                    cc = (cc + 1) & 0xF
                    out += q
        out += p
    assert not pending, "cues after the end of the input"
    return bytes(out)
