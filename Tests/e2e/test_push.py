"""`serve --push URL` into an nginx WebDAV ingest (deploy/nginx/ingest.conf: `dav_methods PUT DELETE`), with no local
server (`--no-serve`): the pushed stream plays from nginx (ffmpeg, the strict playlist checker), survives the ingest
being stopped for 4 s and restarted (the origin keeps running, the ingest's playlist advances again, at most the
down-time's segments are missing), `--push-delete` removes expired segments, LL-HLS parts are pushed, and a refusing
ingest (403) is one clear error line. About 60 seconds."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from hlsharness import chromium, clients, http, livecheck, m3u8, procs
from hlsharness.testenv import need, need_chromium, need_hlsjs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INGEST_CONF = os.path.join(REPO, "deploy", "nginx", "ingest.conf")


class Ingest:
    """nginx with deploy/nginx/ingest.conf on a fixed free loopback port and a temporary root; stop() and start()
    again keep both (a restarted ingest)."""

    def __init__(self, refuse=False):
        self.port = procs.free_port()
        self.dir = tempfile.mkdtemp(prefix="ingest-")
        self.root = os.path.join(self.dir, "root")
        os.makedirs(os.path.join(self.dir, "tmp"))
        os.makedirs(self.root)
        conf = open(INGEST_CONF).read()
        conf = conf.replace("@LISTEN@", f"127.0.0.1:{self.port}").replace("@DIR@", self.dir).replace("@ROOT@", self.root)
        if refuse:
            # Reads only: a PUT or DELETE is answered 403 Forbidden.
            conf = re.sub(r"(\n\s+location [^{\n]*\{)", r"\1\n            limit_except GET HEAD { deny all; }", conf)
        if os.geteuid() == 0:
            conf = "user root;\n" + conf  # the worker must reach the private temporary root
        self.conf = os.path.join(self.dir, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        # A file only this ingest serves: what answers on the port is this nginx, not another test's server that
        # took the port first.
        self.marker = f"ingest-{os.getpid()}-{id(self)}-{time.monotonic_ns()}"
        with open(os.path.join(self.root, "marker.txt"), "w") as f:
            f.write(self.marker)
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/live/"

    def path(self, name):
        return os.path.join(self.root, "live", name)

    def start(self, timeout=10):
        self.proc = subprocess.Popen([procs.nginx_binary(), "-p", self.dir, "-c", self.conf, "-e", self.dir + "/error.log"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.proc.stderr.read().decode()}")
            r = http.get(f"http://127.0.0.1:{self.port}/marker.txt", timeout=0.5)
            if r.status == 200 and r.text == self.marker:
                return self
            time.sleep(0.05)
        raise RuntimeError("nginx did not start listening")

    def stop(self):
        procs.stop_process(self.proc, sig=signal.SIGTERM)

    def close(self):
        self.stop()
        try:
            print("\n--- ingest error.log tail:\n" + open(self.dir + "/error.log").read()[-1000:])
        except OSError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def ingest():
    need("nginx", "ffmpeg")
    made = []

    def make(refuse=False):
        for attempt in range(3):  # a free port can be taken by another process before nginx binds it
            i = Ingest(refuse=refuse)
            made.append(i)
            try:
                return i.start()
            except RuntimeError:
                if attempt == 2:
                    raise

    yield make
    for i in made:
        i.close()


# The tests take `ingest` before `start_origin`: the origin is stopped first at teardown (with the ingest gone it
# would spend its 10 s final wait retrying).
def pusher(start_origin, ingest, *extra):
    """`serve --no-serve --push` the 640x360 test pattern into `ingest`; returns once the push has begun."""
    o = start_origin("--no-serve", "--push", ingest.url, "--test-pattern-size", "640x360", *extra, wait=False)
    deadline = time.monotonic() + 20
    while "pushing to" not in o.stderr():
        assert o.proc.poll() is None and time.monotonic() < deadline, o.stderr()
        time.sleep(0.1)
    assert f"hls-origin: pushing to {ingest.url} (PUT" in o.stderr()
    assert http.wait_for_200(ingest.url + "index.m3u8", 20, proc=o.proc) is not None, o.stderr()
    return o


def media_playlist(ingest):
    r = http.get(ingest.url + "stream.m3u8")
    assert r.status == 200, r
    return m3u8.parse_media(r.text)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_push_only_plays_from_the_ingest_and_survives_its_restart(ingest, start_origin):
    ing = ingest()
    o = pusher(start_origin, ing, "--part-duration", "0", "--push-delete", "--log-level", "notice")
    assert o.proc.poll() is None
    for name in ("index.m3u8", "stream.m3u8", "init.mp4", "seg0.m4s"):
        assert os.path.exists(ing.path(name)), name
    # What the origin would serve, from nginx: ffmpeg plays it, the strict checker finds nothing wrong.
    played = clients.ffmpeg_read(ing.url + "index.m3u8", seconds=5)
    assert played.ok, played
    mv = m3u8.parse_multivariant(http.get(ing.url + "index.m3u8").text)
    assert [v.uri for v in mv.variants] == ["stream.m3u8"]
    checked = livecheck.check_media_playlist(ing.url + "stream.m3u8", 6, codecs=mv.variants[0].attrs.get("CODECS"),
                                             encoded=True)
    assert checked.errors == [], (checked.errors, o.stderr())

    # Persistent connections: a handful for every object so far (one per lane, plus reconnections).
    log = open(os.path.join(ing.dir, "access.log")).read()
    conns = re.findall(r'"(?:PUT|DELETE) \S+ HTTP/1.1" \d+ \d+ conn=(\d+)/', log)
    print(f"{len(conns)} requests on {len(set(conns))} connections")
    assert len(conns) >= 30 and len(set(conns)) <= 6, (len(conns), sorted(set(conns)))

    # The ingest goes away for 4 s.
    before = media_playlist(ing)
    last_before = before.media_sequence + len(before.segments) - 1
    ing.stop()
    time.sleep(4)
    assert o.proc.poll() is None, "the origin stopped with its ingest"
    ing.start()
    # The playlist on the ingest advances again, past what was produced while it was down.
    wait_for(lambda: media_playlist(ing).media_sequence + len(media_playlist(ing).segments) - 1 >= last_before + 7,
             30, "the ingest's playlist to advance after the restart")
    after = media_playlist(ing)
    missing = [s.uri for s in after.segments if http.get(ing.url + s.uri).status != 200]
    print(f"listed after the restart: {after.media_sequence}..{after.media_sequence + len(after.segments) - 1}, "
          f"missing {missing}")
    assert len(missing) <= 5, missing  # at most what was produced in the 4 s the ingest was down
    played = clients.ffmpeg_read(ing.url + "index.m3u8", seconds=3)
    assert played.ok, played
    err = o.stderr()
    assert len(re.findall(r"warning .*push: PUT \S+ failed: .*retrying with back-off", err)) == 1, err
    assert len(re.findall(r"push: ingest \S+ reachable again", err)) == 1, err

    # --push-delete: segments that left the window (plus the retention) are gone from the ingest.
    assert not os.path.exists(ing.path("seg0.m4s"))
    on_disk = [n for n in os.listdir(os.path.dirname(ing.path("x"))) if n.startswith("seg")]
    assert len(on_disk) <= 20, sorted(on_disk)

    # Ctrl-C: the ended playlist is pushed, then the origin exits.
    o.proc.send_signal(signal.SIGINT)
    assert o.proc.wait(timeout=15) == 0, o.stderr()
    final = media_playlist(ing)
    assert final.endlist
    assert re.search(r"push: \d+ objects pushed, \d+ deleted, 0 refused", o.stderr()), o.stderr()


def test_push_ll_hls_parts(ingest, start_origin):
    ing = ingest()
    pusher(start_origin, ing, "--part-duration", "0.5")
    wait_for(lambda: len(media_playlist(ing).parts) >= 4, 10, "a playlist listing parts")
    text = http.get(ing.url + "stream.m3u8").text
    assert "#EXT-X-PART-INF:PART-TARGET=0.5" in text and "#EXT-X-PRELOAD-HINT" in text
    pl = m3u8.parse_media(text)
    # Every listed part is on the ingest, a fragment (pushed before the playlist that lists it).
    for p in pl.parts:
        r = http.get(ing.url + p["URI"])
        assert r.status == 200 and r.body[4:8] in (b"styp", b"moof"), (p["URI"], r.status)
    for s in pl.segments:
        assert http.get(ing.url + s.uri).status == 200, s.uri
    played = clients.ffmpeg_read(ing.url + "index.m3u8", seconds=3)
    assert played.ok, played


def test_a_refusing_ingest_is_one_error_line(ingest, start_origin):
    ing = ingest(refuse=True)
    o = start_origin("--no-serve", "--push", ing.url, "--test-pattern-size", "640x360", "--part-duration", "0",
                     wait=False)
    wait_for(lambda: "refused: 403" in o.stderr(), 30, "the refusal")
    time.sleep(2)  # more objects are refused meanwhile
    err = o.stderr()
    lines = [ln for ln in err.splitlines() if re.search(r"refused: \d{3}", ln)]
    assert len(lines) == 1, err
    assert re.search(rf"error .*push: PUT {re.escape(ing.url)}\S+ refused: 403 Forbidden$", lines[0]), lines
    assert o.proc.poll() is None, "a refusing ingest does not stop the origin"
    assert not os.path.exists(ing.path("index.m3u8"))


def test_push_flags_are_checked(origin_bin):
    for args, message in ((["--no-serve"], "--no-serve needs --push"),
                          (["--push", "ftp://x/"], "--push takes an http:// or https:// URL"),
                          (["--push", "http://127.0.0.1:9/", "--push-method", "PATCH"], "--push-method must be PUT or POST"),
                          (["--push-delete"], "--push-delete needs --push")):
        p = subprocess.run([origin_bin, "serve", *args], capture_output=True, timeout=10)
        assert p.returncode != 0 and message in p.stderr.decode(), (args, p.stderr.decode())
    h = subprocess.run([origin_bin, "serve", "--help"], capture_output=True, timeout=10).stdout.decode()
    for flag in ("--push <url>", "--push-method <method>", "--push-delete", "--no-serve"):
        assert flag in h, flag


def test_serve_and_push_at_once(ingest, start_origin):
    """Without --no-serve the origin serves and pushes: the same playlists at both places."""
    ing = ingest()
    o = start_origin("--push", ing.url, "--test-pattern-size", "640x360", "--part-duration", "0")
    assert http.wait_for_200(ing.url + "stream.m3u8", 15, proc=o.proc) is not None, o.stderr()
    local = m3u8.parse_media(http.get(o.url("/stream.m3u8")).text)
    pushed = media_playlist(ing)
    assert abs(local.media_sequence - pushed.media_sequence) <= 1
    assert http.get(ing.url + "index.m3u8").text == http.get(o.url("/index.m3u8")).text or \
        m3u8.parse_multivariant(http.get(ing.url + "index.m3u8").text).variants[0].uri == "stream.m3u8"
    played = clients.ffmpeg_read(ing.url + "index.m3u8", seconds=3)
    assert played.ok, played


def test_hlsjs_plays_from_the_ingest(ingest, start_origin):
    """hls.js in Chromium, one short play of the pushed stream, with the page and hls.js served by the ingest too."""
    need_chromium()
    hlsjs = need_hlsjs()
    ing = ingest()
    pusher(start_origin, ing, "--part-duration", "0")
    # A viewer joins a running stream: with the 6-segment window full, hls.js starts 3 segments from the live edge;
    # joined on a 2-segment playlist it starts at its beginning, reaches the edge and stalls there.
    wait_for(lambda: len(media_playlist(ing).segments) >= 6, 20, "a full window on the ingest")
    procs.write_player_page(ing.root)
    shutil.copy(hlsjs, os.path.join(ing.root, "hls.mjs"))
    page = f"http://127.0.0.1:{ing.port}"
    res = chromium.chromium_play(procs.player_page_url(page, page + "/hls.mjs", ing.url + "index.m3u8"), 8,
                                 screenshots=False)
    print(chromium.summary(res))
    assert chromium.playback_problems(res, require_screens=False) == []


def test_end_of_input_pushes_the_ended_playlists_and_exits(ingest, start_origin, media):
    """A file without --loop: at its end the ended playlists (EXT-X-ENDLIST) are pushed and the process exits 0 once
    the queue has drained; ffmpeg then reads the whole stream from the ingest."""
    ing = ingest()
    o = start_origin(media["clip.mp4"], "--no-serve", "--push", ing.url, "--part-duration", "0", "--no-realtime", wait=False)
    assert o.proc.wait(timeout=30) == 0, o.stderr()
    assert "hls-origin: end of input; pushed the ended playlists" in o.stderr()
    final = media_playlist(ing)
    assert final.endlist and final.media_sequence == 0 and len(final.segments) == 4, final.raw
    played = clients.ffmpeg_read(ing.url + "index.m3u8", seconds=10)
    assert played.ok, played
