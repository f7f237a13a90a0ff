"""`GET /metrics` (issue 11 §3): the Prometheus text exposition of `serve`, checked by `promtool check metrics`
(Debian's prometheus package), read line by line by `prometheus_client`'s parser, and with sane values: segments
published grow between two scrapes, requests by status include the 200s and a 404 the test caused, per-stream
labels are there. One stream at the root, then two named streams in one process. About 25 s.
"""
import subprocess
import time

from hlsharness import http, m3u8
from hlsharness.testenv import need, need_python

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def scrape(base_url):
    """The /metrics text after promtool and prometheus_client's parser both accepted it; {(name, labels): value}."""
    r = http.get(base_url + "/metrics")
    assert r.status == 200, (r.status, r.text[:500])
    assert r.header("content-type") == CONTENT_TYPE
    assert r.header("cache-control") == "no-store"
    check = subprocess.run(["promtool", "check", "metrics"], input=r.body, capture_output=True, timeout=30)
    assert check.returncode == 0, f"promtool check metrics:\n{check.stdout.decode()}{check.stderr.decode()}\n{r.text}"

    from prometheus_client.parser import text_string_to_metric_families
    samples = {}
    lines = [l for l in r.text.splitlines() if l and not l.startswith("#")]
    for family in text_string_to_metric_families(r.text):
        assert family.documentation, f"{family.name} has no HELP"
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    # Every sample line was read (a line the parser skipped would be missing here).
    assert len(samples) == len(lines), (len(samples), len(lines))
    return samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))


def total(samples, name, **labels):
    """Sum over the samples of `name` whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, l), v in samples.items() if n == name and want <= set(l))


def fetch_some(base):
    """A few playlists and segments (200s) and one missing segment (404)."""
    mv = http.get(base + "/index.m3u8")
    assert mv.status == 200
    media = http.get(base + "/stream.m3u8")
    assert media.status == 200
    pl = m3u8.parse_media(media.text)
    for seg in pl.segments[-2:]:
        assert http.get(http.join(media.url, seg.uri)).status == 200
    assert http.get(base + "/seg999999.m4s").status == 404


def wait_for_segment(url, n, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = http.get(url, timeout=3)
        if r.status == 200:
            pl = m3u8.parse_media(r.text)
            if pl.segments and pl.segments[-1].seq >= n:
                return
        time.sleep(0.25)
    raise AssertionError(f"no segment {n} at {url} within {timeout}s")


def test_metrics_single_stream(start_origin):
    need("promtool")
    need_python("prometheus_client")
    s = start_origin("--test-pattern-size", "640x360")
    base = s.base_url
    wait_for_segment(base + "/stream.m3u8", 2)
    fetch_some(base)
    first = scrape(base)
    seg = ("hls_origin_segments_published_total")
    published = value(first, seg, stream="default", rendition="stream")
    assert published and published > 0, first
    # Requests by status: the segments and playlists answered 200, the missing segment 404.
    assert value(first, "hls_origin_http_requests_total", stream="default", rendition="stream", kind="segment",
                 status="200") >= 2
    assert value(first, "hls_origin_http_requests_total", stream="default", rendition="stream", kind="segment",
                 status="404") == 1
    assert value(first, "hls_origin_http_requests_total", stream="default", rendition="stream", kind="playlist",
                 status="200") >= 1
    assert total(first, "hls_origin_http_sent_bytes_total", stream="default", kind="segment") > 1000
    assert value(first, "hls_origin_viewers", stream="default") == 1
    assert value(first, "hls_origin_input_video_frames_total", stream="default") > 30
    assert 0 < value(first, "hls_origin_input_frame_rate", stream="default") < 100
    assert value(first, "hls_origin_input_bytes_per_second", stream="default") > 0
    assert 0.2 < value(first, "hls_origin_encode_speed_ratio", stream="default") < 5
    # Segment durations around the 1 s target; parts published with a latency measured.
    count = value(first, "hls_origin_segment_duration_seconds_count", stream="default", rendition="stream")
    assert count == published
    assert value(first, "hls_origin_segment_duration_seconds_bucket", stream="default", rendition="stream",
                 le="1.5") == count
    assert value(first, "hls_origin_parts_published_total", stream="default", rendition="stream") >= 2 * published
    assert value(first, "hls_origin_part_publish_latency_seconds_count", stream="default", rendition="stream") > 0

    time.sleep(2.5)
    second = scrape(base)
    assert value(second, seg, stream="default", rendition="stream") > published
    assert value(second, "hls_origin_http_requests_total", stream="", rendition="", kind="metrics", status="200") >= 1
    # Counters never go down.
    for key, v in first.items():
        if key[0].endswith("_total") and key in second:
            assert second[key] >= v, key


def test_metrics_two_streams(start_origin):
    need("promtool")
    need_python("prometheus_client")
    s = start_origin("a=testpattern:", "b=testpattern:", "--test-pattern-size", "320x180",
                     wait=False)
    base = s.base_url
    for name in ("a", "b"):
        wait_for_segment(f"{base}/{name}/stream.m3u8", 1, timeout=30)
    fetch_some(base + "/a")
    assert http.get(base + "/nope/index.m3u8").status == 404
    m = scrape(base)
    for name in ("a", "b"):
        assert value(m, "hls_origin_segments_published_total", stream=name, rendition="stream") > 0, name
        assert value(m, "hls_origin_input_video_frames_total", stream=name) > 0, name
        assert value(m, "hls_origin_viewers", stream=name) is not None, name
    assert value(m, "hls_origin_http_requests_total", stream="a", rendition="stream", kind="segment", status="200") >= 2
    assert value(m, "hls_origin_http_requests_total", stream="a", rendition="stream", kind="segment", status="404") == 1
    # b was only polled for its playlist (waiting for a segment above).
    assert total(m, "hls_origin_http_requests_total", stream="b", kind="playlist") >= 1
    assert total(m, "hls_origin_http_requests_total", stream="b", kind="segment") == 0
    # A path under no stream carries no stream name (nor any path text) in its labels.
    assert value(m, "hls_origin_http_requests_total", stream="", rendition="", kind="other", status="404") == 1
    assert value(m, "hls_origin_viewers", stream="a") == 1


def test_metrics_is_no_stream_name(origin_bin):
    """`/metrics` is the scrape path: 'metrics' cannot name a stream (one clear error line, non-zero exit)."""
    p = subprocess.run([origin_bin, "serve", "metrics=testpattern:", "b=testpattern:", "--port", "0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode != 0 and "'metrics' cannot name a stream" in p.stderr, (p.returncode, p.stderr)


def post(url, body, timeout=5):
    p = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H",
                        "Content-Type: text/plain", "--data-binary", "@-", url], input=body, capture_output=True,
                       timeout=timeout + 5)
    return int(p.stdout or 0)


def test_player_qoe_beacons(start_origin):
    """The player page reports QoE (startup, latency, stalls, rendition switches) to `POST qoe` every 10 s, and
    `/metrics` adds them up per stream; a beacon over 1 KB is 413, one that is not a plausible report 400, and more
    than two a second from one address 429 (the issue: "bounded in size and rate so it cannot be abused")."""
    from hlsharness import chromium
    from hlsharness.testenv import need_chromium
    need("promtool")
    s = start_origin("--test-pattern-size", "640x360")
    if not chromium.chromium_binary():
        need_chromium()
    res = chromium.chromium_play(s.url("/"), 13, screenshots=False)
    assert res["started"], chromium.summary(res)
    samples = scrape(s.base_url)
    assert value(samples, "hls_origin_qoe_reports_total", stream="default", result="accepted") >= 1, samples
    assert value(samples, "hls_origin_qoe_startup_seconds_count", stream="default") == 1
    assert 0 < value(samples, "hls_origin_qoe_startup_seconds_sum", stream="default") < 10
    assert value(samples, "hls_origin_qoe_latency_seconds_count", stream="default") >= 1
    # Abuse: too large, not a report, too frequent. Each is refused and counted; nothing else changes.
    assert post(s.url("/qoe"), b"{" + b" " * 2000 + b"}") == 413
    time.sleep(0.6)
    assert post(s.url("/qoe"), b'{"latency": 1e9}') == 400
    time.sleep(0.6)
    codes = [post(s.url("/qoe"), b'{"stalls": 0}') for _ in range(5)]
    assert codes[0] == 204 and 429 in codes, codes
    after = scrape(s.base_url)
    for result in ("too_large", "malformed", "too_frequent"):
        assert value(after, "hls_origin_qoe_reports_total", stream="default", result=result) >= 1, result
