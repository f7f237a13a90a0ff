"""Run it as a service (issue 27 §1): streams added, changed and ended at run time through the control API and by
SIGHUP reloads of `--config`, and the health endpoints. One origin serves three streams from a config file (two
looped clips and an SRT listener nobody publishes to) while hls.js plays stream `a`: a fourth stream is added through
the API and plays in a second hls.js, `b` is deleted (its playlist and its recording end), and `a`'s player and the
strict checker see nothing of it. Then SIGHUP with edited configs adds, replaces and removes streams, and a broken
file changes nothing. About a minute.
"""
import concurrent.futures
import glob
import http.client
import json
import os
import shutil
import signal
import tempfile
import threading
import time

import pytest

from hlsharness import chromium, http as h, livecheck, m3u8, procs
from hlsharness.procs import free_port
from hlsharness.testenv import need, need_chromium
from test_ingest import wait_for_segments
from test_multistream import Named

TOKEN = "ctl-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def api(s, method, path, body=None, headers=None, raw=None, token=TOKEN):
    """One request to the control API: (status, parsed JSON or text, headers)."""
    hdrs = {} if token is None else {"Authorization": f"Bearer {token}"}
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    hdrs.update(headers or {})
    conn = http.client.HTTPConnection(s.host, s.port, timeout=15)
    try:
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        text = r.read().decode("utf-8", errors="replace")
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return r.status, parsed, {k.lower(): v for k, v in r.getheaders()}
    finally:
        conn.close()


def config(clip, srt_port, **extra):
    """The config file's text: a and b loop the clip, c is an SRT listener; `extra` adds or replaces entries."""
    streams = {"a": f'input = "{clip}"\nloop = true', "b": f'input = "{clip}"\nloop = true',
               "c": f'input = "srt://127.0.0.1:{srt_port}?mode=listener"'}
    streams.update(extra)
    return "\n".join(f"[streams.{k}]\n{v}\n" for k, v in streams.items() if v is not None)


def playlist(s, name):
    r = h.get(s.url(f"/{name}/stream.m3u8"), timeout=5)
    return r.status, (m3u8.parse_media(r.text) if r.status == 200 else None)


def wait_for_line(s, words, after=0, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [ln for ln in s.stderr()[after:].splitlines() if words in ln]
        if lines:
            return lines
        time.sleep(0.2)
    raise AssertionError(f"no line with {words!r} within {timeout}s; stderr:\n{s.stderr()[-2000:]}")


@pytest.fixture(scope="module")
def ops(origin_bin):
    need("ffmpeg")
    from hlsharness import media
    clip = media.make("clip.mp4")
    root = tempfile.mkdtemp(prefix="e2e-ops-")
    path, record = os.path.join(root, "streams.toml"), os.path.join(root, "rec")
    srt_port = free_port()
    with open(path, "w") as f:
        f.write(config(clip, srt_port))
    s = procs.OriginServer(origin_bin, ["--config", path, "--api-token", TOKEN, "--record", record, "--window", "20",
                                        "--log-level", "info", "--quiet",
                                        *(["--hlsjs", procs.HLSJS_PATH] if os.path.exists(procs.HLSJS_PATH) else [])])
    s.start()
    try:
        s.wait_ready(20, path="/a/index.m3u8")
        s.clip, s.config, s.record, s.srt_port = clip, path, record, srt_port
        yield s
    finally:
        rc = s.stop()
        print(f"\n--- ops origin exit {rc}; stderr tail:\n{s.stderr()[-3000:]}")
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(s.workdir, ignore_errors=True)


def test_health_and_readiness_while_a_listener_waits(ops):
    wait_for_segments(Named(ops, "a"), 2)
    wait_for_segments(Named(ops, "b"), 2)
    r = h.get(ops.url("/healthz"))
    assert r.status == 200 and r.text == "ok\n", (r.status, r.text)
    r = h.get(ops.url("/readyz"))
    assert r.status == 503 and r.text == "c: waiting\n", (r.status, r.text)
    assert h.get(ops.url("/readyz?stream=a,b")).status == 200
    assert h.get(ops.url("/readyz?stream=a,nope")).text == "nope: unknown\n"
    info = {x["name"]: x for x in json.loads(h.get(ops.url("/streams.json")).text)["streams"]}
    assert info["c"]["state"] == "waiting" and info["a"]["state"] == "live", info


def test_the_api_refuses_clearly(ops):
    assert api(ops, "GET", "/api/v1/streams", token=None)[0] == 401
    assert api(ops, "GET", "/api/v1/streams", token="wrong")[0] == 401
    assert api(ops, "POST", "/api/v1/streams", {"name": "x", "input": ops.clip}, token="wrong")[0] == 401
    status, body, _ = api(ops, "GET", "/api/v1/streams")
    assert status == 200 and sorted(x["name"] for x in body["streams"]) == ["a", "b", "c"], body
    status, body, _ = api(ops, "POST", "/api/v1/streams", {"name": "x", "input": ops.clip, "segment_duration": 0.01})
    assert status == 400 and body["field"] == "segment_duration" and "\n" not in body["error"], body
    status, body, _ = api(ops, "POST", "/api/v1/streams", {"name": "x", "input": ops.clip, "ladr": "720"})
    assert status == 400 and body["field"] == "ladr" and "unknown key 'ladr'" in body["error"], body
    status, body, _ = api(ops, "POST", "/api/v1/streams", {"name": "x", "input": "/nonexistent.mp4"})
    assert status == 400 and body["field"] == "input", body
    status, body, _ = api(ops, "POST", "/api/v1/streams", {"name": "a", "input": ops.clip})
    assert status == 409 and body["field"] == "name", body
    assert api(ops, "DELETE", "/api/v1/streams/nope")[0] == 404
    assert api(ops, "PATCH", "/api/v1/streams/nope", {"window": 3})[0] == 404
    status, body, _ = api(ops, "PATCH", "/api/v1/streams/a", {"window": 3, "loop": False, "segment_duration": 2})
    assert status == 422 and body["fields"] == ["loop", "segment_duration"], body
    assert api(ops, "PATCH", "/api/v1/streams/a", {"window": 20})[1]["changed"] == [], "nothing changed above"
    assert api(ops, "POST", "/api/v1/streams", raw=b"{", headers={"Content-Type": "text/plain"})[0] == 415
    assert api(ops, "POST", "/api/v1/streams", raw=b"[" * 70_000)[0] == 413
    assert api(ops, "POST", "/api/v1/streams", raw=b"{not json")[0] == 400
    assert TOKEN not in ops.stderr()
    names = sorted(x["name"] for x in json.loads(h.get(ops.url("/streams.json")).text)["streams"])
    assert names == ["a", "b", "c"], "nothing refused was added"


def test_patch_changes_the_window_live(ops):
    a = Named(ops, "a")
    before = wait_for_segments(a, 9)
    status, body, _ = api(ops, "PATCH", "/api/v1/streams/a", {"window": 8})
    assert status == 200 and body["changed"] == ["window"], body
    pl = wait_for_segments(a, before.segments[-1].seq + 1)
    assert len(pl.segments) == 8 and pl.segments[-1].seq - pl.media_sequence == 7, len(pl.segments)
    assert pl.discontinuity_sequence == before.discontinuity_sequence and not pl.endlist
    # Back to the file's value: the reload below finds `a` unchanged.
    assert api(ops, "PATCH", "/api/v1/streams/a", {"window": 20})[1]["changed"] == ["window"]


def blocking_reload_waits(s, name, stop):
    """Seconds each LL-HLS blocking reload of `name`'s next segment waited (`_HLS_msn` = the last listed + 1), one
    after another until `stop` is set: the origin answers each when that segment is published."""
    waits = []
    while not stop.is_set():
        last = playlist(s, name)[1].segments[-1].seq
        t = time.monotonic()
        r = h.get(s.url(f"/{name}/stream.m3u8?_HLS_msn={last + 1}"), timeout=10)
        waits.append(time.monotonic() - t)
        assert r.status == 200 and m3u8.parse_media(r.text).segments[-1].seq >= last + 1, r.status
    return waits


def test_add_and_delete_while_a_plays(ops):
    if not chromium.chromium_binary():
        need_chromium()
    a = Named(ops, "a")
    first = playlist(ops, "a")[1].segments[-1].seq
    stop = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(3) as ex:
        play_a = ex.submit(chromium.chromium_play, ops.url("/a/"), 14, screenshots=False)
        check_a = ex.submit(livecheck.check_live_playlist, a.base_url, 13)
        reloads_a = ex.submit(blocking_reload_waits, ops, "a", stop)
        time.sleep(2)
        status, body, headers = api(ops, "POST", "/api/v1/streams", {"name": "d", "input": ops.clip, "loop": True})
        assert status == 201 and body["name"] == "d" and headers["location"] == "/api/v1/streams/d", (status, body)
        wait_for_segments(Named(ops, "d"), 2)
        assert 'stream="d"' in h.get(ops.url("/metrics")).text, "the metrics follow a stream added at run time"
        play_d = chromium.chromium_play(ops.url("/d/"), 5, screenshots=False)
        status, body, _ = api(ops, "DELETE", "/api/v1/streams/b")
        assert status == 200 and body["state"] == "ended", (status, body)
        played, checked = play_a.result(), check_a.result()
        stop.set()
        waits = reloads_a.result()
    print("a", chromium.summary(played), checked.summary())
    print("d", chromium.summary(play_d))
    # d is played for 5 s by a second Chromium while a's plays and three live encodes share the 2 cores: frames its
    # first seconds drop while hls.js plays at 1.1x to reach the live edge are that load's (CI at 3f4db4f: 8/150);
    # the harness's catch-up bound (10%) covers them.
    assert chromium.playback_problems(play_d, max_dropped=0.1, require_screens=False) == []
    assert chromium.playback_problems(played, max_dropped=0.1, require_screens=False) == []
    assert checked.errors == [], checked.summary()
    # a's blocking reloads while d was added and b deleted: each answered within its 1-s segment's cadence (plus
    # the machine's slack), none held past it.
    print("a blocking reloads (s):", [round(w, 2) for w in waits])
    assert len(waits) >= 8 and max(waits) < 2.0, waits
    assert not [x for x in played["errors"] if x.get("details") != "bufferStalledError" or x.get("fatal")]
    pl = playlist(ops, "a")[1]
    assert not [seg.seq for seg in pl.segments if seg.discontinuity and seg.seq > first], "no discontinuity in a"
    # b ended: its playlist says so (still served), its recording is VOD; readyz no longer waits for it.
    status, pl = playlist(ops, "b")
    assert status == 200 and pl.endlist, status
    media = [t for t in (open(p).read() for p in glob.glob(os.path.join(ops.record, "b", "**", "*.m3u8"), recursive=True))
             if "#EXTINF" in t]
    assert media and all("#EXT-X-PLAYLIST-TYPE:VOD" in t and "#EXT-X-ENDLIST" in t for t in media), media[:1]
    assert h.get(ops.url("/readyz?stream=a,d")).status == 200
    assert "b:" not in h.get(ops.url("/readyz")).text
    # A second DELETE unregisters it.
    assert api(ops, "DELETE", "/api/v1/streams/b")[0] == 204
    assert h.get(ops.url("/b/index.m3u8")).status == 404


def test_sighup_reloads_the_config(ops):
    # d added and b gone through the API, as test_add_and_delete_while_a_plays leaves them (that test runs in the solo
    # phase of scripts/test, after this one, on a server of its own).
    if h.get(ops.url("/d/index.m3u8")).status != 200:
        assert api(ops, "POST", "/api/v1/streams", {"name": "d", "input": ops.clip, "loop": True})[0] == 201
        wait_for_segments(Named(ops, "d"), 1)
    if playlist(ops, "b")[0] == 200:
        assert api(ops, "DELETE", "/api/v1/streams/b")[0] == 200
        assert api(ops, "DELETE", "/api/v1/streams/b")[0] == 204
    a_before = playlist(ops, "a")[1]
    mark = len(ops.stderr())
    # c changes (replaced), e is new, a stays, b stays away (deleted through the API, and gone from the file too).
    with open(ops.config, "w") as f:
        f.write(config(ops.clip, ops.srt_port, b=None, c=f'input = "srt://127.0.0.1:{ops.srt_port}?mode=listener"\nwindow = 10',
                       e=f'input = "{ops.clip}"\nloop = true'))
    ops.proc.send_signal(signal.SIGHUP)
    line = wait_for_line(ops, "reload: added e; replaced c; 1 unchanged", after=mark)
    assert len(line) == 1, line
    wait_for_segments(Named(ops, "e"), 1)
    assert ops.proc.poll() is None
    a_after = playlist(ops, "a")[1]
    assert a_after.segments[-1].seq > a_before.segments[-1].seq
    assert a_after.media_sequence >= a_before.media_sequence and a_after.discontinuity_sequence == a_before.discontinuity_sequence
    assert h.get(ops.url("/d/index.m3u8")).status == 200, "a stream added through the API is not the file's"
    assert h.get(ops.url("/readyz")).text == "c: waiting\n"

    # e removed: ended as DELETE ends it.
    mark = len(ops.stderr())
    with open(ops.config, "w") as f:
        f.write(config(ops.clip, ops.srt_port, b=None, c=f'input = "srt://127.0.0.1:{ops.srt_port}?mode=listener"\nwindow = 10'))
    ops.proc.send_signal(signal.SIGHUP)
    wait_for_line(ops, "reload: removed e; 2 unchanged", after=mark)
    assert playlist(ops, "e")[1].endlist

    # A broken file changes nothing and says so in one line.
    mark = len(ops.stderr())
    with open(ops.config, "w") as f:
        f.write(config(ops.clip, ops.srt_port, a=f'input = "{ops.clip}"\nladr = "720"'))
    ops.proc.send_signal(signal.SIGHUP)
    lines = wait_for_line(ops, "reload:", after=mark)
    time.sleep(0.5)
    lines = [ln for ln in ops.stderr()[mark:].splitlines() if "reload" in ln]
    assert len(lines) == 1 and "unknown key 'ladr'" in lines[0] and lines[0].endswith("nothing changed"), lines
    assert ops.proc.poll() is None
    status, body, _ = api(ops, "GET", "/api/v1/streams")
    states = {x["name"]: x["state"] for x in body["streams"]}
    assert states == {"a": "live", "c": "waiting", "d": "live", "e": "ended"}, states


def test_root_stream_health_is_open_and_sighup_without_config_is_harmless(start_origin):
    need("ffmpeg")
    from hlsharness import media
    s = start_origin(media.make("clip.mp4"), "--loop", "--auth-token", "viewers-secret", "--api-token", TOKEN,
                     "--log-level", "debug", wait=False)
    assert h.wait_for_200(s.url("/readyz"), 20, proc=s.proc) is not None, s.stderr()[-2000:]
    assert h.get(s.url("/healthz")).text == "ok\n"
    assert h.get(s.url("/index.m3u8")).status == 403, "the media still needs the viewers' credential"
    assert api(s, "GET", "/api/v1/streams", token="viewers-secret")[0] == 401
    assert api(s, "GET", "/api/v1/streams")[0] == 200
    mark = len(s.stderr())
    s.proc.send_signal(signal.SIGHUP)
    wait_for_line(s, "reload: no --config", after=mark)
    time.sleep(0.5)
    assert s.proc.poll() is None
    err = s.stderr()
    assert "/index.m3u8" in err and "/healthz" not in err and "/readyz" not in err, "probes are not logged per request"
    assert "viewers-secret" not in err and TOKEN not in err
