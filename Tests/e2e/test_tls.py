"""`serve --tls-cert --tls-key`: HTTPS with ALPN h2 and http/1.1 (Hummingbird's HTTP/2 channel on swift-nio-ssl),
checked with curl against a self-signed certificate made here, LL-HLS blocking reloads and preload hints as streams
of one HTTP/2 connection, and hls.js in Chromium over https (h2) with its latency next to plain HTTP/1.1.
About 1 minute.
"""
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from hlsharness import chromium, m3u8, procs, tlscert
from hlsharness.testenv import need, need_chromium


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    need("openssl", "curl")
    return tlscert.self_signed(tmp_path_factory.mktemp("tls"))


def curl(*args, timeout=20):
    p = subprocess.run(["curl", "-sk", "--max-time", "15", *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


HTTPS_PROC = {}


@pytest.fixture(scope="module")
def https_origin(origin_bin, cert):
    port = procs.free_port()
    args = [origin_bin, "serve", "--port", str(port), "--tls-cert", cert[0], "--tls-key", cert[1],
            "--test-pattern-size", "640x360"]
    if os.path.exists(procs.HLSJS_PATH):
        args += ["--hlsjs", procs.HLSJS_PATH]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"https://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rc, out, _ = curl("-o", "/dev/null", "-w", "%{http_code}", base + "/stream.m3u8")
        if out == "200":
            break
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail(f"no 200 over https: {proc.stderr.read().decode()[-2000:]}")
    HTTPS_PROC["proc"] = proc
    yield base
    procs.stop_process(proc)
    err = proc.stderr.read().decode()
    print(f"\n--- https origin stderr:\n{err[-1500:]}")
    assert "serving https://127.0.0.1" in err


def test_alpn_offers_h2_and_http11(https_origin):
    rc, out, err = curl("--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", https_origin + "/index.m3u8")
    assert (rc, out) == (0, "2 200"), err
    rc, out, err = curl("--http1.1", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", https_origin + "/index.m3u8")
    assert (rc, out) == (0, "1.1 200"), err
    # Plain HTTP on the TLS port is not answered as HTTP.
    rc, out, _ = curl("-o", "/dev/null", "-w", "%{http_code}", https_origin.replace("https:", "http:") + "/index.m3u8")
    assert out != "200"
    # The DASH manifest names its time endpoint with the scheme it is served over.
    rc, out, _ = curl("--http2", https_origin + "/manifest.mpd")
    assert f'value="{https_origin}/time"' in out, out[-500:]


def test_blocking_reload_and_preload_hint_share_one_h2_connection(https_origin):
    """RFC 8216bis §6.2.5.2 / §4.4.5.3 over HTTP/2: the blocking reload of the next part, the preload-hinted part and
    a plain playlist request go out at once as streams of one connection; each is answered 200 over h2."""
    rc, text, err = curl("--http2", https_origin + "/stream.m3u8")
    assert rc == 0, err
    pl = m3u8.parse_media(text)
    hint = re.search(r'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="([^"]+)"', text).group(1)
    msn = pl.media_sequence + len(pl.segments)  # the segment in progress
    parts_now = len(re.findall(r"#EXT-X-PART:", text.split(pl.segments[-1].uri)[-1]))
    blocking = f"{https_origin}/stream.m3u8?_HLS_msn={msn}&_HLS_part={parts_now}"
    t0 = time.monotonic()
    rc, out, err = curl("--http2", "--parallel", "--parallel-max", "10", "-o", "/dev/null", "-o", "/dev/null",
                        "-o", "/dev/null", "-w", "%{http_version} %{http_code} %{num_connects}\\n",
                        blocking, f"{https_origin}/{hint}", f"{https_origin}/index.m3u8", timeout=30)
    elapsed = time.monotonic() - t0
    assert rc == 0, err
    lines = out.split()
    results = [tuple(lines[i:i + 3]) for i in range(0, len(lines), 3)]
    assert len(results) == 3 and all(r[:2] == ("2", "200") for r in results), out
    assert sum(int(r[2]) for r in results) == 1, f"more than one connection: {out}"
    assert elapsed < 3, f"the blocked requests took {elapsed:.1f}s"


def h2_get(url, *headers):
    """Status line, header fields (lower-case names, without date) and body of one HTTP/2 GET."""
    p = subprocess.run(["curl", "-sk", "--max-time", "15", "--http2", "-D", "-",
                        *[x for h in headers for x in ("-H", h)], url], capture_output=True, timeout=20)
    assert p.returncode == 0, p.stderr
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    fields = sorted(ln.split(":", 1)[0].lower() + ":" + ln.split(":", 1)[1].strip() for ln in lines[1:]
                    if not ln.lower().startswith("date:"))
    return lines[0], fields, body


def test_h2_fast_path_answers_as_the_full_path(https_origin):
    """A plain GET of an object in memory is answered by the HTTP/2 fast path (H2FrameFastPath, before
    Hummingbird); with an `If-None-Match` that matches nothing the same request takes the full path, which answers
    200 with the whole object. Both give the same status, header fields (but Date) and body: playlist, init segment,
    segment and part."""
    deadline = time.monotonic() + 15
    while True:
        rc, text, err = curl("--http2", https_origin + "/stream.m3u8")
        assert rc == 0, err
        pl = m3u8.parse_media(text)
        if len(pl.segments) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    part = re.findall(r'#EXT-X-PART:[^\n]*URI="([^"]+)"', text)[-1]
    for path in ("/init.mp4", "/" + pl.segments[-2].uri, "/" + part):
        fast = h2_get(https_origin + path)
        full = h2_get(https_origin + path, 'If-None-Match: "no-such-tag"')
        assert fast[0].startswith("HTTP/2 200") and fast == full, (path, fast[:2], full[:2])
    # The playlist moves on between two requests: retry until both saw the same one.
    for _ in range(20):
        fast = h2_get(https_origin + "/stream.m3u8")
        full = h2_get(https_origin + "/stream.m3u8", 'If-None-Match: "no-such-tag"')
        if fast[2] == full[2]:
            break
    assert fast[0].startswith("HTTP/2 200") and fast == full, (fast[:2], full[:2])


def test_hlsjs_plays_over_https_h2(https_origin, origin_bin):
    """hls.js in Chromium over https (h2; certificate errors ignored for the self-signed test certificate), then the
    same over plain HTTP/1.1: both play LL-HLS, and the latencies are printed side by side."""
    need_chromium()
    res = chromium.chromium_play(https_origin + "/", 12, browser_args=["--ignore-certificate-errors"])
    print("h2:", chromium.summary(res))
    # Two players one after another on a 2-core machine: 3% dropped frames allowed, as in the looped-file test.
    assert chromium.playback_problems(res, max_dropped=0.03) == []
    assert res["low_latency_mode"] is True
    # One encoder at a time: the https origin is paused while the plain one plays (two live encoders and a
    # browser on 2 cores drop frames for reasons that have nothing to do with either protocol).
    https_proc = HTTPS_PROC["proc"]
    os.kill(https_proc.pid, signal.SIGSTOP)
    try:
        with procs.serving(origin_bin, ["--test-pattern-size", "640x360"], "http origin") as s:
            plain = chromium.chromium_play(s.url("/"), 12)
    finally:
        os.kill(https_proc.pid, signal.SIGCONT)
    print("h1:", chromium.summary(plain))
    assert chromium.playback_problems(plain, max_dropped=0.03) == []
    print(f"LL latency (Date.now() - playingDate) median: h2 {res['pdt_lag_median']:.2f}s, "
          f"h1 {plain['pdt_lag_median']:.2f}s")
    # Same stream, same player: TLS and HTTP/2 must not cost a noticeable delay.
    assert res["pdt_lag_median"] < plain["pdt_lag_median"] + 0.5
