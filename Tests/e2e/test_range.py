"""Range requests (RFC 9110 §14) against the real `hls-origin serve`: 206 with the right bytes and Content-Range,
suffix and open-ended ranges, 416, HEAD, several ranges answered with the whole body, Accept-Ranges on every
served object, and curl -r."""
import shutil
import subprocess

import pytest

from hlsharness import http, m3u8, procs
from hlsharness.testenv import need


@pytest.fixture(scope="module")
def served(origin_bin):
    """A test-pattern origin, its first segment's URL and bytes."""
    with procs.serving(origin_bin, ["--window", "3"], "range server") as s:
        pl = None
        for _ in range(100):
            r = http.get(s.url("/stream.m3u8"))
            if r.status == 200:
                pl = m3u8.parse_media(r.text)
                if pl.segments:
                    break
        assert pl and pl.segments, "no segment listed"
        url = http.join(s.url("/stream.m3u8"), pl.segments[0].uri)
        whole = http.get(url)
        assert whole.status == 200 and len(whole.body) > 1000
        yield s, url, whole.body


def test_whole_objects_say_accept_ranges(served):
    s, seg, _ = served
    for url in [s.url("/"), s.url("/index.m3u8"), s.url("/stream.m3u8"), s.url("/init.mp4"), seg]:
        r = http.get(url)
        assert r.status == 200, url
        assert r.header("accept-ranges") == "bytes", url
        # CORS lets a page read the range headers
        assert "content-range" in r.header("access-control-expose-headers", "").lower()


@pytest.mark.parametrize("header,first,last", [
    ("bytes=0-99", 0, 99),            # a-b
    ("bytes=100-", 100, None),        # open-ended
    ("bytes=-500", -500, None),       # suffix
    ("bytes=7-99999999", 7, None),    # last-pos past the end: clamped
])
def test_single_range_is_206_with_those_bytes(served, header, first, last):
    _, seg, body = served
    n = len(body)
    lo = first if first >= 0 else n + first
    hi = n - 1 if last is None else last
    r = http.get(seg, headers={"Range": header})
    assert r.status == 206, (header, r.status)
    assert r.body == body[lo:hi + 1]
    assert r.header("content-range") == f"bytes {lo}-{hi}/{n}"
    assert r.header("content-length") == str(hi - lo + 1)
    assert r.header("access-control-allow-origin") == "*"
    h = http.get(seg, method="HEAD", headers={"Range": header})
    assert h.status == 206 and h.body == b""
    assert h.header("content-range") == r.header("content-range")
    assert h.header("content-length") == str(hi - lo + 1)


@pytest.mark.parametrize("header", ["bytes={n}-", "bytes={n}-{m}", "bytes=-0"])
def test_unsatisfiable_is_416(served, header):
    _, seg, body = served
    n = len(body)
    r = http.get(seg, headers={"Range": header.format(n=n, m=n + 10)})
    assert r.status == 416
    assert r.header("content-range") == f"bytes */{n}"


@pytest.mark.parametrize("header", ["bytes=0-1,5-6", "bytes=5-1", "pages=0-1", "bytes=abc"])
def test_multiple_or_invalid_ranges_get_the_whole_body(served, header):
    _, seg, body = served
    r = http.get(seg, headers={"Range": header})
    assert r.status == 200 and r.body == body
    assert r.header("content-range") is None


def test_missing_object_is_404_whatever_the_range(served):
    s, _, _ = served
    r = http.get(s.url("/seg999999.m4s"), headers={"Range": "bytes=0-1"})
    assert r.status == 404 and r.header("content-range") is None


def test_curl_range(served, tmp_path):
    need("curl")
    _, seg, body = served
    out = tmp_path / "part"
    p = subprocess.run([shutil.which("curl"), "-sS", "-r", "10-109", "-o", str(out), "-w", "%{http_code}", seg],
                       capture_output=True, timeout=20)
    assert p.stdout.decode() == "206", p.stderr.decode()
    assert out.read_bytes() == body[10:110]


def test_validators_and_conditional_requests(served):
    """What a CDN needs to revalidate (RFC 9110 §8.8, §13.1): segments, parts and init segments carry a strong ETag and
    Last-Modified; If-None-Match with the tag (or `*`, or a weak form of it, in a list) is answered 304 with no body
    and the same ETag and Cache-Control; another tag gets the object. If-Range with the current tag honours Range,
    another tag sends the whole object."""
    s, url, body = served
    r = http.get(url)
    tag = r.headers.get("etag")
    assert tag and tag.startswith('"') and tag.endswith('"'), r.headers
    assert r.headers.get("last-modified", "").endswith(" GMT")
    for inm in (tag, "*", f'"other", W/{tag}'):
        c = http.get(url, headers={"If-None-Match": inm})
        assert c.status == 304 and c.body == b"", (inm, c.status)
        assert c.headers.get("etag") == tag and "immutable" in c.headers.get("cache-control", "")
    assert http.get(url, headers={"If-None-Match": '"nope"'}).body == body
    assert http.get(url, headers={"Range": "bytes=0-9", "If-Range": tag}).status == 206
    full = http.get(url, headers={"Range": "bytes=0-9", "If-Range": '"stale"'})
    assert full.status == 200 and full.body == body
    # The same bytes give the same tag (a second request, and a part served as a slice of its segment).
    assert http.get(url).headers.get("etag") == tag
    init = http.get(s.url("/init.mp4"))
    assert init.headers.get("etag") and init.headers.get("etag") != tag


def test_delivery_directive_answers_are_cacheable(served):
    """A playlist answering a blocking reload (_HLS_msn, with _HLS_part or _HLS_skip) never stops satisfying it, so an
    edge may keep and share it (request collapsing): `public, max-age` of three target durations. A plain playlist
    and _HLS_skip alone stay no-cache."""
    s, _, _ = served
    r = http.get(s.url("/stream.m3u8"))
    assert r.headers.get("cache-control") == "no-cache"
    pl = m3u8.parse_media(r.text)
    msn = pl.media_sequence + len(pl.segments) - 1
    d = http.get(s.url(f"/stream.m3u8?_HLS_msn={msn}&_HLS_part=0"))
    assert d.status == 200 and d.headers.get("cache-control") == f"public, max-age={3 * pl.target_duration}"
    k = http.get(s.url(f"/stream.m3u8?_HLS_msn={msn}&_HLS_skip=YES"))
    assert k.status == 200 and k.headers.get("cache-control") == f"public, max-age={3 * pl.target_duration}"
    # _HLS_skip alone asks for the latest playlist (as a delta): no-cache, like the plain one.
    assert http.get(s.url("/stream.m3u8?_HLS_skip=YES")).headers.get("cache-control") == "no-cache"
