"""Processes the tests start: our origin, nginx, a static page server, FFmpeg's live HLS reference, stdin feeders."""
import atexit
import contextlib
import functools
import http.server
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

from . import http as h

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HLSJS_PATH = os.path.join(REPO, ".cache", "hlsjs", "hls.mjs")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def package(origin_bin, src, out, *args, timeout=180):
    """`hls-origin package SRC -o OUT ARGS...`: asserts a zero exit (showing the end of stderr), returns OUT as a str."""
    p = subprocess.run([origin_bin, "package", str(src), "-o", str(out), *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=timeout)
    assert p.returncode == 0, p.stderr.decode("utf-8", errors="replace")[-2000:]
    return str(out)


def stop_process(proc, grace=5.0, sig=signal.SIGINT):
    """SIGINT (or sig), wait up to grace seconds, then SIGKILL. Returns the exit code."""
    if proc is None:
        return None
    if proc.poll() is None:
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode


class OriginServer:
    """`$HLS_ORIGIN_BIN serve ...` on a free loopback port, stderr captured to a file."""

    def __init__(self, binary, args=(), stdin=None, workdir=None, port=None, host="127.0.0.1", env=None,
                 subcommand="serve"):
        self.binary = binary
        self.port = port or free_port()
        self.host = host
        self.args = [binary, subcommand, *args, "--host", host, "--port", str(self.port)]
        self.stdin = stdin
        if workdir is None:
            # Its logs are read after stop() (stderr()); the directory goes when the test process ends.
            workdir = tempfile.mkdtemp(prefix="hls-origin-")
            atexit.register(shutil.rmtree, workdir, True)
        self.workdir = workdir
        self.stderr_path = os.path.join(self.workdir, f"origin-{self.port}.stderr")
        self.stdout_path = os.path.join(self.workdir, f"origin-{self.port}.stdout")
        self.env = env
        self.proc = None
        self.started_at = None

    @property
    def base_url(self):
        return f"http://{self.host}:{self.port}"

    def url(self, path):
        return self.base_url + path

    def start(self):
        self._err = open(self.stderr_path, "wb")
        self._out = open(self.stdout_path, "wb")
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdin=self.stdin if self.stdin is not None else subprocess.DEVNULL,
                                     stdout=self._out, stderr=self._err, env=self.env, cwd=self.workdir)
        return self

    def wait_ready(self, timeout=20.0, path="/index.m3u8"):
        """Wait until path answers 200; returns seconds it took, raises RuntimeError (with stderr) otherwise."""
        r = h.wait_for_200(self.url(path), timeout, proc=self.proc)
        if r is None:
            state = (f"exited with {self.proc.returncode}" if self.proc.poll() is not None
                     else f"no 200 from {path} within {timeout}s")
            raise RuntimeError(f"hls-origin {state}; command: {' '.join(self.args)}\nstderr:\n{self.stderr()[-3000:]}")
        return time.monotonic() - self.started_at

    def stderr(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self):
        rc = stop_process(self.proc)
        for f in (getattr(self, "_err", None), getattr(self, "_out", None)):
            if f:
                f.close()
        return rc

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@contextlib.contextmanager
def serving(binary, args=(), label="server", timeout=20, ready="/index.m3u8"):
    """A module-scoped origin: started with the local hls.js, ready (`ready` answers 200, or RuntimeError), stopped at
    the end with its stderr tail printed so a failing test shows it."""
    args = list(args)
    if os.path.exists(HLSJS_PATH) and "--hlsjs" not in args:
        args += ["--hlsjs", HLSJS_PATH]
    s = OriginServer(binary, args)
    s.start()
    try:
        s.ready_after = s.wait_ready(timeout, path=ready)
        yield s
    finally:
        rc = s.stop()
        print(f"\n--- {label} exit {rc}; stderr tail:\n{s.stderr()[-2000:]}")
        shutil.rmtree(s.workdir, ignore_errors=True)


class StdinFeeder(threading.Thread):
    """Write bytes into a process's stdin at about `rate` bytes/s (None = as fast as it reads), then close it."""

    def __init__(self, pipe, data, rate=None, chunk=16384, close=True):
        super().__init__(daemon=True)
        self.pipe, self.data, self.rate, self.chunk, self.close_at_end = pipe, data, rate, chunk, close
        self.written = 0
        self.error = None
        self.done = threading.Event()

    def run(self):
        t0 = time.monotonic()
        try:
            for i in range(0, len(self.data), self.chunk):
                self.pipe.write(self.data[i:i + self.chunk])
                self.pipe.flush()
                self.written += min(self.chunk, len(self.data) - i)
                if self.rate:
                    ahead = self.written / self.rate - (time.monotonic() - t0)
                    if ahead > 0:
                        time.sleep(ahead)
        except (BrokenPipeError, ValueError, OSError) as e:
            self.error = e
        finally:
            if self.close_at_end:
                try:
                    self.pipe.close()
                except OSError:
                    pass
            self.done.set()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    cors = False
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript", ".html": "text/html",
                      ".m3u8": "application/vnd.apple.mpegurl", ".m4s": "video/iso.segment", ".mp4": "video/mp4"}

    def log_message(self, *args):
        pass

    def end_headers(self):
        if self.cors:
            self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()


class LoopbackHTTPServer:
    """A ThreadingHTTPServer on 127.0.0.1 in a daemon thread; a context manager."""

    def __init__(self, handler, port=None):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port or 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class StaticServer(LoopbackHTTPServer):
    """python http.server in a thread on a free loopback port (optionally with CORS headers)."""

    def __init__(self, root, cors=False, port=None):
        handler = type("H", (_QuietHandler,), {"cors": cors})
        super().__init__(functools.partial(handler, directory=root), port)


# The harness's own player page: every setting comes from the query string, so one static file serves the
# FFmpeg reference and the cross-origin test. It sets window.hls like hls-origin's own page must.
PLAYER_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>e2e player</title></head>
<body style="margin:0;background:#000">
<video id="video" muted autoplay playsinline style="display:block;width:640px;height:360px"></video>
<script type="module">
const p = new URLSearchParams(location.search);
const { default: Hls } = await import(p.get('hlsjs') || '/hls.mjs');
const video = document.getElementById('video');
if (!Hls.isSupported()) throw new Error('hls.js not supported');
const hls = new Hls({ lowLatencyMode: p.get('lowLatency') === '1' });
window.hls = hls;
hls.loadSource(p.get('src') || '/index.m3u8');
hls.attachMedia(video);
hls.on(Hls.Events.MANIFEST_PARSED, () => video.play().catch(e => console.warn('play()', e.message)));
</script></body></html>
"""


def player_page_url(page_base, hlsjs_url, src_url, low_latency=False):
    q = {"hlsjs": hlsjs_url, "src": src_url}
    if low_latency:
        q["lowLatency"] = "1"
    return page_base + "/player.html?" + urllib.parse.urlencode(q)


def write_player_page(directory, name="player.html"):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(PLAYER_HTML)
    return path


NGINX_CONF = """
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    types {{
        application/vnd.apple.mpegurl m3u8;
        video/iso.segment m4s;
        video/mp4 mp4;
        text/javascript mjs js;
        text/html html;
    }}
    server {{
        listen 127.0.0.1:{port}{tls};
        root {root};{certificate}
        add_header Access-Control-Allow-Origin * always;
        location ~ \\.m3u8$ {{ add_header Access-Control-Allow-Origin * always; add_header Cache-Control "no-cache" always; }}
        location ~ \\.m4s$ {{ add_header Access-Control-Allow-Origin * always; add_header Cache-Control "public, max-age=3600, immutable" always; }}
        location ~ \\.mp4$ {{ add_header Access-Control-Allow-Origin * always; add_header Cache-Control "public, max-age=3600" always; }}
    }}
}}
"""


def nginx_binary():
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


class Nginx:
    """nginx on a free loopback port serving root with HLS content types, Cache-Control and CORS (sendfile on)."""

    def __init__(self, root, port=None, workers=1, tls=None):
        """`tls`: (certificate, key) PEM paths: HTTPS with HTTP/2 (ALPN h2) and HTTP/1.1."""
        self.root = os.path.abspath(root)
        self.tls = tls
        if os.geteuid() == 0:
            os.chmod(self.root, 0o755)  # workers run as nobody; mkdtemp() made it 0700
        self.port = port or free_port()
        self.prefix = tempfile.mkdtemp(prefix="nginx-")
        self.conf = os.path.join(self.prefix, "nginx.conf")
        with open(self.conf, "w") as f:
            certificate = (f"\n        ssl_certificate {tls[0]};\n        ssl_certificate_key {tls[1]};" if tls else "")
            f.write(NGINX_CONF.format(workers=workers, prefix=self.prefix, port=self.port, root=self.root,
                                      tls=" ssl http2" if tls else "", certificate=certificate))
        self.proc = None

    @property
    def base_url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self, timeout=10):
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx not installed")
        self.proc = subprocess.Popen([binary, "-p", self.prefix, "-c", self.conf, "-e", self.prefix + "/error.log"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.proc.stderr.read().decode()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not start listening")

    def stop(self):
        stop_process(self.proc, sig=signal.SIGQUIT)
        shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class FFmpegLiveReference:
    """FFmpeg's own live fMP4 HLS (the shape of hls-origin's routes: index.m3u8 -> stream.m3u8, init.mp4,
    seg<N>.m4s) written into a directory, served by nginx with hls.mjs and the harness player page."""

    def __init__(self, size="1280x720", rate=30, hls_time=1, list_size=6, extra_flags="", preset="veryfast",
                 workdir=None):
        self.dir = workdir or tempfile.mkdtemp(prefix="ffmpeg-live-")
        self.size, self.rate, self.hls_time, self.list_size = size, rate, hls_time, list_size
        self.extra_flags, self.preset = extra_flags, preset
        self.proc = None
        self.nginx = None

    def start(self, ready_timeout=15):
        write_player_page(self.dir)
        if os.path.exists(HLSJS_PATH):
            shutil.copy(HLSJS_PATH, os.path.join(self.dir, "hls.mjs"))
        flags = "delete_segments+program_date_time+temp_file" + self.extra_flags
        cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re",
               "-f", "lavfi", "-i", f"testsrc2=size={self.size}:rate={self.rate}",
               "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
               "-c:v", "libx264", "-preset", self.preset, "-tune", "zerolatency", "-pix_fmt", "yuv420p",
               "-g", str(self.rate * self.hls_time), "-keyint_min", str(self.rate * self.hls_time),
               "-sc_threshold", "0", "-c:a", "aac", "-ac", "2",
               "-f", "hls", "-hls_time", str(self.hls_time), "-hls_list_size", str(self.list_size),
               "-hls_segment_type", "fmp4", "-hls_flags", flags,
               "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", os.path.join(self.dir, "seg%d.m4s"),
               "-master_pl_name", "index.m3u8", os.path.join(self.dir, "stream.m3u8")]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.nginx = Nginx(self.dir).start()
        if h.wait_for_200(self.base_url + "/stream.m3u8", ready_timeout, proc=self.proc) is None or \
                h.wait_for_200(self.base_url + "/index.m3u8", ready_timeout, proc=self.proc) is None:
            err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"ffmpeg live reference did not start: {err}")
        return self

    @property
    def base_url(self):
        return self.nginx.base_url

    def player_url(self, low_latency=False, src=None, hlsjs=None):
        return player_page_url(self.base_url, hlsjs or self.base_url + "/hls.mjs",
                               src or self.base_url + "/index.m3u8", low_latency)

    def kill_encoder(self, sig=signal.SIGKILL):
        """SIGKILL simulates a stalled origin (playlist frozen); SIGTERM makes FFmpeg write EXT-X-ENDLIST."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=10)

    def stop(self):
        stop_process(self.proc, sig=signal.SIGTERM)
        if self.nginx:
            self.nginx.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
