"""Hostile HTTP against the real `hls-origin serve` (issue 12 §3 and §4): one test per attack, and while each runs an
honest client (its own process, one keep-alive connection) keeps reading the media playlist and its newest segment;
its p99 latency must stay under 50 ms with no error. Limits come from the serve flags (`--max-connections`,
`--max-header-size`, `--header-timeout`, `--idle-timeout`, `--send-timeout`, `--max-blocked-per-client`,
`--max-blocked`); a test that needs a tighter one passes it.

The measured p99 of each test is printed (`-s` shows it) and recorded in docs/security.md."""
import os
import re
import resource
import selectors
import socket
import subprocess
import tempfile
import time

import pytest

from hlsharness import http
from hlsharness.honest import HonestClient
from hlsharness import media as media_mod
from hlsharness.testenv import missing, need

P99_LIMIT_MS = 50.0
PLAYLIST = "/stream.m3u8"

# ---------------------------------------------------------------------------------------------------------------
# The honest client (hlsharness.honest) over one persistent HTTP/1.1 connection.

FETCH = r'''
import http.client
conn = None
def fetch(p):
    global conn
    if conn is None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    t = time.monotonic()
    try:
        conn.request("GET", p, headers={"Origin": "http://player.example"})
        r = conn.getresponse(); body = r.read()
    except Exception as e:
        conn.close(); conn = None
        errors.append(f"{p}: {type(e).__name__}: {e}"); return None
    lat.append((time.monotonic() - t) * 1000)
    if r.status != 200:
        errors.append(f"{p}: {r.status}"); return None
    return body
'''


class Honest(HonestClient):
    """`with Honest(server, label) as h:` ... then `h.p99`, `h.count`, `h.errors` and `h.check()`."""

    def __init__(self, server, label):
        super().__init__(server.port, label, FETCH, PLAYLIST)

    def check(self, p99_limit_ms=P99_LIMIT_MS):
        super().check(p99_limit_ms)


# ---------------------------------------------------------------------------------------------------------------
# Raw HTTP/1.1 on sockets


def raw_exchange(port, data, timeout=5.0, src=None):
    """Send bytes, read until the server closes (or timeout). Returns everything read."""
    s = socket.socket()
    if src:
        s.bind((src, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    out = b""
    try:
        s.sendall(data)
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except (socket.timeout, ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out


def parse_responses(data):
    """Split a byte stream into [(status, headers(lower-cased), body)] using Content-Length (no chunked here)."""
    out = []
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            break
        head = data[:end].decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        headers = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        if len(data) < end + 4 + n:
            break
        body = data[end + 4:end + 4 + n]
        out.append((status, headers, body))
        data = data[end + 4 + n:]
    return out


def one_response(port, request, **kw):
    rs = parse_responses(raw_exchange(port, request, **kw))
    assert rs, f"no response to {request[:80]!r}"
    return rs[0]


class Crowd:
    """Many sockets, each sending one request; responses read with a selector (no thread per socket)."""

    def __init__(self):
        self.sel = selectors.DefaultSelector()
        self.pending = {}
        self.done = []

    def open(self, port, src=None):
        """Connect now, send later (accepting is the slow part)."""
        s = socket.socket()
        if src:
            s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        self.pending[s] = [b"", None]
        return s

    def send(self, port, request, src=None, sock=None):
        s = sock or self.open(port, src)
        s.sendall(request)
        s.setblocking(False)
        self.pending[s][1] = time.monotonic()
        self.sel.register(s, selectors.EVENT_READ)

    def collect(self, timeout, first=False):
        """The answers so far, after waiting up to timeout for every pending one (first: only for one more)."""
        deadline = time.monotonic() + timeout
        had = len(self.done)
        while self.pending and time.monotonic() < deadline and not (first and len(self.done) > had):
            for key, _ in self.sel.select(timeout=0.2):
                s = key.fileobj
                try:
                    d = s.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except ConnectionError:
                    d = b""
                buf = self.pending[s]
                buf[0] += d
                rs = parse_responses(buf[0])
                if rs or not d:
                    self.done.append((rs[0] if rs else (0, {}, b""), time.monotonic() - buf[1]))
                    self.sel.unregister(s)
                    s.close()
                    del self.pending[s]
        return self.done

    def close(self):
        for s in list(self.pending):
            self.sel.unregister(s)
            s.close()
        self.pending.clear()


def raise_fd_limit(n):
    """Raise this process's open-file limit to n (the origin, started after, inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < n:
        missing(f"the open-file hard limit is {hard}; this test needs {n} (raise it: ulimit -Hn {n})")
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def playlist_state(server):
    """(media sequence, segment URIs, trailing parts of the segment in progress) of the media playlist."""
    r = http.get(server.url(PLAYLIST))
    assert r.status == 200, r
    msn, segs, parts = 0, [], 0
    for line in r.text.splitlines():
        if line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
            msn = int(line.split(":")[1])
        elif line.startswith("#EXT-X-PART:"):
            parts += 1
        elif line and not line.startswith("#"):
            segs.append(line)
            parts = 0
    return msn, segs, parts


def cors(headers):
    return headers.get("access-control-allow-origin") == "*"


# ---------------------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def big_clip():
    """A 4-second 640x360 clip with noise so that its 1-second segments are big (about 1 MB): what a client that
    never reads would pin if the origin copied a response per connection."""
    need("ffmpeg")
    d = os.path.join(media_mod.cache_dir(), "hostile")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "noisy.mp4")
    if not os.path.exists(path):
        tmp = path + ".tmp.mp4"
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                        "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-f", "lavfi", "-i", "sine=f=440",
                        "-t", "4", "-vf", "noise=alls=60:allf=t", "-c:v", "libx264", "-preset", "ultrafast",
                        "-g", "30", "-b:v", "8M", "-maxrate", "8M", "-bufsize", "8M", "-c:a", "aac",
                        "-movflags", "+faststart", tmp], check=True)
        os.replace(tmp, path)
    return path


@pytest.fixture
def origin(start_origin, big_clip):
    """origin(*flags): a looped copy of the big clip (no transcoding: the CPU stays with the HTTP side)."""
    def start(*flags):
        s = start_origin(big_clip, "--loop", *flags)
        http.wait_for_200(s.url(PLAYLIST), 20)
        for _ in range(100):  # a segment listed, so the honest client has something to fetch
            if playlist_state(s)[1]:
                break
            time.sleep(0.1)
        return s
    return start


# ---------------------------------------------------------------------------------------------------------------
# §4: only the stream's objects and the page


def test_path_traversal_never_reaches_a_file(origin):
    """Every form of `..` (plain, %2e, double-encoded, backslash, NUL, absolute-form) is 400 or 404 with a short
    error body; none reads a file. The origin has no file route at all: objects come from memory (and from the
    recording, by sequence number, never by a path from the URI)."""
    s = origin()
    secret = open("/etc/passwd", "rb").read()[:16]
    targets = [
        "/../../../../etc/passwd", "/..", "/stream/../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", "/.%2e/.%2e/etc/passwd",
        "/%252e%252e/%252e%252e/etc/passwd", "/%25252e%25252e%25252fetc%25252fpasswd",
        "/..\\..\\..\\etc\\passwd", "/%5c..%5c..%5cetc%5cpasswd", "/..%5c..%5cetc%5cpasswd",
        "/etc/passwd%00", "/stream.m3u8%00.txt", "/%00/../etc/passwd", "//etc/passwd", "/./././etc/passwd",
        "/hls.mjs/../../../../etc/passwd", "http://127.0.0.1/../../etc/passwd",
        "/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",  # overlong UTF-8 dots
    ]
    with Honest(s, "path traversal") as h:
        for _ in range(3):
            for t in targets:
                status, headers, body = one_response(s.port, f"GET {t} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                                     .encode("latin-1"))
                assert status in (400, 404), (t, status)
                assert secret not in body and len(body) < 64, (t, body[:80])
                assert cors(headers), (t, headers)
        # A raw NUL and a raw backslash in the request line: the parser refuses them (400, still with CORS).
        for raw in [b"GET /etc/passwd\x00 HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /\x00/../etc/passwd HTTP/1.1\r\n\r\n",
                    b"GET /..\\..\\etc\\passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]:
            status, headers, body = one_response(s.port, raw)
            assert status in (400, 404), (raw, status)
            assert secret not in body and cors(headers), raw
    h.check()


def test_no_listing_and_nothing_but_what_the_origin_made(origin, big_clip):
    """The page and the stream's objects are served; directories, the input file, the server's working directory
    and the source tree are 404."""
    s = origin()
    page = http.get(s.url("/"))
    assert page.status == 200 and b"<html" in page.body.lower()
    assert http.get(s.url("/index.m3u8")).status == 200
    cwd_files = os.listdir(s.workdir)
    assert cwd_files, "the server's working directory holds its logs"
    probes = ["/" + f for f in cwd_files] + [
        "/" + os.path.basename(big_clip), big_clip, "/stream/", "/stream", "/720p/", "/init/", "/segments/",
        "/index.m3u8/", "/.git/config", "/Package.swift", "/Sources/", "/.cache/hlsjs/hls.mjs",
        "/proc/self/environ", "/robots.txt", "/favicon.ico", "/index.html/..",
    ]
    # Apache's listing-sort query on the root is just the page
    assert http.get(s.url("/?C=M;O=A")).body == page.body
    for p in probes:
        r = http.get(s.url(p))
        assert r.status in (400, 404), (p, r.status)
        assert b"Index of" not in r.body and len(r.body) < 64, p


# ---------------------------------------------------------------------------------------------------------------
# Size limits


def test_100kb_uri_is_414_with_cors(origin):
    """RFC 9112 §3: "A server that receives a request-target longer than any URI it wishes to parse MUST respond with
    a 414 (URI Too Long) status code." The parser's limit (--max-header-size, 32 KiB) catches the 100 KB line; a
    path over the router's 256 bytes gets the same answer."""
    s = origin()
    with Honest(s, "100 KB URIs") as h:
        for _ in range(20):
            status, headers, _ = one_response(s.port, b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            assert status == 414 and cors(headers) and headers.get("connection") == "close"
        status, headers, _ = one_response(s.port, b"GET /" + b"b" * 1000 + b".m4s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert status == 414 and cors(headers)
    h.check()


def test_1mb_header_block_is_431_with_cors(origin):
    """RFC 6585 §5: "The 431 status code indicates that the server is unwilling to process the request because its
    header fields are too large." One 1 MB field, and 1 MB of small fields; the connection is closed after."""
    s = origin()
    one_big = b"GET /stream.m3u8 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * (1 << 20) + b"\r\n\r\n"
    many = b"GET /stream.m3u8 HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000)
                                                                  for i in range(1000)) + b"\r\n"
    with Honest(s, "1 MB header blocks") as h:
        for _ in range(10):
            for req in (one_big, many):
                status, headers, _ = one_response(s.port, req)
                assert status == 431 and cors(headers) and headers.get("connection") == "close"
    h.check()


def test_parser_errors_are_400_with_cors(origin):
    """Hummingbird answers a parse error with a bare 400 (and a request it cannot convert with nothing at all); the
    origin's answer carries the CORS headers, so a page can read it, then closes the connection."""
    s = origin()
    for raw in [b"GET /index.m3u8 HTXP/1.1\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
                # RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request
                # message that lacks a Host header field and to any request message that contains more than one Host
                # header field line"
                b"GET /stream.m3u8 HTTP/1.1\r\n\r\n", b"GET /stream.m3u8 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"]:
        status, headers, _ = one_response(s.port, raw)
        assert status == 400 and cors(headers), (raw, status, headers)


# ---------------------------------------------------------------------------------------------------------------
# Connections and time


def test_10000_idle_connections(origin):
    """10,000 connections that never send a byte, held together: all are accepted (under --max-connections), a new
    connection is still served, the honest client is not slowed. (That --header-timeout closes such connections
    is checked with the slowloris.)"""
    raise_fd_limit(12_000)
    s = origin("--header-timeout", "120", "--max-connections", "10100")
    rss0 = rss_kib(s.proc.pid)
    socks = []
    try:
        with Honest(s, "10,000 idle connections") as h:
            t0 = time.monotonic()
            for _ in range(10_000):
                c = socket.socket()
                c.connect(("127.0.0.1", s.port))
                socks.append(c)
            opened = time.monotonic() - t0
            time.sleep(2)
            rss1 = rss_kib(s.proc.pid)
            assert http.get(s.url(PLAYLIST)).status == 200, "a new connection is served while 10,000 are held"
            # none was refused or closed
            alive = 0
            for c in socks:
                c.setblocking(False)
                try:
                    c.recv(1)
                except BlockingIOError:
                    alive += 1
                except OSError:
                    pass
        print(f"\n10,000 connections opened in {opened:.1f} s; origin RSS {rss0 / 1024:.0f} -> {rss1 / 1024:.0f} MiB "
              f"({(rss1 - rss0) / 10_000:.1f} KiB each)")
        assert alive == 10_000, f"{10_000 - alive} idle connections were closed early"
        h.check()
    finally:
        for c in socks:
            c.close()


def test_connections_beyond_the_limit_get_503(origin):
    """--max-connections 1000: 1,500 connections; the 500 beyond the limit are answered 503 with Retry-After and
    closed at once, the first 1,000 (and the honest client, connected before) are undisturbed."""
    raise_fd_limit(4_000)
    s = origin("--max-connections", "1000")
    socks = []
    with Honest(s, "connections beyond --max-connections") as h:
        for _ in range(1_500):
            c = socket.socket()
            c.connect(("127.0.0.1", s.port))
            socks.append(c)
        time.sleep(1)
        refused = 0
        for c in socks:
            c.settimeout(0.05)
            try:
                data = c.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                data = b""
            if data.startswith(b"HTTP/1.1 503"):
                assert b"Retry-After: 1" in data and b"Access-Control-Allow-Origin: *" in data
                refused += 1
        # one slot is the honest client's
        assert 499 <= refused <= 501, f"{refused} connections refused, expected 500"
        for c in socks:
            c.close()
    h.check()
    time.sleep(0.5)
    assert http.get(s.url(PLAYLIST)).status == 200, "slots come back when connections close"


def test_slowloris_is_closed_after_the_header_timeout(origin):
    """200 connections send a request head at one byte per second; --header-timeout 3 answers 408 (RFC 9110
    §15.5.9: "the server did not receive a complete request message within the time that it was prepared to
    wait") and closes each about 3 s after its first byte. 50 connections that send nothing are closed silently
    (as nginx's client_header_timeout does)."""
    s = origin("--header-timeout", "3")
    req = b"GET /stream.m3u8 HTTP/1.1\r\nHost: x\r\nUser-Agent: slowloris\r\n\r\n"
    socks = []
    silent = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(50)]
    with Honest(s, "slowloris") as h:
        for _ in range(200):
            c = socket.socket()
            c.connect(("127.0.0.1", s.port))
            c.setblocking(False)
            socks.append(c)
        t0 = time.monotonic()
        closed_at = {}
        got = {}
        i = 0
        while len(closed_at) < len(socks) and time.monotonic() - t0 < 8:
            for c in socks:
                if c in closed_at:
                    continue
                try:
                    d = c.recv(4096)
                    got[c] = got.get(c, b"") + d
                    if not d:
                        closed_at[c] = time.monotonic() - t0
                        continue
                except BlockingIOError:
                    pass
                except OSError:
                    closed_at[c] = time.monotonic() - t0
                    continue
                try:
                    if i < len(req):
                        c.send(req[i:i + 1])
                except OSError:
                    closed_at[c] = time.monotonic() - t0
            i += 1
            time.sleep(1)
        for c in socks:
            c.close()
    h.check()
    assert len(closed_at) == len(socks), f"{len(socks) - len(closed_at)} slow connections still open after 8 s"
    assert max(closed_at.values()) < 5.5, f"closed after {max(closed_at.values()):.1f} s"
    answered = sum(1 for v in got.values() if v.startswith(b"HTTP/1.1 408"))
    assert answered >= len(socks) * 0.9, f"only {answered} got 408"
    assert all(b"access-control-allow-origin: *" in v.lower() for v in got.values() if v)
    # connections that never sent a byte were closed too, without an answer
    for c in silent:
        c.settimeout(1)
        assert c.recv(100) == b"", "a silent connection got an answer or stayed open"
        c.close()


def test_2000_blocked_ll_hls_requests(origin):
    """2,000 blocking playlist reloads at once, from 20 client addresses (127.0.0.2-21, 100 each: the default
    --max-blocked-per-client): all are held until the segment they ask for exists, then all are answered 200 with
    it. A 101st from one address is refused at once with 429 and Retry-After (RFC 6585 §4: "The 429 status code
    indicates that the user has sent too many requests in a given amount of time ("rate limiting")")."""
    raise_fd_limit(4_000)
    s = origin("--segment-duration", "4", "--header-timeout", "60")
    crowd = Crowd()
    with Honest(s, "2,000 blocked LL-HLS requests") as h:
        t0 = time.monotonic()
        socks = [crowd.open(s.port, src=f"127.0.0.{a}") for a in range(2, 22) for _ in range(100)]
        socks.append(crowd.open(s.port, src="127.0.0.2"))  # a 101st from one address
        t1 = time.monotonic()
        msn, segs, _ = playlist_state(s)
        want = msn + len(segs) + 1  # the segment after the one in progress: 4-8 s away
        req = f"GET {PLAYLIST}?_HLS_msn={want} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        for c in socks:
            crowd.send(s.port, req, sock=c)
        print(f"\n2,001 connections opened in {t1 - t0:.1f} s, requests sent in {time.monotonic() - t1:.1f} s")
        # of the 101 from 127.0.0.2, one (whichever the origin saw last) is refused at once: the first answer (the
        # others wait 4-8 s for their segment, and below each must list it); up to 3 s on a loaded machine
        early = crowd.collect(timeout=3, first=True)
        assert [r[0][0] for r in early] == [429], "only the 101st is answered before the segment exists"
        status, headers, _ = early[0][0]
        assert headers.get("retry-after") == "1" and cors(headers)
        done = crowd.collect(timeout=20)[1:]
        crowd.close()
    h.check()
    statuses = [r[0][0] for r in done]
    assert len(done) == 2000 and statuses.count(200) == 2000, {x: statuses.count(x) for x in set(statuses)}
    held = sorted(t for _, t in done)
    print(f"\nheld {held[0]:.2f}-{held[-1]:.2f} s")
    # each answer lists the segment it waited for
    assert all(re.search(rb"(?m)^#EXT-X-MEDIA-SEQUENCE:(\d+)", r[0][2]) for r in done)
    for (status, _, body), _ in done:
        first = int(re.search(rb"(?m)^#EXT-X-MEDIA-SEQUENCE:(\d+)", body).group(1))
        listed = len([l for l in body.splitlines() if l and not l.startswith(b"#")])
        assert first + listed - 1 >= want, "answered before the segment existed"


def test_blocked_requests_beyond_the_global_bound_get_503(origin):
    """--max-blocked 500: 600 held requests from 6 addresses; 100 are refused at once with 503 and Retry-After."""
    s = origin("--max-blocked", "500", "--segment-duration", "4", "--header-timeout", "60")
    crowd = Crowd()
    with Honest(s, "blocked requests beyond --max-blocked") as h:
        socks = [crowd.open(s.port, src=f"127.0.0.{a}") for a in range(2, 8) for _ in range(100)]
        msn, segs, _ = playlist_state(s)
        req = f"GET {PLAYLIST}?_HLS_msn={msn + len(segs) + 1} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        for c in socks:
            crowd.send(s.port, req, sock=c)
        done = crowd.collect(timeout=20)
        crowd.close()
    h.check()
    statuses = [r[0][0] for r in done]
    assert statuses.count(503) == 100 and statuses.count(200) == 500, {x: statuses.count(x) for x in set(statuses)}
    assert all(r[0][1].get("retry-after") == "1" for r in done if r[0][0] == 503)


# ---------------------------------------------------------------------------------------------------------------
# Protocol answers


def test_bad_delivery_directives_are_400(origin):
    """RFC 8216bis §6.2.5.2: "If the Playlist URI contains an _HLS_part directive but no _HLS_msn directive, the
    Server MUST return Bad Request, such as HTTP 400." and "If the _HLS_msn is greater than the Media Sequence
    Number of the last Media Segment in the current Playlist plus two, or if the _HLS_part exceeds the last Partial
    Segment in the current Playlist by the Advance Part Limit, then the server SHOULD immediately return Bad
    Request, such as HTTP 400." (Advance Part Limit: 3 / PART-TARGET below one second: 9 parts at 0.333 s.)
    Values that are not decimal-integers (§4.2), and a directive given twice, are 400 as well."""
    s = origin()

    def bad(last):
        return [
        "_HLS_msn=-1", "_HLS_msn=abc", "_HLS_msn=", "_HLS_msn=1e3", "_HLS_msn=0x10", "_HLS_msn=+5", "_HLS_msn=1.0",
        "_HLS_msn=18446744073709551616", "_HLS_msn=99999999999999999999999", "_HLS_msn=18446744073709551615",
        f"_HLS_msn={last + 3}", f"_HLS_msn={last + 1000}",
        "_HLS_part=0", "_HLS_part=2&_HLS_skip=YES",
        f"_HLS_msn={last}&_HLS_part=-1", f"_HLS_msn={last}&_HLS_part=x", f"_HLS_msn={last}&_HLS_part=",
        f"_HLS_msn={last}&_HLS_part=4294967296", f"_HLS_msn={last + 1}&_HLS_part=40",
        f"_HLS_msn={last}&_HLS_msn={last}", f"_HLS_msn={last}&_HLS_part=0&_HLS_part=1",
        "_HLS_skip=YES&_HLS_skip=YES", "_HLS_skip=NO", "_HLS_skip=yes", "_HLS_skip=",
        "_HLS_msn=%2D1", "_HLS_msn=1%00",
        ]
    with Honest(s, "bad delivery directives") as h:
        clean = 0
        for _ in range(8):
            msn, segs, _ = playlist_state(s)
            last = msn + len(segs) - 1
            wrong = []
            for q in bad(last):
                t = time.monotonic()
                r = http.get(s.url(f"{PLAYLIST}?{q}"))
                if r.status != 400 or time.monotonic() - t >= 0.5:
                    wrong.append((q, r.status, round(time.monotonic() - t, 2)))
                assert r.header("access-control-allow-origin") == "*"
            if wrong:
                # `_HLS_msn=last+3` is a valid blocking request once a segment is published between reading the
                # playlist and the request (seen in CI on a loaded machine): that one answer is excused, and its pass
                # not counted, only if the playlist moved meanwhile; any other answer fails.
                msn2, segs2, _ = playlist_state(s)
                racy = f"_HLS_msn={last + 3}"
                assert all(q == racy for q, _, _ in wrong) and msn2 + len(segs2) - 1 != last, \
                    (wrong, "a bad directive must be 400 at once")
                continue
            clean += 1
            if clean == 3:
                break
        assert clean == 3, f"{clean} passes of the bad directives with the playlist still"
    h.check()
    # and the good ones still work: the newest segment, and the next part
    msn, segs, _ = playlist_state(s)
    last = msn + len(segs) - 1
    assert http.get(s.url(f"{PLAYLIST}?_HLS_msn={last}")).status == 200
    assert http.get(s.url(f"{PLAYLIST}?_HLS_msn={last + 1}&_HLS_part=0"), timeout=10).status == 200
    assert http.get(s.url(f"{PLAYLIST}?_HLS_skip=YES")).status == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "TRACE", "PROPFIND", "MKCOL", "PURGE",
                                    "FOO", "G\u00c9T"])
def test_other_methods_are_405_with_allow(origin, method, request):
    """RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405 response containing a list
    of the target resource's currently supported methods." A body sent along is read and dropped. A method the
    parser does not know (FOO) is 501, RFC 9110 §9.1: "An origin server that receives a request method that is
    unrecognized or not implemented SHOULD respond with the 501 (Not Implemented) status code"; so is one that is
    not even a token (the parser cannot tell the two apart)."""
    s = origin()
    expected = {"FOO": 501, "G\u00c9T": 501}.get(method, 405)
    for path in ["/stream.m3u8", "/", "/nothing-here"]:
        status, headers, _ = one_response(
            s.port, f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
            .encode("latin-1"))
        assert status == expected, (method, path, status)
        assert cors(headers)
        assert headers.get("allow") == "GET, HEAD, OPTIONS"


def test_cors_preflight_from_any_origin(origin):
    """A preflight (OPTIONS with Origin and Access-Control-Request-Method) from any origin is 204 with the CORS
    headers (Fetch standard §3.2.2); the playlist then carries Access-Control-Allow-Origin: * for that origin."""
    s = origin()
    for org in ["https://evil.example", "http://localhost:3000", "null", "https://a.b.c.example:8443"]:
        for path in [PLAYLIST, "/index.m3u8", "/nothing"]:
            r = http.get(s.url(path), method="OPTIONS", origin=org,
                         headers={"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "range, x-custom"})
            assert r.status == 204, (org, path, r.status)
            assert r.header("access-control-allow-origin") == "*"
            assert "GET" in r.header("access-control-allow-methods", "")
            assert r.header("access-control-allow-headers") == "range, x-custom"
        assert http.get(s.url(PLAYLIST), origin=org).header("access-control-allow-origin") == "*"


def test_http10_and_pipelined_requests(origin):
    """HTTP/1.0 without keep-alive is answered and the connection closed (RFC 9112 §9.3); 12 pipelined requests on
    one connection (RFC 9112 §9.3.2: "A server MAY process a sequence of pipelined requests in parallel if they all
    have safe methods, but it MUST send the corresponding responses in the same order that the requests were
    received") are answered in order, each equal to the same request made alone."""
    s = origin()
    t = time.monotonic()
    rs = parse_responses(raw_exchange(s.port, b"GET /stream.m3u8 HTTP/1.0\r\n\r\n", timeout=5))
    assert len(rs) == 1 and rs[0][0] == 200 and time.monotonic() - t < 2, "HTTP/1.0: answered, then closed"
    _, segs, _ = playlist_state(s)
    seg = "/" + segs[0]
    paths = ["/init.mp4", seg, "/nothing", seg, "/index.m3u8", "/init.mp4", seg, "/", "/x/../y", seg, "/init.mp4",
             "/hls.mjs"]
    methods = ["GET", "GET", "GET", "HEAD", "GET", "HEAD", "GET", "GET", "GET", "GET", "GET", "GET"]
    pipelined = b"".join(f"{m} {p} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for m, p in zip(methods, paths))
    pipelined += b"GET /init.mp4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with Honest(s, "pipelined requests") as h:
        for _ in range(5):
            data = raw_exchange(s.port, pipelined, timeout=10)
            # HEAD responses have Content-Length but no body: split them by hand
            out, rest = [], data
            for m in methods + ["GET"]:
                end = rest.find(b"\r\n\r\n")
                head = rest[:end].decode("latin-1").split("\r\n")
                hdr = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in head[1:])}
                n = 0 if m == "HEAD" else int(hdr.get("content-length", 0))
                out.append((int(head[0].split()[1]), rest[end + 4:end + 4 + n]))
                rest = rest[end + 4 + n:]
            assert rest == b""
            for (status, body), m, p in zip(out, methods + ["GET"], paths + ["/init.mp4"]):
                alone = http.get(s.url(p), method=m)
                assert status == alone.status, (m, p, status, alone.status)
                if m == "GET" and status == 200 and p != "/index.m3u8":
                    assert body == alone.body, (m, p)
    h.check()


def test_clients_that_never_read_do_not_grow_memory(origin):
    """200 clients each pipeline 20 requests for a ~1 MB segment and never read. Responses are the segment's one
    shared buffer, written only as the socket drains, so the origin's RSS barely moves (a copy per response would be
    ~4 GB); --send-timeout 3 then drops the stuck connections."""
    raise_fd_limit(4_000)
    s = origin("--send-timeout", "3", "--window", "20")
    _, segs, _ = playlist_state(s)
    seg = "/" + segs[-1]
    size = len(http.get(s.url(seg)).body)
    assert size > 500_000, f"segment only {size} bytes"
    rss0 = rss_kib(s.proc.pid)
    req = f"GET {seg} HTTP/1.1\r\nHost: x\r\n\r\n".encode() * 20
    socks = []
    with Honest(s, "200 clients that never read") as h:
        for _ in range(200):
            c = socket.socket()
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.connect(("127.0.0.1", s.port))
            c.sendall(req)
            socks.append(c)
        time.sleep(2)
        rss1 = rss_kib(s.proc.pid)
    h.check()
    print(f"\norigin RSS {rss0 / 1024:.0f} MiB -> {rss1 / 1024:.0f} MiB with 200 stuck clients "
          f"({200 * 20 * size / 2**20:.0f} MiB asked for)")
    assert rss1 - rss0 < 64 * 1024, f"RSS grew {(rss1 - rss0) / 1024:.0f} MiB"
    time.sleep(3)
    # dropped: reading now gives what was in flight and then EOF or a reset
    dropped = 0
    for c in socks:
        c.settimeout(3)
        try:
            while c.recv(1 << 20):
                pass
            dropped += 1
        except (ConnectionResetError, socket.timeout) as e:
            dropped += isinstance(e, ConnectionResetError)
        c.close()
    assert dropped == len(socks), f"{len(socks) - dropped} stuck connections not dropped by --send-timeout"
