"""`hls-origin serve -`: live input on stdin (a camera pipe), every input kind of issue 3, and what happens when
stdin closes (EXT-X-ENDLIST, server keeps serving)."""
import concurrent.futures
import signal
import subprocess
import time

import pytest

from hlsharness import chromium, clients, grid, http, livecheck, m3u8
from hlsharness.procs import StdinFeeder, stop_process
from hlsharness.testenv import need, need_chromium


def test_ts_pipe_from_live_ffmpeg(start_origin):
    """`ffmpeg -re ... -f mpegts - | hls-origin serve -`: strict live checks while it runs, ENDLIST after."""
    need("ffmpeg", "ffprobe")
    src = subprocess.Popen(["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re",
                            "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-re", "-f", "lavfi", "-i",
                            "sine=frequency=440:sample_rate=48000", "-c:v", "libx264", "-preset", "veryfast",
                            "-tune", "zerolatency", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2",
                            "-f", "mpegts", "-"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        s = start_origin("-", stdin=src.stdout)
        src.stdout.close()  # the server holds the read end now
        with concurrent.futures.ThreadPoolExecutor(3) as ex:
            pl = ex.submit(livecheck.check_live_playlist, s.base_url, 14)
            ff = ex.submit(clients.ffmpeg_read, s.url("/index.m3u8"), 10)
            # hls.js plays the piped stream too (the camera case), for 30 s.
            ch = ex.submit(chromium.chromium_play, s.url("/"), 30) if chromium.chromium_binary() else None
            pl, ff = pl.result(), ff.result()
            res = ch.result() if ch else None
        print(pl.summary())
        assert pl.errors == []
        assert ff.ok, str(ff)
        if res is None:
            need_chromium()
        else:
            print(chromium.summary(res))
            assert chromium.playback_problems(res) == []
        # the camera goes away: stdin closes -> the playlist ends, the server keeps serving it
        stop_process(src, sig=signal.SIGINT)
        ended = livecheck.wait_for_endlist(s.base_url, 10, proc=s.proc)
        assert ended is not None, f"no EXT-X-ENDLIST within 10s of stdin closing (exit={s.proc.poll()})"
        time.sleep(2)
        assert s.proc.poll() is None, "server exited after stdin closed; it must keep serving"
        snap = livecheck.check_http_snapshot(s.base_url)
        assert snap.errors == []
        assert snap.playlist.endlist and snap.playlist.playlist_type is None
    finally:
        stop_process(src)


# name -> (extra args, expected handlers, duration)
STDIN_INPUTS = {
    "y4m": ("y4m.y4m", [], {"vide"}),
    "rawvideo": ("raw.yuv", ["--input-format", "rawvideo", "--video-size", "320x240", "--pixel-format", "yuv420p",
                             "--framerate", "30"], {"vide"}),
    "mjpeg": ("mjpeg.mjpeg", ["--input-format", "mjpeg", "--framerate", "30"], {"vide"}),
    "mpeg4_mp3_mkv": ("mpeg4_mp3.mkv", [], {"vide", "soun"}),
    "h264_aac_ts": ("clip.ts", [], {"vide", "soun"}),
    "audio_only_ts": ("audio.ts", [], {"soun"}),
    "video_only_ts": ("video.ts", [], {"vide"}),
}


ENCODED = {"y4m", "rawvideo", "mjpeg", "mpeg4_mp3_mkv"}


@pytest.mark.parametrize("kind", sorted(STDIN_INPUTS))
def test_stdin_input_kinds(start_origin, media, kind):
    """Each input kind piped into `serve -` becomes a playable stream (H.264/AAC in fMP4) that ends with
    EXT-X-ENDLIST when stdin closes, has the input's duration, and the server keeps serving it."""
    need("ffmpeg")
    name, args, handlers = STDIN_INPUTS[kind]
    from hlsharness.media import INFO
    duration = INFO[name]["duration"]
    with open(media[name], "rb") as f:
        data = f.read()
    s = start_origin("-", *args, stdin=subprocess.PIPE, wait=False)
    feeder = StdinFeeder(s.proc.stdin, data, rate=len(data) / duration * 1.5)
    feeder.start()
    s.wait_ready(20)
    pl = livecheck.wait_for_endlist(s.base_url, duration + 20, proc=s.proc)
    assert pl is not None, f"no EXT-X-ENDLIST (exit={s.proc.poll()}; fed {feeder.written}/{len(data)} bytes)"
    assert feeder.error is None, f"writing stdin failed: {feeder.error}"
    time.sleep(1)
    assert s.proc.poll() is None, "server exited after stdin closed; it must keep serving"
    snap = livecheck.check_http_snapshot(s.base_url)
    assert snap.errors == []
    assert {t.handler for t in snap.init.tracks} == handlers
    for t in snap.init.tracks:
        assert t.codec.lower().startswith("avc1.") if t.handler == "vide" else t.codec == "mp4a.40.2", \
            f"{t.handler} codec {t.codec}: browsers need H.264/AAC"
    got = sum(sg.duration for sg in snap.playlist.segments)
    assert abs(got - duration) <= 0.15, f"stream lasts {got:.3f}s, input {duration}s"
    if kind in ENCODED:
        # Encoded with an IDR forced on every boundary: one LL part, then on the 1 s grid; the last may be short.
        durations = [sg.duration for sg in snap.playlist.segments]
        assert grid.encoded_grid_problems(durations) == [], durations
    r = clients.ffmpeg_read(s.url("/index.m3u8"), seconds=duration + 1)
    assert r.ok, str(r)
    # the first segment is still there after the end (nothing was evicted from a short stream)
    assert http.get(s.url("/" + snap.playlist.segments[0].uri)).status == 200
    assert isinstance(pl, m3u8.MediaPlaylist)
