"""A simulated live HLS origin for the harness's own self-tests: it slides a window over pre-made 1-second fMP4
segments (made by FFmpeg) in real time, and can break one rule at a time so every checker is proven to fail."""
import functools
import http.server
import os
import subprocess
import threading
import time

from . import m3u8
from .procs import LoopbackHTTPServer

MUTATIONS = {
    "none": "",
    "extinf_long": "rounds above TARGETDURATION",
    "td_flip": "TARGETDURATION changed",
    "msn_stuck": "sequence number changed",
    "uri_gap": "segment URIs not continuous",
    "small_window": "< 3 target durations",
    "no_pdt": "no EXT-X-PROGRAM-DATE-TIME",
    "pdt_moves": "PROGRAM-DATE-TIME moved",
    "pdt_far": "PROGRAM-DATE-TIME far from wall clock",
    "stall": "no new segment",
    "seg_404": "status 404",
    "short_body": "status 0",
    "codecs": "CODECS=",
    "playlist_type": "EXT-X-PLAYLIST-TYPE",
    "ctype": "Content-Type",
    "no_cors": "Access-Control-Allow-Origin",
    "cache_long": "allows caching",
    "seg_no_cache": "immutable segments should be cacheable",
    "tfdt_gap": "gap/overlap",
    "extinf_mismatch": "samples last",
    "endlist": "EXT-X-ENDLIST appeared",
    "no_map": "no EXT-X-MAP",
    "msn_decrease": "MEDIA-SEQUENCE decreased",
}


def make_vod_source(directory, seconds=24):
    """1-second fMP4 segments (160x120 H.264 + AAC) in directory; returns directory."""
    if os.path.exists(os.path.join(directory, "stream.m3u8")):
        return directory
    os.makedirs(directory, exist_ok=True)
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y",
           "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
           "-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p",
           "-c:a", "aac", "-ac", "2", "-f", "hls", "-hls_time", "1", "-hls_segment_type", "fmp4",
           "-hls_playlist_type", "vod", "-hls_fmp4_init_filename", "init.mp4",
           "-hls_segment_filename", os.path.join(directory, "seg%d.m4s"), "-master_pl_name", "index.m3u8",
           os.path.join(directory, "stream.m3u8")]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode())
    return directory


class SimLiveOrigin(LoopbackHTTPServer):
    def __init__(self, vod_dir, mutation="none", list_size=6, history=6):
        self.mutation = mutation
        self.list_size = 2 if mutation == "small_window" else list_size
        with open(os.path.join(vod_dir, "stream.m3u8")) as f:
            vod = m3u8.parse_media(f.read())
        with open(os.path.join(vod_dir, "index.m3u8")) as f:
            self.codecs = m3u8.parse_multivariant(f.read()).variants[0].attrs["CODECS"]
        with open(os.path.join(vod_dir, "init.mp4"), "rb") as f:
            self.init = f.read()
        self.segs = []
        for s in vod.segments:
            with open(os.path.join(vod_dir, s.uri), "rb") as f:
                self.segs.append((s.duration, f.read()))
        self.t0 = time.monotonic() - history
        self.pdt0 = time.time() - history - 0.3
        self.requests = 0
        self.lock = threading.Lock()
        super().__init__(functools.partial(_Handler, self))

    # --- content
    def name(self, seq):
        if self.mutation == "uri_gap" and seq >= 8:
            return f"seg{seq + 1}.m4s"
        return f"seg{seq}.m4s"

    def seq_of(self, name):
        n = int(name[3:-4])
        if self.mutation == "uri_gap" and n >= 9:
            return n - 1
        return n

    def extinf(self, seq):
        d = self.segs[seq][0]
        if self.mutation == "extinf_long" and seq % 4 == 3:
            return 1.6
        if self.mutation == "extinf_mismatch":
            return d - 0.2
        return d

    def media_playlist(self):
        with self.lock:
            self.requests += 1
            req = self.requests
        elapsed = time.monotonic() - self.t0
        if self.mutation == "stall":
            elapsed = min(elapsed, self.t0_stall())
        n = min(int(elapsed), len(self.segs))  # completed segments
        first = max(0, n - self.list_size)
        msn = first
        if self.mutation == "msn_stuck":
            msn = 0
        if self.mutation == "msn_decrease" and req % 3 == 0:
            msn = max(0, first - 1)
        td = 1
        if self.mutation == "td_flip" and req % 2 == 0:
            td = 2
        lines = ["#EXTM3U", "#EXT-X-VERSION:7", f"#EXT-X-TARGETDURATION:{td}", f"#EXT-X-MEDIA-SEQUENCE:{msn}"]
        if self.mutation == "playlist_type":
            lines.append("#EXT-X-PLAYLIST-TYPE:EVENT")
        if self.mutation != "no_map":
            lines.append('#EXT-X-MAP:URI="init.mp4"')
        pdt = self.pdt0 + sum(self.segs[i][0] for i in range(first))
        if self.mutation == "pdt_moves" and req % 2:
            pdt += 0.5
        if self.mutation == "pdt_far":
            pdt -= 3600
        for seq in range(first, n):
            if seq == first and self.mutation != "no_pdt":
                lines.append("#EXT-X-PROGRAM-DATE-TIME:" + time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(pdt))
                             + f".{int(pdt * 1000) % 1000:03d}Z")
            lines.append(f"#EXTINF:{self.extinf(seq):.6f},")
            lines.append(self.name(seq))
        if self.mutation == "endlist":
            lines.append("#EXT-X-ENDLIST")
        return "\n".join(lines) + "\n"

    def t0_stall(self):
        return self._stall_at if hasattr(self, "_stall_at") else self._set_stall()

    def _set_stall(self):
        self._stall_at = time.monotonic() - self.t0 + 2.0
        return self._stall_at


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, origin, *args, **kwargs):
        self.origin = origin
        super().__init__(*args, **kwargs)

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, body, cache, extra_len=0):
        o = self.origin
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) + extra_len))
        self.send_header("Cache-Control", cache)
        if o.mutation != "no_cors":
            self.send_header("Access-Control-Allow-Origin", "*")
        if extra_len:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        if extra_len:
            self.close_connection = True

    def do_GET(self):
        o = self.origin
        path = self.path.split("?")[0]
        pl_type = "text/plain" if o.mutation == "ctype" else "application/vnd.apple.mpegurl"
        if path == "/index.m3u8":
            codecs = "avc1.42E01E,mp4a.40.2" if o.mutation == "codecs" else o.codecs
            body = f'#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=300000,CODECS="{codecs}"\nstream.m3u8\n'.encode()
            return self._send(200, pl_type, body, "no-cache")
        if path == "/stream.m3u8":
            cache = "max-age=60" if o.mutation == "cache_long" else "no-cache"
            return self._send(200, pl_type, o.media_playlist().encode(), cache)
        if path == "/init.mp4":
            return self._send(200, "video/mp4", o.init, "max-age=3600")
        if path.startswith("/seg") and path.endswith(".m4s"):
            seq = o.seq_of(path[1:])
            if seq >= len(o.segs) or (o.mutation == "seg_404" and seq == 8):
                return self._send(404, "text/plain", b"not found", "no-cache")
            body = o.segs[seq][1]
            if o.mutation == "tfdt_gap" and seq == 8:
                body = o.segs[9][1]
            cache = "no-cache" if o.mutation == "seg_no_cache" else "public, max-age=3600, immutable"
            extra = 100 if (o.mutation == "short_body" and seq == 8) else 0
            return self._send(200, "video/iso.segment", body, cache, extra)
        return self._send(404, "text/plain", b"not found", "no-cache")
