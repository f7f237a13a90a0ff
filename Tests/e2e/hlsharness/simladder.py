"""A simulated LL-HLS ladder origin for the presentation checkers' self-tests, in the origin's layout
(index.m3u8, NAME.m3u8, NAME/init.mp4, NAME/seg<N>.m4s, parts NAME/seg<N>.<i>.m4s, `_HLS_skip` delta updates,
blocking reloads, rendition reports). Its media is FFmpeg's: a ladder cut into 1/3-second fragments
(ladders.ffmpeg_ladder with split_by_time); part N.i is fragment 3N+i and segment N the three fragments in a row.
Time slides a window over them in real time. Each mutation breaks one rule, so every check is proven to fail."""
import bisect
import functools
import http.server
import math
import os
import struct
import threading
import time
import urllib.parse
from fractions import Fraction

from . import ladders, m3u8, mp4
from .procs import LoopbackHTTPServer

PARTS = 3                # parts per 1-second segment
SKIP_UNTIL = 6.0         # CAN-SKIP-UNTIL (6 x TARGETDURATION)
AAC_FRAME = 1024         # samples

# mutation -> a substring of the error it must cause (in check_live_presentation or check_delta_update)
MUTATIONS = {
    "none": "",
    "codecs": "CODECS=",
    "no_audio_group": "no EXT-X-MEDIA TYPE=AUDIO has that GROUP-ID",
    "resolution": "RESOLUTION=",
    "bandwidth_low": "the measured peak segment bit rate",
    "ascending": "not ordered by BANDWIDTH",
    "autoselect_no": "DEFAULT=YES with AUTOSELECT=NO",
    "tfdt_shift": "video starts differ between rungs",
    "no_idr": "does not start with an IDR",
    "audio_offset": "more than one AAC frame",
    "report_missing": "no EXT-X-RENDITION-REPORT for audio.m3u8",
    "report_ahead": "does not list part",
    "phb_small": "< 3 x PART-TARGET",
    "pt_flip": "PART-TARGET changed",
    "float_noise": "float noise",
    "skip_count": "SKIPPED-SEGMENTS=",
    "skip_version": "EXT-X-VERSION 7 (< 9)",
    "skip_garbage": "_HLS_skip=maybe: status 200",
    "part_swap": "video starts differ between rungs",
    "part_duration_lie": "DURATION 0.3 but",
    "serverctl_differs": "EXT-X-SERVER-CONTROL differs between renditions",
    "pdt_skew": "PROGRAM-DATE-TIME maps to media time differently",
    "td_differs": "TARGETDURATION differs",
    "hint_wrong": "EXT-X-PRELOAD-HINT URI",
}


def make_source(seconds=30):
    """FFmpeg's ladder in 1/3-second fragments (made once, cached under .cache/e2e-media)."""
    return ladders.cached_ladder(seconds=seconds, hls_time="0.333333", split_by_time=True, multivariant=False)


def patch_tfdt(data, delta):
    """Add delta ticks to every tfdt in a fragment."""
    out = bytearray(data)
    for b in mp4.boxes(data):
        if b.type != b"moof":
            continue
        for traf in mp4.find_all(data, b, "traf"):
            t = mp4.find(data, traf, "tfdt")
            p = t.body + 4
            if data[t.body] == 1:
                struct.pack_into(">Q", out, p, struct.unpack_from(">Q", data, p)[0] + delta)
            else:
                struct.pack_into(">I", out, p, struct.unpack_from(">I", data, p)[0] + delta)
    return bytes(out)


def unmark_idr(data, init):
    """Turn the first NAL unit of the first sample from an IDR slice (5) into a non-IDR slice (1)."""
    t = init.tracks[0]
    start, _ = mp4.first_sample_range(data, init, t.track_id)
    out = bytearray(data)
    pos = start + t.nal_length_size
    if out[pos] & 0x1F == 5:
        out[pos] = (out[pos] & 0xE0) | 1
    return bytes(out)


class _Rendition:
    """One rendition's fragments; with loop_parts, its first loop_parts fragments repeat forever (tfdt moved on by
    the loop's duration each time round)."""

    def __init__(self, directory, name, mutation, loop_parts=None):
        with open(os.path.join(directory, name, "init.mp4"), "rb") as f:
            self.init_bytes = f.read()
        self.init = mp4.parse_init(self.init_bytes)
        t = self.init.tracks[0]
        self.name, self.kind = name, ("video" if t.handler == "vide" else "audio")
        with open(os.path.join(directory, f"{name}.m3u8")) as f:
            pl = m3u8.parse_media(f.read())
        self.frags, self.starts, self.durs = [], [], []
        for s in pl.segments[:loop_parts]:
            with open(os.path.join(directory, s.uri), "rb") as f:
                data = f.read()
            if mutation == "tfdt_shift" and name == "480p":
                data = patch_tfdt(data, t.timescale // 30)
            if mutation == "audio_offset" and self.kind == "audio":
                data = patch_tfdt(data, 2 * AAC_FRAME)
            if mutation == "no_idr" and name == "360p" and len(self.frags) % PARTS == 0:
                data = unmark_idr(data, self.init)
            run = mp4.parse_fragment(data, self.init).track_runs(t.track_id)
            self.frags.append(data)
            self.starts.append(Fraction(run[0].base_decode_time, t.timescale))
            self.durs.append(Fraction(sum(r.duration for r in run), t.timescale))
        self.count = len(self.frags) // PARTS * PARTS      # usable parts (whole segments)
        if loop_parts and self.count != loop_parts:
            raise ValueError(f"{name}: {len(self.frags)} fragments, {loop_parts} needed to loop")
        self.loop = sum(self.durs[:self.count]) if loop_parts else None
        if self.loop is not None and (self.loop * t.timescale).denominator != 1:
            raise ValueError(f"{name}: a loop of {self.loop}s is not a whole number of ticks")
        self.timescale = t.timescale
        origin = self.starts[0]
        self.ends = [float(s - origin + d) for s, d in zip(self.starts, self.durs)][:self.count]
        self.requests = 0
        self.part_target = math.ceil(max(self.durs) * 1_000_000) / 1_000_000

    @property
    def limit(self):
        """Parts in all (None: endless)."""
        return None if self.loop is not None else self.count

    def available(self, t):
        """Parts complete at media time t."""
        if self.loop is None:
            return bisect.bisect_right(self.ends, t)
        q, rem = divmod(t, float(self.loop))
        return int(q) * self.count + bisect.bisect_right(self.ends, rem)

    def start(self, k):
        q, i = divmod(k, self.count) if self.loop is not None else (0, k)
        return self.starts[i] + q * (self.loop or 0)

    def dur(self, k):
        return self.durs[k % self.count]

    def frag(self, k):
        q, i = divmod(k, self.count) if self.loop is not None else (0, k)
        return patch_tfdt(self.frags[i], int(q * self.loop * self.timescale)) if q else self.frags[i]

    def seg_duration(self, n):
        return sum(self.dur(k) for k in range(n * PARTS, (n + 1) * PARTS))

    def seg_bytes(self, n):
        return b"".join(self.frag(k) for k in range(n * PARTS, (n + 1) * PARTS))


class SimLadderOrigin(LoopbackHTTPServer):
    """names: the renditions in the source directory (video rungs by falling bit rate, then audio).
    loop_parts: repeat that many parts forever (a live stream of any length). pages: {path: (bytes, type)}
    served as they are (a player page, hls.js)."""

    def __init__(self, source, mutation="none", window=9, history=10.0, names=None, loop_parts=None, pages=None,
                 port=None):
        self.mutation = mutation
        self.window = window
        self.pages = pages or {}
        names = names or [r[0] for r in ladders.RUNGS] + [ladders.AUDIO]
        self.rends = {n: _Rendition(source, n, mutation, loop_parts) for n in names}
        if loop_parts and len({r.loop for r in self.rends.values()}) != 1:
            raise ValueError(f"renditions loop at different times: {[r.loop for r in self.rends.values()]}")
        self.videos = [r for r in self.rends.values() if r.kind == "video"]
        self.started = time.monotonic()
        self.t0 = self.started - history
        self.pdt0 = time.time() - history
        self.lock = threading.Lock()
        pt = max(r.part_target for r in self.rends.values())
        self.part_hold_back = 0.5 if mutation == "phb_small" else math.ceil(3 * pt * 1e6) / 1e6
        super().__init__(functools.partial(_Handler, self), port)

    def now(self):
        return time.monotonic() - self.t0

    # --- multivariant ---------------------------------------------------------------------------------------------
    def multivariant(self):
        m = self.mutation
        a = self.rends[ladders.AUDIO]
        asegs = [(float(a.seg_duration(n)), len(a.seg_bytes(n))) for n in range(a.count // PARTS)]
        apeak = ladders.peak_bit_rate(asegs, 1)
        aavg = 8 * sum(s for _, s in asegs) / sum(d for d, _ in asegs)
        lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        if m != "no_audio_group":
            lines.append('#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT='
                         f'{"NO" if m == "autoselect_no" else "YES"},CHANNELS="{a.init.tracks[0].channels}",'
                         f'URI="{ladders.AUDIO}.m3u8"')
        variants = []
        for v in self.videos:
            segs = [(float(v.seg_duration(n)), len(v.seg_bytes(n))) for n in range(v.count // PARTS)]
            bw = int(ladders.peak_bit_rate(segs, 1) + apeak) + 1
            avg = int(8 * sum(s for _, s in segs) / sum(d for d, _ in segs) + aavg) + 1
            t = v.init.tracks[0]
            codecs = "avc1.64001F" if m == "codecs" and v.name == "720p" else t.codec
            res = "1280x720" if m == "resolution" and v.name == "480p" else f"{t.width}x{t.height}"
            if m == "bandwidth_low" and v.name == "720p":
                bw, avg = bw // 2, avg // 2
            variants.append(f"#EXT-X-STREAM-INF:BANDWIDTH={bw},AVERAGE-BANDWIDTH={avg},CODECS=\"{codecs},"
                            f"{a.init.tracks[0].codec}\",RESOLUTION={res},FRAME-RATE=30.000,AUDIO=\"audio\"\n"
                            f"{v.name}.m3u8")
        if m == "ascending":
            variants.reverse()
        return "\n".join(lines + variants) + "\n"

    # --- media playlists --------------------------------------------------------------------------------------------
    def last_part(self, r, t):
        n = r.available(t)
        return (n - 1) // PARTS, (n - 1) % PARTS

    def media_playlist(self, r, skip=None):
        with self.lock:
            r.requests += 1
            req = r.requests
        m, t = self.mutation, self.now()
        n = r.available(t)
        complete = n // PARTS
        first = max(0, complete - self.window)
        td = 2 if m == "td_differs" and r.kind == "audio" else 1
        pt = r.part_target
        # From the third request on, not after a time: a checker slowed by a loaded machine made its first request
        # after the flip and saw one PART-TARGET only (CI with three workers, 2026-11-28).
        if m == "pt_flip" and r.name == "720p" and req > 2:
            pt = 0.4
        hold_back = 4.0 if m == "serverctl_differs" and r.name == "360p" else 3.0
        skipped = 0
        if skip:
            end = sum(float(r.seg_duration(k)) for k in range(first, complete))
            acc = 0.0
            for k in range(first, complete):
                acc += float(r.seg_duration(k))
                if acc <= end - SKIP_UNTIL + 1e-9:
                    skipped += 1
            if m == "skip_count":
                skipped += 1
        version = 7 if not skipped or m == "skip_version" else 9
        lines = ["#EXTM3U", f"#EXT-X-VERSION:{version}", f"#EXT-X-TARGETDURATION:{td}",
                 f"#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL={SKIP_UNTIL},"
                 f"PART-HOLD-BACK={self.part_hold_back:.6f},HOLD-BACK={hold_back}",
                 f"#EXT-X-PART-INF:PART-TARGET={pt:.6f}", f"#EXT-X-MEDIA-SEQUENCE:{first}"]
        if skipped:
            lines.append(f"#EXT-X-SKIP:SKIPPED-SEGMENTS={skipped}")
        lines.append(f'#EXT-X-MAP:URI="{r.name}/init.mp4"')
        for k in range(first + skipped, complete):
            pdt = self.pdt0 + float(r.start(k * PARTS) - r.start(0)) + (0.2 if m == "pdt_skew" and r.kind == "audio"
                                                                          else 0)
            lines.append("#EXT-X-PROGRAM-DATE-TIME:" + time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(pdt))
                         + f".{int(pdt * 1000) % 1000:03d}Z")
            if k >= complete - 3:
                lines += [self.part_line(r, k, i) for i in range(PARTS)]
            lines += [f"#EXTINF:{float(r.seg_duration(k)):.6f},", f"{r.name}/seg{k}.m4s"]
        lines += [self.part_line(r, complete, i) for i in range(n % PARTS)]
        nxt = n + (1 if m == "hint_wrong" and r.name == "720p" else 0)
        if r.limit is None or nxt < r.limit:
            lines.append(f'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="{r.name}/seg{nxt // PARTS}.{nxt % PARTS}.m4s"')
        for o in self.rends.values():
            if o is r or (m == "report_missing" and r.name == "720p" and o.kind == "audio"):
                continue
            msn, part = self.last_part(o, t)
            if m == "report_ahead" and r.name == "720p" and o.name == "480p":
                msn += 1
            lines.append(f'#EXT-X-RENDITION-REPORT:URI="{o.name}.m3u8",LAST-MSN={msn},LAST-PART={part}')
        return "\n".join(lines) + "\n"

    def part_line(self, r, k, i):
        d = f"{float(r.dur(k * PARTS + i)):.6f}"
        if self.mutation == "float_noise" and r.name == "720p":
            d = "0.33333300000000003"   # what printing 0.333333 + a tiny float error gives
        if self.mutation == "part_duration_lie" and r.name == "720p":
            d = "0.300000"
        ind = ",INDEPENDENT=YES" if i == 0 and r.kind == "video" else ""
        return f'#EXT-X-PART:DURATION={d},URI="{r.name}/seg{k}.{i}.m4s"{ind}'

    def part_bytes(self, r, k, i):
        j = k * PARTS + i
        if self.mutation == "part_swap" and r.name == "480p" and i == 1:
            j += 1
        return r.frag(j)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, origin, *args, **kwargs):
        self.origin = origin
        super().__init__(*args, **kwargs)

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, body, cache="no-cache"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(body)

    def _wait(self, r, parts_needed, limit):
        deadline = time.monotonic() + limit
        while r.available(self.origin.now()) < parts_needed:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def do_GET(self):  # noqa: C901 - one flat router
        o = self.origin
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        path = u.path.lstrip("/")
        pl_type = "application/vnd.apple.mpegurl"
        if path == "index.m3u8":
            return self._send(200, pl_type, o.multivariant().encode())
        if "/" + path in o.pages:
            body, ctype = o.pages["/" + path]
            return self._send(200, ctype, body)
        name, _, rest = path.partition("/")
        if path.endswith(".m3u8") and path[:-5] in o.rends:
            r = o.rends[path[:-5]]
            # the first playlists are answered once every rendition has a part (rendition reports need one)
            for other in o.rends.values():
                self._wait(other, 1, 2.0)
            skip = q.get("_HLS_skip")
            if skip not in (None, "YES", "v2") and o.mutation != "skip_garbage":
                return self._send(400, "text/plain", b"bad _HLS_skip")
            if "_HLS_msn" in q:
                msn, part = int(q["_HLS_msn"]), int(q.get("_HLS_part", PARTS - 1))
                if msn > r.available(o.now()) // PARTS + 2:
                    return self._send(400, "text/plain", b"_HLS_msn too far ahead")
                if not self._wait(r, msn * PARTS + min(part, PARTS - 1) + 1, 3.0):
                    return self._send(503, "text/plain", b"not yet")
            return self._send(200, pl_type, o.media_playlist(r, skip in ("YES", "v2")).encode())
        r = o.rends.get(name)
        if r is None:
            return self._send(404, "text/plain", b"not found")
        if rest == "init.mp4":
            return self._send(200, "video/mp4", r.init_bytes, "max-age=3600")
        stem = rest[3:-4] if rest.startswith("seg") and rest.endswith(".m4s") else None
        try:
            nums = [int(x) for x in stem.split(".")] if stem else None
        except ValueError:
            nums = None
        if not nums or len(nums) > 2 or (r.limit is not None and nums[0] >= r.limit // PARTS):
            return self._send(404, "text/plain", b"not found")
        ctype = "video/iso.segment"
        if len(nums) == 1:
            if r.available(o.now()) < (nums[0] + 1) * PARTS:
                return self._send(404, "text/plain", b"not yet")
            return self._send(200, ctype, r.seg_bytes(nums[0]), "public, max-age=3600")
        k, i = nums
        if i >= PARTS:
            return self._send(404, "text/plain", b"not found")
        # a hinted part (the next one) blocks until it is complete (§6.2.6); others must exist already
        need = k * PARTS + i + 1
        if r.available(o.now()) < need and not (need - r.available(o.now()) <= 1 and self._wait(r, need, 2.0)):
            return self._send(404, "text/plain", b"not yet")
        return self._send(200, ctype, o.part_bytes(r, k, i), "public, max-age=3600")
