"""Examples/EmbeddedOrigin: an app with its own Hummingbird routes and the origin mounted at /live through the
HLSOrigin library (OriginMiddleware), fed by a Pipeline. Built with the package next to hls-origin."""
import os
import subprocess
import time

import pytest

from hlsharness import chromium, clients, http, m3u8, procs
from hlsharness.testenv import missing, need


@pytest.fixture
def example(origin_bin):
    binary = os.path.join(os.path.dirname(origin_bin), "EmbeddedOriginExample")
    if not os.access(binary, os.X_OK):
        missing(f"{binary} not built (swift build builds it with hls-origin)")
    port = procs.free_port()
    env = {**os.environ, "HLS_ORIGIN_HLSJS": procs.HLSJS_PATH}
    p = subprocess.Popen([binary, str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stdout.readline()
        assert line.startswith("listening on"), f"first line {line!r}; stderr: {p.stderr.read() if p.poll() else ''}"
        yield f"http://127.0.0.1:{port}"
    finally:
        procs.stop_process(p)
        err = p.stderr.read()
        print(f"\n--- EmbeddedOriginExample (exit {p.returncode}) stderr tail:\n{err[-2000:]}")


def test_app_routes_and_mounted_origin(example):
    need("ffmpeg")
    hello = http.get(example + "/hello")
    assert hello.status == 200 and "live stream" in hello.text
    assert http.get(example + "/nothing-here").status == 404
    # The origin under /live: the multivariant (waits for the first segment), the media playlist, objects.
    assert http.wait_for_200(example + "/live/index.m3u8", 10) is not None
    mv = m3u8.parse_multivariant(http.get(example + "/live/index.m3u8").text)
    assert [v.uri for v in mv.variants] == ["stream.m3u8"]
    assert mv.variants[0].attrs.get("RESOLUTION") == "640x360"
    media = http.get(example + "/live/stream.m3u8")
    assert media.status == 200 and media.header("access-control-allow-origin") == "*"
    pl = m3u8.parse_media(media.text)
    assert pl.segments and pl.segments[0].map_uri == "init.mp4"
    for uri in ["init.mp4", pl.segments[-1].uri]:
        r = http.get(example + "/live/" + uri)
        assert r.status == 200 and len(r.body) > 0, uri
    # The player page needs the trailing slash for its relative URLs.
    bare = http.get(example + "/live")
    assert bare.status == 301 and bare.header("location", "").endswith("/live/")
    page = http.get(example + "/live/")
    assert page.status == 200 and page.header("content-type", "").startswith("text/html")
    # Real clients read the mounted stream: ffmpeg, and hls.js from the mounted player page (relative URLs).
    r = clients.ffmpeg_read(example + "/live/index.m3u8", 5)
    assert r.ok, str(r)
    if chromium.chromium_binary():
        res = chromium.chromium_play(example + "/live/", 8, screenshots=False)
        print(chromium.summary(res))
        assert res["started"] and res["version"], chromium.summary(res)
        assert not [e for e in res["errors"] if e.get("details") in chromium.BAD_ERROR_DETAILS], chromium.summary(res)
