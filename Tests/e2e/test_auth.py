"""Access control (issue 12 §4) against the real binary: signed URLs made by `hls-origin sign` (and, independently,
by Python's hmac from the documented format), 403 for unsigned, expired and tampered requests on the page, hls.js,
playlists, init segments, segments, parts and the DASH manifest; every URI inside the playlists and the MPD carries
the request's signature; LL-HLS blocking reloads with signed URLs; `Cache-Control: private` unless `--auth-cdn`;
Bearer and Basic credentials; the CORS allow-list; the exposure line for a non-loopback address; hls.js in Chromium
playing LL-HLS from the signed page URL printed at start; ffmpeg reading the signed playlist. About 1 minute.
"""
import base64
import hashlib
import hmac
import os
import re
import subprocess
import time
import urllib.parse

import pytest

from hlsharness import chromium, m3u8, procs
from hlsharness import http as h
from hlsharness.testenv import need, need_chromium

SECRET = "correct horse battery staple"
NAMES = ("hls_prefix", "hls_exp", "hls_sig")


def py_sign(prefix, expires, secret=SECRET):
    """The documented format, written again here: base64url(HMAC-SHA256(secret, prefix + "\\n" + expires)), no '='."""
    mac = hmac.new(secret.encode(), f"{prefix}\n{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def py_query(prefix, expires, secret=SECRET):
    return f"hls_prefix={prefix}&hls_exp={expires}&hls_sig={py_sign(prefix, expires, secret)}"


def signature_of(url):
    """The hls_* items of a URL's query, as a tuple (None for a missing one)."""
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    return tuple(q.get(n, [None])[0] for n in NAMES)


def start(origin_bin, args, env_extra=None, host="127.0.0.1"):
    env = dict(os.environ)
    env.pop("HLS_ORIGIN_AUTH_TOKEN", None)
    env.pop("HLS_ORIGIN_AUTH_BASIC", None)
    env.update(env_extra or {})
    args = ["--test-pattern-size", "640x360", *args]
    if os.path.exists(procs.HLSJS_PATH):
        args += ["--hlsjs", procs.HLSJS_PATH]
    s = procs.OriginServer(origin_bin, args, env=env, host=host)
    s.start()
    return s


def wait_for_line(server, pattern, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(pattern, server.stderr())
        if m:
            return m
        if server.proc.poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError(f"no line matching {pattern!r}; stderr:\n{server.stderr()[-3000:]}")


def stop(server, label):
    rc = server.stop()
    print(f"\n--- {label} (exit {rc}) stderr tail:\n{server.stderr()[-1500:]}")


@pytest.fixture(scope="module")
def signed_origin(origin_bin):
    """Secret from the environment (so it is not in the command line); the signed page URL printed at start."""
    need("ffmpeg")
    started = time.time()
    s = start(origin_bin, [], env_extra={"HLS_ORIGIN_AUTH_TOKEN": SECRET})
    s.started_wall = started
    try:
        m = wait_for_line(s, r"hls-origin: serving (\S+)  \(signed page URL, valid until (\S+); playlist (\S+)\)")
        page, playlist = m.group(1), m.group(3)
        if h.wait_for_200(playlist, 20, proc=s.proc) is None:
            raise RuntimeError(f"the signed playlist never answered 200: {s.stderr()[-2000:]}")
        s.page_url, s.playlist_url = page, playlist
        yield s
    finally:
        stop(s, "signed origin")


def run_sign(origin_bin, *args, env_extra=None):
    env = dict(os.environ)
    env.pop("HLS_ORIGIN_AUTH_TOKEN", None)
    env.update(env_extra or {})
    return subprocess.run([origin_bin, "sign", *args], capture_output=True, text=True, timeout=20, env=env)


def media_uris(text):
    """Every URI a media playlist names: segment lines and URI="…" attributes (map, parts, hint, reports)."""
    uris = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    uris += re.findall(r'URI="([^"]+)"', text)
    return uris


def test_the_secret_is_not_on_the_command_line(signed_origin):
    assert SECRET not in " ".join(signed_origin.args)
    expires = signature_of(signed_origin.page_url)[1]
    assert signature_of(signed_origin.page_url) == ("/", expires, py_sign("/", expires))
    # --auth-expires defaults to 24 hours from the start (the module's origin may have started minutes before this
    # test runs, other modules' tests between).
    assert signed_origin.started_wall + 86400 - 2 <= int(expires) <= time.time() + 86400


def test_unsigned_requests_are_refused_everywhere(signed_origin):
    pl = h.get(signed_origin.playlist_url.replace("index.m3u8", "stream.m3u8"))
    assert pl.status == 200, pl.text
    seg = re.findall(r"^(seg\d+\.m4s)", pl.text, re.M)[-1]
    part = re.findall(r'#EXT-X-PART:.*URI="(seg\d+\.\d+\.m4s)', pl.text)[-1]
    for path in ["/", "/index.html", "/hls.mjs", "/index.m3u8", "/stream.m3u8", "/init.mp4", "/" + seg, "/" + part,
                 "/manifest.mpd", "/time", "/nonexistent.m3u8"]:
        r = h.get(signed_origin.url(path))
        assert r.status == 403, (path, r.status, r.text)
        # A page can read the status: CORS headers are on the refusal too.
        assert r.header("access-control-allow-origin") == "*", path
        assert r.body.startswith(b"Forbidden"), path
    # The preflight carries no credentials and is answered as before.
    r = h.get(signed_origin.url("/index.m3u8"), method="OPTIONS",
              headers={"Access-Control-Request-Method": "GET"})
    assert r.status == 204 and r.header("access-control-allow-origin") == "*"


def test_sign_subcommand_and_every_uri_carries_the_signature(signed_origin, origin_bin):
    p = run_sign(origin_bin, "--auth-token", SECRET, "--expires", "60s", "/index.m3u8")
    assert p.returncode == 0, p.stderr
    signed = p.stdout.strip()
    assert signed.startswith("/index.m3u8?hls_prefix=/&hls_exp=")
    prefix, expires, sig = signature_of(signed)
    assert abs(int(expires) - (time.time() + 60)) < 5
    assert sig == py_sign(prefix, expires)  # the format docs/security.md documents, computed independently
    want = signature_of(signed)

    mv = h.get(signed_origin.url(signed))
    assert mv.status == 200, mv.text
    assert mv.header("cache-control") == "private, no-cache"
    variants = m3u8.parse_multivariant(mv.text).variants
    assert variants
    for v in variants:
        assert signature_of(v.uri) == want, v.uri
    seen = set()
    for v in variants:
        url = h.join(signed_origin.url(signed), v.uri)
        r = h.get(url)
        assert r.status == 200, (url, r.status)
        pl = m3u8.parse_media(r.text)
        uris = media_uris(r.text)
        # Segments, the map, parts and the preload hint (LL-HLS) are all there, and all signed.
        assert any(re.match(r"seg\d+\.m4s\?", u) for u in uris)
        assert any(re.match(r"init\d*\.mp4\?", u) for u in uris)
        assert any(re.match(r"seg\d+\.\d+\.m4s\?", u) for u in uris)
        assert "#EXT-X-PRELOAD-HINT" in r.text
        for u in uris:
            assert signature_of(u) == want, u
        # Each listed object answers 200 with its signed URI (the hinted part may still be in the making: skip it).
        hint = re.search(r'#EXT-X-PRELOAD-HINT:[^\n]*URI="([^"]+)"', r.text).group(1)
        for u in [u for u in uris if u != hint][-8:] + [pl.segments[0].uri]:
            obj = h.get(h.join(url, u))
            assert obj.status == 200, (u, obj.status, obj.text[:200])
            assert obj.header("cache-control").startswith("private"), (u, obj.header("cache-control"))
            seen.add(u)
    assert seen


def test_dash_manifest_and_page_carry_the_signature(signed_origin):
    q = py_query("/", int(time.time()) + 60)
    r = h.get(signed_origin.url("/manifest.mpd?" + q))
    assert r.status == 200, r.text
    templates = re.findall(r'(?:media|initialization)="([^"]+)"', r.text)
    assert templates
    for t in templates:
        assert t.endswith("?" + q.replace("&", "&amp;")), t
    init = re.search(r'initialization="([^"]+)"', r.text).group(1).replace("&amp;", "&")
    assert h.get(signed_origin.url("/" + init)).status == 200
    timing = re.search(r'<UTCTiming [^>]*value="([^"]+)"', r.text).group(1).replace("&amp;", "&")
    assert h.get(timing).status == 200, timing
    # The page, and the hls.js it loads with the page's own signature.
    assert h.get(signed_origin.url("/?" + q)).status == 200
    js = h.get(signed_origin.url("/hls.mjs?" + q))
    assert js.status == 200 and js.header("cache-control") == "private, max-age=3600"


def test_expired_and_tampered_signatures_are_refused(signed_origin, origin_bin):
    now = int(time.time())
    good = py_query("/", now + 60)
    assert h.get(signed_origin.url("/stream.m3u8?" + good)).status == 200
    cases = {
        "expired": py_query("/", now - 2),
        "later expiry, old signature": good.replace(f"hls_exp={now + 60}", f"hls_exp={now + 3600}"),
        "signature changed": re.sub(r"hls_sig=(.)", lambda m: "hls_sig=" + ("B" if m.group(1) == "A" else "A"), good),
        "other secret": py_query("/", now + 60, secret="wrong"),
        "other prefix": py_query("/cam1/", now + 60),
        "prefix widened": py_query("/cam1/", now + 60).replace("hls_prefix=/cam1/", "hls_prefix=/"),
        "no signature": f"hls_prefix=/&hls_exp={now + 60}",
        "signature twice": good + "&hls_sig=" + py_sign("/", now + 60),
    }
    for label, q in cases.items():
        for path in ["/stream.m3u8", "/init.mp4", "/"]:
            r = h.get(signed_origin.url(path + "?" + q))
            assert r.status == 403, (label, path, r.status)
    assert b"expired" in h.get(signed_origin.url("/stream.m3u8?" + cases["expired"])).body
    # `sign --expires 1s`: good now, refused two seconds later.
    p = run_sign(origin_bin, "--expires", "1s", "/stream.m3u8", env_extra={"HLS_ORIGIN_AUTH_TOKEN": SECRET})
    assert p.returncode == 0, p.stderr
    assert h.get(signed_origin.url(p.stdout.strip())).status == 200
    time.sleep(2.2)
    assert h.get(signed_origin.url(p.stdout.strip())).status == 403


def test_sign_refuses_paths_outside_the_prefix_and_a_missing_secret(origin_bin):
    p = run_sign(origin_bin, "--auth-token", SECRET, "--prefix", "/cam1/", "/cam2/index.m3u8")
    assert p.returncode != 0 and "not under the prefix" in p.stderr
    p = run_sign(origin_bin, "/index.m3u8")
    assert p.returncode != 0 and "HLS_ORIGIN_AUTH_TOKEN" in p.stderr
    p = run_sign(origin_bin, "--auth-token", SECRET, "--expires", "soon", "/index.m3u8")
    assert p.returncode != 0 and "--expires" in p.stderr
    p = run_sign(origin_bin, "--auth-token", SECRET, "--base-url", "http://192.0.2.1:8080", "--prefix", "/cam1/",
                 "/cam1/index.m3u8")
    assert p.returncode == 0 and p.stdout.startswith("http://192.0.2.1:8080/cam1/index.m3u8?hls_prefix=/cam1/&"), p.stdout


def test_blocking_reload_with_a_signed_url(signed_origin):
    q = py_query("/", int(time.time()) + 60)
    r = h.get(signed_origin.url("/stream.m3u8?" + q))
    pl = m3u8.parse_media(r.text)
    msn = pl.media_sequence + len(pl.segments)
    # The next segment's first part: hls.js adds _HLS_msn/_HLS_part to the signed URL and keeps the signature.
    t0 = time.monotonic()
    r = h.get(signed_origin.url(f"/stream.m3u8?{q}&_HLS_msn={msn + 1}&_HLS_part=0"), timeout=10)
    waited = time.monotonic() - t0
    assert r.status == 200, r.text
    assert waited > 0.2, "the blocking reload did not block"
    after = m3u8.parse_media(r.text)
    assert after.media_sequence + len(after.segments) >= msn + 1
    for u in media_uris(r.text):
        assert signature_of(u) == signature_of("?" + q), u
    assert r.header("cache-control").startswith("private, max-age=")


def test_bearer_token(signed_origin):
    ok = h.get(signed_origin.url("/stream.m3u8"), headers={"Authorization": "Bearer " + SECRET})
    assert ok.status == 200
    # No signature to carry on: the URIs stay plain (the client sends its header again).
    assert all("hls_sig" not in u for u in media_uris(ok.text))
    for bad in ["Bearer " + SECRET[:-1], "Bearer " + SECRET + "x", "Bearer", "Basic " + SECRET, SECRET]:
        r = h.get(signed_origin.url("/stream.m3u8"), headers={"Authorization": bad})
        assert r.status == 403, bad


def test_hlsjs_plays_ll_hls_from_the_signed_page_url(signed_origin):
    need_chromium()
    # No name resolves (the CDN fallback cannot stand in): hls.js must come from the origin, signed by the page.
    res = chromium.chromium_play(signed_origin.page_url, 12,
                                 browser_args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
    print(chromium.summary(res))
    assert chromium.playback_problems(res, max_dropped=0.03) == []
    assert res["low_latency_mode"] is True
    # The page took hls.js from the origin (with its signature), not from the CDN.
    assert "1.6.15" in str(res.get("version")), res.get("version")


def test_ffmpeg_reads_the_signed_playlist(signed_origin):
    p = subprocess.run(["timeout", "30", "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-xerror",
                        "-rw_timeout", "5000000", "-i", signed_origin.playlist_url, "-t", "5", "-map", "0",
                        "-f", "null", "-"], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr.strip() == "", p.stderr[-2000:]


@pytest.fixture(scope="module")
def edge_origin(origin_bin):
    """--auth-cdn, --auth-basic, a CORS allow-list, and every interface (for the exposure line)."""
    s = start(origin_bin, ["--auth-token", SECRET, "--auth-cdn", "--auth-basic", "viewer:pa:ss",
                           "--cors-origin", "http://allowed.example", "--cors-origin", "https://also.example"],
              host="0.0.0.0")
    try:
        wait_for_line(s, r"hls-origin: serving ")
        s.host = "127.0.0.1"  # connect over loopback
        q = py_query("/", int(time.time()) + 60)
        if h.wait_for_200(s.url("/stream.m3u8?" + q), 20, proc=s.proc) is None:
            raise RuntimeError(s.stderr()[-2000:])
        yield s
    finally:
        stop(s, "edge origin")


def test_exposure_line_for_a_non_loopback_address(edge_origin, signed_origin):
    err = edge_origin.stderr()
    line = re.search(r"hls-origin: listening on 0\.0\.0\.0 .*", err)
    assert line, err[-1500:]
    assert "player page" in line.group(0) and "segments" in line.group(0)
    assert "signed URL" in line.group(0) and "Basic" in line.group(0)
    assert "http://allowed.example" in line.group(0)
    # Loopback: no such line.
    assert "listening on" not in signed_origin.stderr()


def test_auth_cdn_keeps_public_cache_control(edge_origin, signed_origin):
    q = py_query("/", int(time.time()) + 60)
    pl = h.get(edge_origin.url("/stream.m3u8?" + q))
    seg = re.findall(r"^(seg\d+\.m4s\?\S+)", pl.text, re.M)[-1]
    assert pl.header("cache-control") == "no-cache"
    assert h.get(edge_origin.url("/" + seg)).header("cache-control") == "public, max-age=31536000, immutable"
    # Without --auth-cdn the same kind of object is private.
    own = re.findall(r"^(seg\d+\.m4s\?\S+)", h.get(signed_origin.url("/stream.m3u8?" + q)).text, re.M)[-1]
    r = h.get(signed_origin.url("/" + own))
    assert r.status == 200 and r.header("cache-control") == "private, max-age=31536000, immutable"
    # The edge still needs the signature to fetch from the origin.
    assert h.get(edge_origin.url("/" + seg.split("?")[0])).status == 401


def test_basic_auth(edge_origin):
    r = h.get(edge_origin.url("/stream.m3u8"))
    assert r.status == 401
    assert r.header("www-authenticate") == 'Basic realm="hls-origin", charset="UTF-8"'
    good = "Basic " + base64.b64encode(b"viewer:pa:ss").decode()
    ok = h.get(edge_origin.url("/stream.m3u8"), headers={"Authorization": good})
    assert ok.status == 200, ok.text
    for bad in [b"viewer:pa:s", b"viewer:pa:sss", b"viewe:pa:ss", b"viewer"]:
        r = h.get(edge_origin.url("/stream.m3u8"), headers={"Authorization": "Basic " + base64.b64encode(bad).decode()})
        assert r.status == 401, bad
    # The Bearer secret and a signature work as well.
    assert h.get(edge_origin.url("/stream.m3u8"), headers={"Authorization": "Bearer " + SECRET}).status == 200
    assert h.get(edge_origin.url("/?" + py_query("/", int(time.time()) + 60))).status == 200


def test_cors_allow_list(edge_origin, signed_origin):
    q = py_query("/", int(time.time()) + 60)
    for origin in ["http://allowed.example", "https://also.example"]:
        r = h.get(edge_origin.url("/stream.m3u8?" + q), origin=origin)
        assert r.status == 200 and r.header("access-control-allow-origin") == origin
        assert "Origin" in r.header("vary", "")
        pre = h.get(edge_origin.url("/stream.m3u8"), origin=origin, method="OPTIONS",
                    headers={"Access-Control-Request-Method": "GET"})
        assert pre.status == 204 and pre.header("access-control-allow-origin") == origin
    for origin in ["http://other.example", "http://allowed.example.evil", None]:
        r = h.get(edge_origin.url("/stream.m3u8?" + q), origin=origin)
        assert r.status == 200 and r.header("access-control-allow-origin") is None, origin
        assert "Origin" in r.header("vary", "")
    # A refusal is CORS-visible to a listed origin only.
    assert h.get(edge_origin.url("/stream.m3u8"), origin="http://allowed.example").header(
        "access-control-allow-origin") == "http://allowed.example"
    assert h.get(edge_origin.url("/stream.m3u8"), origin="http://other.example").header(
        "access-control-allow-origin") is None
    # Without --cors-origin: '*' as before.
    assert h.get(signed_origin.url("/stream.m3u8?" + q), origin="http://other.example").header(
        "access-control-allow-origin") == "*"


def test_ladder_signs_media_renditions_and_rendition_reports(origin_bin):
    """With --ladder, the multivariant's EXT-X-MEDIA (audio) URI and the media playlists' EXT-X-RENDITION-REPORTs
    carry the signature too, and each rendition's objects answer with it."""
    s = start(origin_bin, ["--ladder", "240", "--auth-token", SECRET])
    try:
        q = py_query("/", int(time.time()) + 60)
        mv = h.wait_for_200(s.url("/index.m3u8?" + q), 30, proc=s.proc)
        assert mv is not None, s.stderr()[-2000:]
        parsed = m3u8.parse_multivariant(mv.text)
        media = [m["URI"] for m in parsed.media]
        assert media and all(u.endswith("?" + q) for u in media), mv.text
        assert all(v.uri.endswith("?" + q) for v in parsed.variants), mv.text
        for uri in [v.uri for v in parsed.variants] + media:
            r = h.wait_for_200(s.url("/" + uri), 20, proc=s.proc)
            assert r is not None, uri
            reports = re.findall(r'#EXT-X-RENDITION-REPORT:URI="([^"]+)"', r.text)
            assert reports, r.text[-600:]
            for u in media_uris(r.text):
                assert u.endswith("?" + q), (uri, u)
            init = re.search(r'#EXT-X-MAP:URI="([^"]+)"', r.text).group(1)
            assert h.get(s.url("/" + init)).status == 200
            assert h.get(s.url("/" + init.split("?")[0])).status == 403
    finally:
        stop(s, "ladder origin")
