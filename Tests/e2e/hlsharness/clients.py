"""Real HLS clients other than the browser: ffmpeg, streamlink, plus ffprobe helpers."""
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field


@dataclass
class ClientResult:
    ok: bool
    rc: int
    stderr: str
    elapsed: float
    details: dict = field(default_factory=dict)

    def __str__(self):
        return f"ok={self.ok} rc={self.rc} elapsed={self.elapsed:.1f}s details={self.details} stderr={self.stderr[-1500:]!r}"


def ffmpeg_read(url, seconds=10, timeout=30):
    """Read `seconds` of url with ffmpeg (all streams, decoded, discarded). OK = rc 0 and empty stderr."""
    cmd = ["timeout", "-s", "KILL", str(timeout), "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
           "-xerror", "-rw_timeout", "5000000", "-i", url, "-t", str(seconds), "-map", "0", "-f", "null", "-"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
    el = time.monotonic() - t0
    err = p.stderr.decode("utf-8", errors="replace")
    details = {}
    if p.returncode in (124, 137, -9):
        details["timeout"] = True
    return ClientResult(p.returncode == 0 and err.strip() == "", p.returncode, err, el, details)


def ffprobe_json(path_or_url, *args, timeout=60):
    cmd = ["ffprobe", "-hide_banner", "-v", "error", "-of", "json", *args, path_or_url]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"ffprobe {path_or_url} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return json.loads(p.stdout or b"{}")


def probe_streams(path):
    return ffprobe_json(path, "-show_streams", "-show_format")


def packet_stats(path, select=None):
    """Per stream index: packet count, first/last pts (s), span = last pts + its duration - first pts (s),
    keyframes. Uses pts_time/dts_time/duration_time from ffprobe."""
    args = ["-show_entries", "packet=stream_index,pts_time,dts_time,duration_time,flags"]
    if select:
        args += ["-select_streams", select]
    data = ffprobe_json(path, *args, timeout=300)
    stats = {}
    for pk in data.get("packets", []):
        i = pk["stream_index"]
        s = stats.setdefault(i, {"count": 0, "min": None, "max_end": None, "keyframes": 0})
        s["count"] += 1
        t = pk.get("pts_time", pk.get("dts_time"))
        if t in (None, "N/A"):
            continue
        t = float(t)
        d = pk.get("duration_time")
        d = float(d) if d not in (None, "N/A") else 0.0
        s["min"] = t if s["min"] is None else min(s["min"], t)
        s["max_end"] = t + d if s["max_end"] is None else max(s["max_end"], t + d)
        if "K" in pk.get("flags", ""):
            s["keyframes"] += 1
    for s in stats.values():
        s["span"] = (s["max_end"] - s["min"]) if s["min"] is not None else 0.0
    return stats


def decode_check(path, timeout=120):
    """Decode every stream; returns (ok, stderr)."""
    p = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-xerror", "-i", path, "-map", "0",
                        "-f", "null", "-"], stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    err = p.stderr.decode("utf-8", errors="replace")
    return p.returncode == 0 and not err.strip(), err


def streamlink_record(url, seconds=10, outdir=None, timeout=60):
    """Record `seconds` of a live HLS URL with streamlink; OK = rc 0, packet span of the recording >= seconds-1
    and the recording decodes without error."""
    outdir = outdir or tempfile.mkdtemp(prefix="streamlink-")
    out = os.path.join(outdir, "record.mp4")
    cmd = ["streamlink", "--hls-duration", str(int(seconds)), "--force", "--loglevel", "warning",
           "-o", out, f"hls://{url}", "best"]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        rc, err = p.returncode, (p.stderr + p.stdout).decode("utf-8", errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, err = -9, f"timeout after {timeout}s: {(e.stderr or b'').decode(errors='replace')}"
    el = time.monotonic() - t0
    details = {"path": out}
    ok = rc == 0 and os.path.exists(out) and os.path.getsize(out) > 0
    if os.path.exists(out) and os.path.getsize(out) > 0:
        try:
            st = packet_stats(out)
            details["span"] = {i: round(s["span"], 3) for i, s in st.items()}
            details["packets"] = {i: s["count"] for i, s in st.items()}
            spans = [s["span"] for s in st.values()]
            if not spans or min(spans) < seconds - 1:
                ok = False
            dok, derr = decode_check(out)
            details["decode_ok"] = dok
            if not dok:
                ok = False
                err += "\ndecode: " + derr[-1500:]
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            ok = False
            err += f"\n{e}"
    return ClientResult(ok, rc, err, el, details)
