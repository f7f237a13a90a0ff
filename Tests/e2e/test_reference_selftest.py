"""Proof that the real-client checks can pass AND fail, run against FFmpeg's own live fMP4 HLS behind nginx
(not against hls-origin). About 2.5 minutes, so it only runs on request:

    E2E_REFERENCE=1 python3 -m pytest Tests/e2e/test_reference_selftest.py -s
"""
import concurrent.futures
import os
import shutil
import signal
import tempfile
import threading

import pytest

from hlsharness import chromium, clients, livecheck, procs
from hlsharness.testenv import need, need_chromium

pytestmark = pytest.mark.skipif(os.environ.get("E2E_REFERENCE") != "1",
                                reason="reference self-test: set E2E_REFERENCE=1 to run")


@pytest.fixture
def reference():
    need("ffmpeg", "ffprobe", "nginx")
    ref = procs.FFmpegLiveReference().start()
    yield ref
    ref.stop()


def test_reference_passes_every_check(reference):
    need_chromium()
    need("streamlink")
    url = reference.base_url + "/index.m3u8"
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        pl = ex.submit(livecheck.check_live_playlist, reference.base_url, 15)
        ff = ex.submit(clients.ffmpeg_read, url, 10)
        sl = ex.submit(clients.streamlink_record, url, 10)
        pl, ff, sl = pl.result(), ff.result(), sl.result()
    assert pl.errors == [], pl.summary()
    assert ff.ok, str(ff)
    assert sl.ok, str(sl)
    res = chromium.chromium_play(reference.player_url(), 30)
    print("standard:", chromium.summary(res))
    assert chromium.playback_problems(res) == []
    res = chromium.chromium_play(reference.player_url(low_latency=True), 30)
    print("lowLatency:", chromium.summary(res))
    assert chromium.playback_problems(res) == []


def test_stalled_origin_fails_every_client(reference):
    """SIGKILL the encoder mid-run: the playlist freezes; every client check must fail."""
    need_chromium()
    url = reference.base_url + "/index.m3u8"
    threading.Timer(6, reference.kill_encoder).start()
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        pl = ex.submit(livecheck.check_live_playlist, reference.base_url, 14)
        ff = ex.submit(clients.ffmpeg_read, url, 10, 25)
        res = chromium.chromium_play(reference.player_url(), 20)
        pl, ff = pl.result(), ff.result()
    assert any("no new segment" in e for e in pl.errors), pl.errors
    assert not ff.ok
    probs = chromium.playback_problems(res)
    print("stalled:", chromium.summary(res), probs)
    assert any("advanced" in p for p in probs), probs


def test_ended_origin_is_seen(reference):
    """SIGTERM: FFmpeg writes EXT-X-ENDLIST; the live checker flags it, wait_for_endlist finds it."""
    threading.Timer(4, reference.kill_encoder, kwargs={"sig": signal.SIGTERM}).start()
    pl = livecheck.check_live_playlist(reference.base_url, 8)
    assert any("EXT-X-ENDLIST appeared" in e for e in pl.errors), pl.errors
    assert livecheck.wait_for_endlist(reference.base_url, 5) is not None


def test_cross_origin_without_cors_fails():
    """The cross-origin page against a server without CORS headers (python http.server) must fail to play."""
    need_chromium()
    need("ffmpeg")
    d = tempfile.mkdtemp(prefix="nocors-")
    try:
        import subprocess
        subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                        "testsrc2=size=320x240:rate=30", "-t", "4", "-c:v", "libx264", "-g", "30",
                        "-f", "hls", "-hls_time", "1", "-hls_segment_type", "fmp4", "-hls_playlist_type", "vod",
                        os.path.join(d, "index.m3u8")], check=True)
        shutil.copy(procs.HLSJS_PATH, os.path.join(d, "hls.mjs"))
        page_dir = tempfile.mkdtemp(prefix="page-")
        procs.write_player_page(page_dir)
        with procs.StaticServer(d, cors=False) as media, procs.StaticServer(page_dir) as page:
            url = procs.player_page_url(page.base_url, media.base_url + "/hls.mjs", media.base_url + "/index.m3u8")
            res = chromium.chromium_play(url, 4, startup_timeout=6)
        with procs.StaticServer(d, cors=True) as media, procs.StaticServer(page_dir) as page:
            url = procs.player_page_url(page.base_url, media.base_url + "/hls.mjs", media.base_url + "/index.m3u8")
            ok = chromium.chromium_play(url, 3, startup_timeout=6, screenshots=False)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    probs = chromium.playback_problems(res)
    print("no CORS:", probs, res["console"][:3])
    assert probs and not res["started"]
    assert ok["started"], chromium.summary(ok)


def test_abr_and_native_helpers_on_ffmpeg_ladder():
    """chromium_abr and chromium_native_play on FFmpeg's own live ladder (no LL-HLS): hls.js switches down under
    DevTools throttling and back up after; Chromium's native HLS player plays the multivariant playlist."""
    need_chromium()
    need("ffmpeg", "nginx")
    from hlsharness import ladders
    with ladders.FFmpegLiveLadder() as ref:
        procs.write_player_page(ref.dir)
        shutil.copy(procs.HLSJS_PATH, os.path.join(ref.dir, "hls.mjs"))
        url = procs.player_page_url(ref.base_url, ref.base_url + "/hls.mjs", ref.base_url + "/index.m3u8")
        res = chromium.chromium_abr(url, [(12, "throttle", lambda lv: lv[len(lv) // 2]["bitrate"] / 8 * 0.6),
                                          (30, "release")], seconds=55)
        native = chromium.chromium_native_play(ref.base_url + "/index.m3u8", 10)
    print(res["switches"], res["actions"])
    assert chromium.abr_problems(res, 12, 30) == []
    assert native["started"] and native["media_error"] is None and native["advance_ratio"] >= 0.9, native
