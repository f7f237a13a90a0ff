#!/usr/bin/env python3
"""A stand-in for hls-origin built from FFmpeg's own HLS muxer + a python HTTP server, implementing the same CLI
and routes. It exists only to validate the e2e suite itself (every test must be able to pass on a correct origin):

    HLS_ORIGIN_BIN=Tests/e2e/reference_origin.py python3 -m pytest Tests/e2e

It is NOT the product and is never used by scripts/test. It transcodes everything with libx264/AAC.
"""
import argparse
import functools
import http.server
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hlsharness import ladders, mp4, procs, simladder  # noqa: E402


def write_multivariant(d):
    """index.m3u8 with CODECS/RESOLUTION taken from init.mp4 (FFmpeg writes no variant for video-only)."""
    with open(os.path.join(d, "init.mp4"), "rb") as f:
        init = mp4.parse_init(f.read())
    attrs = f'BANDWIDTH=2000000,CODECS="{",".join(init.codecs)}"'
    v = next((t for t in init.tracks if t.handler == "vide"), None)
    if v:
        attrs += f",RESOLUTION={v.width}x{v.height}"
    tmp = os.path.join(d, ".index.tmp")
    with open(tmp, "w") as f:
        f.write(f"#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:{attrs}\nstream.m3u8\n")
    os.replace(tmp, os.path.join(d, "index.m3u8"))


def probe_stdin_prefix(a, limit=2 << 20):
    """Read the start of stdin, probe it; return (prefix bytes, codecs)."""
    prefix = b""
    while len(prefix) < limit:
        chunk = sys.stdin.buffer.read1(65536)
        if not chunk:
            break
        prefix += chunk
    p = subprocess.run(["ffprobe", "-v", "error", *input_args(a), "-show_entries", "stream=codec_name",
                        "-of", "csv=p=0", "-i", "pipe:0"], input=prefix, capture_output=True)
    if p.returncode != 0 or not p.stdout.strip():
        err = p.stderr.decode(errors="replace").strip().splitlines()
        die(f"cannot read input from stdin: {err[-1] if err else 'no streams'}")
    return prefix, [c.strip().strip(",") for c in p.stdout.decode().split()]


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def input_args(a):
    args = []
    if a.input_format:
        args += ["-f", a.input_format]
    if a.video_size:
        args += ["-video_size", a.video_size]
    if a.pixel_format:
        args += ["-pixel_format", a.pixel_format]
    if a.framerate:
        args += ["-framerate", str(a.framerate)]
    return args


def check_input(a):
    """Probe like the real tool would: a missing file, an unreadable stream or a codec we may not transcode."""
    if a.input is None:
        return None
    if a.input != "-" and "://" not in a.input and not os.path.exists(a.input):
        die(f"cannot open input {a.input}: No such file or directory")
    if a.video_size:
        try:
            w, h = (int(x) for x in a.video_size.split("x"))
            assert w > 0 and h > 0
        except (ValueError, AssertionError):
            die(f"invalid --video-size {a.video_size!r} (expected WxH)")
    if a.input == "-":
        return None
    p = subprocess.run(["ffprobe", "-v", "error", *input_args(a), "-show_entries", "stream=codec_name",
                        "-of", "csv=p=0", a.input], capture_output=True, text=True)
    if p.returncode != 0:
        die(f"cannot read input {a.input}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else 'unknown'}")
    codecs = [c.strip().strip(",") for c in p.stdout.split()]
    if a.transcode == "never" and any(c not in ("h264", "aac") for c in codecs):
        die(f"input codecs {','.join(codecs)} need transcoding but --transcode never was given")
    return codecs


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def guess_type(self, path):
        for ext, t in ((".m3u8", "application/vnd.apple.mpegurl"), (".m4s", "video/iso.segment"),
                       (".mp4", "video/mp4"), (".mjs", "text/javascript"), (".html", "text/html")):
            if path.endswith(ext):
                return t
        return "application/octet-stream"

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        p = self.path.split("?")[0]
        if p.endswith(".m4s"):
            self.send_header("Cache-Control", "public, max-age=3600, immutable")
        elif p.endswith(".mp4") or p.endswith(".mjs"):
            self.send_header("Cache-Control", "public, max-age=3600")
        else:
            self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def do_GET(self):
        if self.path.split("?")[0] == "/":
            self.path = "/player.html"
        return super().do_GET()


def ladder_names(a):
    names = [f"{h.strip()}p" for h in a.ladder.split(",") if h.strip()]
    known = [r[0] for r in ladders.FULL_RUNGS]
    if not names or any(n not in known for n in names):
        die(f"reference: --ladder takes heights from {','.join(n[:-1] for n in known)}")
    return [n for n in known if n in names]


def serve_ladder(a):
    """--ladder: simladder's LL-HLS origin looping FFmpeg's 720p/480p/360p ladder of the test pattern (32 s)."""
    if a.input is not None:
        die("reference: --ladder is only implemented for the test pattern")
    source = ladders.cached_ladder(seconds=33, rungs=ladders.FULL_RUNGS, hls_time="0.333333", split_by_time=True,
                                   multivariant=False)
    pages = {"/": (procs.PLAYER_HTML.encode(), "text/html"), "/player.html": (procs.PLAYER_HTML.encode(), "text/html")}
    if a.hlsjs and os.path.exists(a.hlsjs):
        with open(a.hlsjs, "rb") as f:
            pages["/hls.mjs"] = (f.read(), "text/javascript")
    origin = simladder.SimLadderOrigin(source, window=a.window, history=0.0, names=ladder_names(a) + [ladders.AUDIO],
                                       loop_parts=96, pages=pages, port=a.port).start()
    if not a.quiet:
        print(f"serving http://127.0.0.1:{origin.port}/ (reference ladder)", file=sys.stderr)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    origin.stop()
    return 0


def package_ladder(a):
    check_input(a)
    names = ladder_names(a)
    try:
        ladders.ffmpeg_ladder(a.output, rungs=[r for r in ladders.FULL_RUNGS if r[0] in names],
                              hls_time=a.segment_duration, seconds=None, input_file=a.input)
    except RuntimeError as e:
        die(f"packaging failed: {e}")
    return 0


def serve(a):
    if a.ladder:
        return serve_ladder(a)
    codecs = check_input(a)
    prefix = None
    if a.input == "-":
        prefix, codecs = probe_stdin_prefix(a)
        if a.transcode == "never" and any(c not in ("h264", "aac") for c in codecs):
            die(f"input codecs {','.join(codecs)} need transcoding but --transcode never was given")
    d = tempfile.mkdtemp(prefix="refo-")
    procs.write_player_page(d)
    if a.hlsjs and os.path.exists(a.hlsjs):
        shutil.copy(a.hlsjs, os.path.join(d, "hls.mjs"))
    if a.input is None:
        src = ["-re", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-re", "-f", "lavfi", "-i",
               "sine=frequency=440:sample_rate=48000"]
    else:
        src = (["-stream_loop", "-1"] if a.loop else []) + (["-re"] if not a.no_realtime else []) + \
            input_args(a) + ["-i", "pipe:0" if a.input == "-" else a.input]
    enc = ["-map", "0:v?", "-map", "0:a?"] if a.input is not None else []
    if a.input is None:
        enc = ["-map", "0:v", "-map", "1:a"]
    if a.transcode == "never" and codecs is not None:
        enc += ["-c", "copy", "-bsf:a", "aac_adtstoasc"]
    else:
        enc += ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
                "-force_key_frames", f"expr:gte(t,n_forced*{a.segment_duration})", "-sc_threshold", "0",
                "-c:a", "aac", "-ac", "2", "-ar", "48000"]
    cmd = ["ffmpeg", "-hide_banner", "-nostdin" if a.input != "-" else "-y", "-loglevel", "error", *src, *enc,
           "-f", "hls", "-hls_time", str(a.segment_duration), "-hls_list_size", str(a.window),
           "-hls_segment_type", "fmp4", "-hls_flags", "delete_segments+program_date_time+temp_file",
           "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", os.path.join(d, "seg%d.m4s"),
           os.path.join(d, "stream.m3u8")]
    ff = subprocess.Popen(cmd, stdin=subprocess.PIPE if a.input == "-" else subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    if a.input == "-":
        def pump():
            try:
                ff.stdin.write(prefix)
                while True:
                    chunk = sys.stdin.buffer.read1(65536)
                    if not chunk:
                        break
                    ff.stdin.write(chunk)
            except (BrokenPipeError, OSError):
                pass
            finally:
                try:
                    ff.stdin.close()
                except OSError:
                    pass
        threading.Thread(target=pump, daemon=True).start()
    httpd = http.server.ThreadingHTTPServer((a.host, a.port), functools.partial(Handler, directory=d))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    if not a.quiet:
        print(f"serving http://{a.host}:{a.port}/", file=sys.stderr)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    ff_done = False
    index_written = False
    while not stop.is_set():
        if not index_written and os.path.exists(os.path.join(d, "stream.m3u8")):
            write_multivariant(d)
            index_written = True
        if not ff_done and ff.poll() is not None:
            ff_done = True
            err = ff.stderr.read().decode(errors="replace").strip()
            if not os.path.exists(os.path.join(d, "stream.m3u8")):
                httpd.shutdown()
                die(f"cannot read input: {err.splitlines()[-1] if err else 'no media'}")
        stop.wait(0.2)
    if ff.poll() is None:
        ff.send_signal(signal.SIGTERM)
        ff.wait(5)
    httpd.shutdown()
    shutil.rmtree(d, ignore_errors=True)
    return 0


def package(a):
    if a.ladder:
        return package_ladder(a)
    check_input(a)
    os.makedirs(a.output, exist_ok=True)
    enc = ["-map", "0:v?", "-map", "0:a?"]
    codecs = check_input(a) or []
    if a.transcode == "always" or (a.transcode == "auto" and any(c not in ("h264", "aac") for c in codecs)):
        enc += ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac"]
    else:
        enc += ["-c", "copy", "-bsf:a", "aac_adtstoasc"]
    cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", *input_args(a), "-i", a.input, *enc,
           "-f", "hls", "-hls_time", str(a.segment_duration), "-hls_segment_type", "fmp4",
           "-hls_playlist_type", "vod", "-hls_fmp4_init_filename", "init.mp4",
           "-hls_segment_filename", os.path.join(a.output, "seg%d.m4s"), os.path.join(a.output, "stream.m3u8")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"packaging failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    write_multivariant(a.output)
    os.remove(os.path.join(a.output, ".index.tmp")) if os.path.exists(os.path.join(a.output, ".index.tmp")) else None
    return 0


def main():
    ap = argparse.ArgumentParser(prog="reference_origin")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("serve", "package"):
        s = sub.add_parser(name)
        s.add_argument("input", nargs="?" if name == "serve" else None)
        s.add_argument("--loop", action="store_true")
        s.add_argument("--no-realtime", action="store_true")
        s.add_argument("--host", default="127.0.0.1")
        s.add_argument("--port", type=int, default=8080)
        s.add_argument("--window", type=int, default=6)
        s.add_argument("--segment-duration", type=float, default=1)
        s.add_argument("--input-format")
        s.add_argument("--video-size")
        s.add_argument("--pixel-format")
        s.add_argument("--framerate")
        s.add_argument("--transcode", default="auto", choices=("auto", "always", "never"))
        s.add_argument("--quiet", action="store_true")
        s.add_argument("--log-level")
        s.add_argument("--hlsjs")
        s.add_argument("--ladder")
        s.add_argument("--part-duration", type=float, default=0.333)
        if name == "package":
            s.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.segment_duration == int(a.segment_duration):
        a.segment_duration = int(a.segment_duration)
    return serve(a) if a.cmd == "serve" else package(a)


if __name__ == "__main__":
    sys.exit(main())
