"""Tiny HTTP helpers (stdlib only)."""
import http.client
import time
import urllib.parse
from dataclasses import dataclass, field

# Every request from the checkers claims to come from another origin, so CORS headers must be present.
TEST_ORIGIN = "http://127.0.0.1:9"


@dataclass
class Response:
    url: str
    status: int
    headers: dict = field(default_factory=dict)  # lower-cased names
    body: bytes = b""
    elapsed: float = 0.0
    error: str = ""

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    @property
    def text(self):
        return self.body.decode("utf-8", errors="replace")


def get(url, timeout=5.0, origin=TEST_ORIGIN, method="GET", headers=None):
    """GET url; never raises for network errors (status 0 + error text instead)."""
    u = urllib.parse.urlsplit(url)
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    hdrs = {"Accept": "*/*"}
    if origin:
        hdrs["Origin"] = origin
    if headers:
        hdrs.update(headers)
    t0 = time.monotonic()
    conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    try:
        conn.request(method, path, headers=hdrs)
        r = conn.getresponse()
        body = r.read()
        hmap = {}
        for k, v in r.getheaders():
            k = k.lower()
            hmap[k] = v if k not in hmap else hmap[k] + ", " + v
        return Response(url, r.status, hmap, body, time.monotonic() - t0)
    except (OSError, http.client.HTTPException) as e:
        return Response(url, 0, {}, b"", time.monotonic() - t0, f"{type(e).__name__}: {e}")
    finally:
        conn.close()


def wait_for_200(url, timeout, proc=None, interval=0.1):
    """Poll url until it answers 200. Returns the Response or None on timeout / early process exit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return None
        r = get(url, timeout=2.0)
        if r.status == 200:
            return r
        time.sleep(interval)
    return None


def join(base, ref):
    return urllib.parse.urljoin(base, ref)
