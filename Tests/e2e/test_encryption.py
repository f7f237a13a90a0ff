"""Whole-segment AES-128 (issue 23 §1, first part; docs/encryption.md) against the real binary.

- `package` of a fixed file, clear and with `--encrypt aes-128 --key K`: every encrypted segment, decrypted by
  `openssl enc -d -aes-128-cbc` with the written key and the playlist's IV, is byte for byte the clear segment; the
  same with a wrong IV is not (the checker can fail); init segments are the same bytes (clear); no manifest.mpd.
- A live LL-HLS test pattern with `--encrypt aes-128 --key K --key-period 2s`: keys change every two segments, on
  segment boundaries; each served key is the one derived here from K (HMAC, docs/encryption.md); a served segment
  and its parts, decrypted with the IVs the playlist states, give a segment that starts with `styp` and whose parts
  tile it; the recording holds the same bytes and keys; ffmpeg reads it; hls.js in headless Chromium plays it across
  key changes (its own AES decryption) with no error.
- With `--auth-token` and a random key: a key request without a valid signature is 403, with one 200; the key the
  origin made is not in its stderr. The key over HTTP/2 (TLS) too. `--record` keeps the served bytes, the key tags and keys/0.key.
- Bad input: a key of the wrong length, --single-file with --encrypt: one clear line, exit > 0, the key not echoed.
About 30 s.
"""
import hashlib
import hmac
import os
import re
import subprocess
import time

import pytest

from hlsharness import chromium, clients, procs
from hlsharness import http as h
from hlsharness.testenv import need, need_chromium

KEY = "00112233445566778899aabbccddeeff"
SECRET = "key delivery secret"


def run_package(origin_bin, src, out, *args):
    p = subprocess.run([origin_bin, "package", src, "-o", out, *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=120)
    return p.returncode, p.stderr.decode("utf-8", errors="replace")


def openssl_decrypt(data, key_hex, iv_hex):
    """`openssl enc -d -aes-128-cbc` (PKCS#7 removed): an implementation that shares nothing with the origin's."""
    p = subprocess.run(["openssl", "enc", "-d", "-aes-128-cbc", "-K", key_hex, "-iv", iv_hex],
                       input=data, capture_output=True, timeout=20)
    return p.stdout if p.returncode == 0 else None


def keyed_segments(text):
    """(uri, key uri, iv hex) for each segment and part of a media playlist, in order, from the EXT-X-KEY in force."""
    out, key = [], None
    for line in text.splitlines():
        if line.startswith("#EXT-X-KEY:"):
            m = re.search(r'METHOD=([^,]+)(?:,URI="([^"]+)")?(?:,IV=0x([0-9A-Fa-f]{32}))?', line)
            key = None if m.group(1) == "NONE" else (m.group(2), m.group(3))
        elif line.startswith("#EXT-X-PART:"):
            out.append((re.search(r'URI="([^"]+)"', line).group(1), *(key or (None, None))))
        elif line and not line.startswith("#"):
            out.append((line, *(key or (None, None))))
    return out


def test_package_encrypted_segments_decrypt_to_the_clear_ones(origin_bin, media, tmp_path):
    need("openssl")
    clear, enc = str(tmp_path / "clear"), str(tmp_path / "enc")
    rc, err = run_package(origin_bin, media["vod.mp4"], clear)
    assert rc == 0, err
    rc, err = run_package(origin_bin, media["vod.mp4"], enc, "--encrypt", "aes-128", "--key", KEY)
    assert rc == 0, err
    assert KEY not in err
    key = open(os.path.join(enc, "keys", "0.key"), "rb").read()
    assert key.hex() == KEY and oct(os.stat(os.path.join(enc, "keys", "0.key")).st_mode & 0o777) == "0o600"
    text = open(os.path.join(enc, "stream.m3u8")).read()
    lines = text.splitlines()
    # The init segment is clear: its map comes before any key (RFC 8216bis §4.4.4.4), and its bytes are the clear run's.
    assert min(i for i, ln in enumerate(lines) if ln.startswith("#EXT-X-MAP")) < \
        min(i for i, ln in enumerate(lines) if ln.startswith("#EXT-X-KEY"))
    assert open(os.path.join(enc, "init.mp4"), "rb").read() == open(os.path.join(clear, "init.mp4"), "rb").read()
    assert not os.path.exists(os.path.join(enc, "manifest.mpd")) and os.path.exists(os.path.join(clear, "manifest.mpd"))
    segments = keyed_segments(text)
    assert len(segments) >= 3 and all(k == "keys/0.key" for _, k, _ in segments)
    for uri, _, iv in segments:
        n = int(re.match(r"seg(\d+)\.m4s$", uri).group(1))
        assert int(iv, 16) == n, f"{uri}: IV {iv} is not its media sequence number"
        sealed = open(os.path.join(enc, uri), "rb").read()
        plain = open(os.path.join(clear, uri), "rb").read()
        assert sealed != plain and len(sealed) == (len(plain) // 16 + 1) * 16
        assert openssl_decrypt(sealed, KEY, iv) == plain, uri
    # The checker can fail: a wrong IV (the next segment's) or a wrong key does not give the clear bytes.
    uri, _, iv = segments[1]
    plain = open(os.path.join(clear, uri), "rb").read()
    sealed = open(os.path.join(enc, uri), "rb").read()
    assert openssl_decrypt(sealed, KEY, f"{int(iv, 16) + 1:032x}") != plain
    assert openssl_decrypt(sealed, "ff" + KEY[2:], iv) != plain


def test_bad_input_is_one_line(origin_bin, media, tmp_path):
    for args, says in [
        (["--encrypt", "aes-128", "--key", KEY[:-2]], "--key takes 32 hexadecimal digits"),
        (["--encrypt", "aes-128", "--key", KEY[:-1] + "g"], "--key takes 32 hexadecimal digits"),
        (["--key", KEY], "--key needs --encrypt"),
        (["--encrypt", "sample-aes"], "--encrypt is aes-128"),
        (["--encrypt", "aes-128", "--single-file"], "--single-file cannot be used with --encrypt"),
    ]:
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "out"), *args)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert rc > 0, args
        assert says in err, (args, err)
        assert len([ln for ln in lines if "Usage" not in ln and "help" not in ln]) == 1, (args, err)
        assert KEY[:-2] not in err, "the key must not be echoed"


def period_key(n):
    """Key period n's key as docs/encryption.md defines it, computed here independently of the origin:
    the first 16 bytes of HMAC-SHA256(K, "hls-origin aes-128 key " + n as 8 big-endian bytes)."""
    msg = b"hls-origin aes-128 key " + n.to_bytes(8, "big")
    return hmac.new(bytes.fromhex(KEY), msg, hashlib.sha256).digest()[:16].hex()


def key_id(key_uri):
    return int(re.match(r"keys/(\d+)\.key", key_uri).group(1))


@pytest.fixture(scope="module")
def encrypted_live(origin_bin, tmp_path_factory):
    """LL-HLS test pattern, 1-s segments, a new key every 2 s of media (two segments), recorded."""
    record = str(tmp_path_factory.mktemp("record"))
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "640x360", "--encrypt", "aes-128", "--key", KEY,
                                        "--key-period", "2s", "--record", record,
                                        *(["--hlsjs", procs.HLSJS_PATH] if os.path.exists(procs.HLSJS_PATH) else [])])
    s.record = record
    s.start()
    try:
        s.wait_ready(20, path="/stream.m3u8")
        yield s
    finally:
        s.stop()


def test_live_segment_and_parts_decrypt_with_the_served_key(encrypted_live):
    need("openssl")
    s = encrypted_live
    # Two key periods listed, and a complete segment with two parts or more (an LL stream's first segment is one
    # part long).
    deadline = time.monotonic() + 15
    while True:
        text = h.get(s.url("/stream.m3u8")).text
        entries = keyed_segments(text)
        uris = [u for u, _, _ in entries]
        done = [u for u in uris if re.match(r"seg\d+\.m4s$", u)
                and len([p for p in uris if re.match(re.escape(u[:-4]) + r"\.\d+\.m4s$", p)]) >= 2]
        if (done and len({k for _, k, _ in entries}) >= 2) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert done and all(k is not None for _, k, _ in entries), text
    # Keys change on segment boundaries only: segment n (and its parts) uses period n // 2; each served key is the
    # one derived independently here; a period not begun yet has no key.
    served = {}
    for uri, key_uri, iv in entries:
        n = int(re.match(r"seg(\d+)", uri).group(1))
        assert key_id(key_uri) == n // 2 and int(iv, 16) == n, (uri, key_uri, iv)
        if key_uri not in served:
            r = h.get(s.url("/" + key_uri))
            assert r.status == 200 and r.headers.get("cache-control") == "private, no-store"
            assert r.headers.get("content-type") == "application/octet-stream"
            served[key_uri] = r.body.hex()
        assert served[key_uri] == period_key(key_id(key_uri))
    assert len(served) >= 2
    assert h.get(s.url(f"/keys/{max(map(key_id, served)) + 3}.key")).status == 404
    n = int(re.match(r"seg(\d+)\.", done[0]).group(1))
    key = period_key(n // 2)
    seg_uri, _, iv = next(e for e in entries if e[0] == f"seg{n}.m4s")
    segment = openssl_decrypt(h.get(s.url("/" + seg_uri)).body, key, iv)
    assert segment is not None and segment[4:8] == b"styp", "the decrypted segment must start with its styp box"
    parts = [e for e in entries if re.match(rf"seg{n}\.\d+\.m4s$", e[0])]
    assert len(parts) >= 2 and all(p_iv == iv for _, _, p_iv in parts), "parts use their segment's IV"
    clear_parts = [openssl_decrypt(h.get(s.url("/" + u)).body, key, p_iv) for u, _, p_iv in parts]
    assert all(p is not None for p in clear_parts)
    assert b"".join(clear_parts) == segment, "each part is a CBC stream of its own; together they are the segment"
    # The checkers can fail: the next IV, or the next period's key, does not give the clear part back.
    assert openssl_decrypt(h.get(s.url("/" + parts[1][0])).body, key, f"{n + 1:032x}") != clear_parts[1]
    assert openssl_decrypt(h.get(s.url("/" + parts[1][0])).body, period_key(n // 2 + 1), iv) != clear_parts[1]
    # No DASH for whole-segment AES-128; no key in stderr, /streams.json or /metrics.
    assert h.get(s.url("/manifest.mpd")).status == 404
    for k in [KEY, *served.values()]:
        assert k not in s.stderr().lower()
        for path in ("/streams.json", "/metrics"):
            assert k not in h.get(s.url(path)).text.lower(), path


def test_the_recording_is_the_served_bytes_with_its_keys(encrypted_live):
    """--record keeps what was served: the encrypted segments, EXT-X-KEY in its playlist, keys/N.key (0600)."""
    need("openssl")
    s = encrypted_live
    entries = keyed_segments(open(os.path.join(s.record, "stream.m3u8")).read())
    for key_uri in {k for _, k, _ in entries}:
        key_path = os.path.join(s.record, key_uri)
        assert open(key_path, "rb").read().hex() == period_key(key_id(key_uri))
        assert os.stat(key_path).st_mode & 0o777 == 0o600
    uri, key_uri, iv = entries[-1]
    assert int(iv, 16) == int(re.match(r"seg(\d+)\.m4s$", uri).group(1))
    recorded = open(os.path.join(s.record, uri), "rb").read()
    assert recorded == h.get(s.url("/" + uri)).body
    assert openssl_decrypt(recorded, period_key(key_id(key_uri)), iv)[4:8] == b"styp"


def test_ffmpeg_reads_the_encrypted_stream(encrypted_live):
    """FFmpeg's HLS demuxer fetches the key and decrypts (3 s, no error)."""
    need("ffmpeg")
    r = clients.ffmpeg_read(encrypted_live.url("/index.m3u8"), seconds=3)
    assert r.ok, r.stderr


def test_hlsjs_plays_the_encrypted_stream(encrypted_live):
    need_chromium()
    res = chromium.chromium_play(encrypted_live.url("/"), 5)
    print(chromium.summary(res))
    # Not a solo module (its point is the keys and the decryption): dropped frames and short stalls under a parallel
    # run's load are not this test's findings, at normal speed or while hls.js catches up to the live edge (a slow
    # hour's CI, 2026-11-28: 14 of 185 frames dropped catching up, against the 5% default); a fatal error, no start
    # or a frozen picture are.
    assert chromium.playback_problems(res, max_dropped=0.5, min_advance=0.5) == []
    # No error of the key or of decryption, fatal or not (a stall on this shared machine is playback_problems' call).
    crypto = [e for e in res["errors"] if re.search(r"key|decrypt|parsing", str(e.get("details", "")), re.I)]
    assert crypto == [], crypto[:3]


def test_key_over_http2(origin_bin, tmp_path):
    """The key route on the HTTP/2 fast path (TLS, ALPN h2) too."""
    need("openssl", "curl")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")], check=True, capture_output=True)
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "320x180", "--part-duration", "0", "--encrypt", "aes-128",
                                        "--key", KEY, "--tls-cert", str(tmp_path / "cert.pem"),
                                        "--tls-key", str(tmp_path / "key.pem")])
    s.start()
    try:
        base = f"https://127.0.0.1:{s.port}"
        deadline = time.monotonic() + 20
        while True:
            p = subprocess.run(["curl", "-sk", "--max-time", "5", "--http2", "-o", "/dev/null", "-w", "%{http_code}",
                                base + "/stream.m3u8"], capture_output=True, text=True)
            if p.stdout == "200" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        p = subprocess.run(["curl", "-sk", "--max-time", "5", "--http2", "-D", "-", base + "/keys/0.key"],
                           capture_output=True, timeout=20)
        head, _, body = p.stdout.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/2 200"), p.stdout[:300] + p.stderr
        assert body.hex() == KEY and b"cache-control: private, no-store" in head.lower()
    finally:
        s.stop()


def test_key_needs_a_signature(origin_bin):
    env = dict(os.environ, HLS_ORIGIN_AUTH_TOKEN=SECRET)
    env.pop("HLS_ORIGIN_KEY", None)
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "320x180", "--part-duration", "0", "--encrypt", "aes-128"],
                           env=env)
    s.start()
    try:
        sign = subprocess.run([origin_bin, "sign", "/"], capture_output=True, text=True, timeout=20, env=env)
        query = sign.stdout.strip().split("?", 1)[1]
        assert h.wait_for_200(s.url("/stream.m3u8?" + query), 20, proc=s.proc) is not None, s.stderr()[-2000:]
        text = h.get(s.url("/stream.m3u8?" + query)).text
        key_uris = {k for _, k, _ in keyed_segments(text)}
        assert key_uris == {"keys/0.key?" + query}, text
        assert h.get(s.url("/keys/0.key")).status == 403
        assert h.get(s.url("/keys/0.key?" + query.replace("hls_sig=", "hls_sig=x"))).status == 403
        signed = h.get(s.url("/keys/0.key?" + query))
        assert signed.status == 200 and len(signed.body) == 16
        assert signed.headers.get("cache-control") == "private, no-store"
        err = s.stderr()
        assert signed.body.hex() not in err.lower(), "the random key must not be logged"
    finally:
        s.stop()
