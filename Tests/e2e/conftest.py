"""Fixtures for hls-origin's end-to-end tests.

The binary under test is $HLS_ORIGIN_BIN. A test that needs a missing tool (or binary) is skipped when run by
hand, and FAILS when CI=true, so CI can never go green by skipping.
"""
import contextlib
import fcntl
import inspect
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hlsharness import media as media_mod  # noqa: E402
from hlsharness import procs  # noqa: E402

from hlsharness.testenv import IN_CI, missing, need, need_hlsjs  # noqa: E402,F401


# With pytest-xdist (`-n 2 --dist loadgroup`, what scripts/test runs): the modules whose tests play in Chromium or keep
# live encoders running (a browser's dropped frames and a live encode's pace need the machine's CPU), and single tests
# marked `heavy`, run one after another on one worker; every other module runs whole on another worker meanwhile (its
# module-scoped servers started once).
HEAVY_MODULES = {
    "test_audio_languages_play", "test_auth", "test_captions", "test_cenc", "test_codecs_play", "test_dash", "test_deploy", "test_edge",
    "test_embedded_example", "test_encryption", "test_events_play", "test_format_change", "test_harness_selftest",
    "test_ingest", "test_ladder", "test_ladder_selftest", "test_live_file", "test_live_pattern", "test_live_stdin",
    "test_metrics", "test_multistream", "test_operations", "test_push", "test_redundant", "test_reference_selftest",
    "test_single_file", "test_subtitles_play", "test_thumbnails_page", "test_tls", "test_key_server",
}


# Modules (or tests marked `solo`) that need the whole machine: hls.js playing in Chromium with frame-drop and stall
# bounds (1% dropped frames at 30 fps leaves no room for a second worker's load on 2 cores: two parallel runs each
# failed one such test). scripts/test runs them in a phase of their own after the rest (`-m solo`, serial; the
# conftest adds the marker). For a hand-run `pytest -n N` over the whole suite, a solo test takes a file lock
# exclusively; every light module (neither heavy nor solo) holds it shared for its whole run, so a solo test waits
# for the light modules running to end and no new one starts meanwhile (an intent lock in front keeps the solo test
# from being starved). A light module never waits in the middle: its module-scoped live servers would move on (a 404
# for a segment its tests were about to fetch). What runs beside the light modules is the rest of the heavy worker's
# modules (live ladders, DASH, the sandbox).
# A browser module that bounds no frame drops or stalls (its checks are what was decoded, or a picture compared with a
# frame) runs beside the light modules: test_audio_languages_play, test_encryption and test_cenc (which check keys and
# decryption, their playback bound loose), test_captions (cue texts and times).
# test_events_play and test_thumbnails_page bound no frame drops either, but their Chromium tests are solo all the same:
# each waits for the player to reach a moment on its own timeline (hls.js must load an interstitial's asset list before
# the playhead passes the break; the page must show a seek bar over a window that has moved on), and CI at 68e4fa4, on a
# loaded machine, failed both while a light module ran beside them (hls.js loaded the asset list and never started the
# break).
BROWSER_SOLO_MODULES = HEAVY_MODULES - {"test_dash", "test_deploy", "test_ladder_selftest", "test_audio_languages_play",
                                        "test_encryption", "test_captions", "test_cenc", "test_subtitles_play"}
# In those, only the tests that play in Chromium (directly or through a helper of their module) are solo: the others
# (playlist checks, ffmpeg reads, signatures) run beside the light modules, so a module of ten tests does not wait ten
# times for the machine (test_auth's nine waits added four minutes to a run). Whole modules stay solo where every test
# needs the machine.
# test_h2_attacks bounds an honest client's p99 latency (50 ms) while each attack runs: another worker's live encodes
# or browsers on the 2 cores push that tail over the bound (68 ms measured with a ladder being packaged beside it), as
# they would a browser's frame drops; its attacks are paced, so it holds the machine about 45 s.
# test_hostile_http bounds the same p99 on the plain port, and beside the heavy worker it missed it in two of three CI
# runs on 2026-11-28 (149 ms under 100-KB URIs, 199 ms under path traversal): its tests with an honest client
# (`Honest(`) are solo too; the four that bound no latency (13 items: methods, preflights, parser errors, the listing)
# run beside the rest.
SOLO_MODULES = {"test_multistream", "test_edge", "test_h2_attacks"}
# Heavy modules that run as a group of their own (on whichever worker is free) rather than on the heavy worker, to
# balance the two: test_ingest's live publishers are small (360p, x264 veryfast) and most of its 150 s is waiting for
# restarts and reconnects. With it on the heavy worker that worker was busy 584 s and the other 390 s of a 588-s phase
# (E2E_TIMELINE, 2026-11-27). Its Chromium test is solo all the same.
OWN_GROUP_MODULES = {"test_ingest"}
BROWSER_CALLS = ("chromium.chromium_play", "chromium.chromium_abr", "chromium.chromium_native_play",
                 "chromium.Browser(", "glass_to_glass(")
# Modules in which a test is solo when its source (or a function of its module that it calls) uses one of the calls.
SOLO_CALLS = {**{m: BROWSER_CALLS for m in BROWSER_SOLO_MODULES}, "test_hostile_http": ("Honest(",)}


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: runs on the worker of the CPU-bound tests (see HEAVY_MODULES)")
    config.addinivalue_line("markers", "solo: no other worker runs a test meanwhile (see SOLO_MODULES)")


def _module_kind(module):
    name = module.__name__.rsplit(".", 1)[-1]
    return "solo" if name in SOLO_MODULES else "heavy" if name in HEAVY_MODULES else "light"


_solo_helpers = {}


def _calls_solo(item):
    """Whether a test of a SOLO_CALLS module needs the machine: its own source, or a function of its module that it
    calls, uses one of that module's calls."""
    module = item.module
    calls = SOLO_CALLS.get(module.__name__.rsplit(".", 1)[-1])
    if not calls:
        return False
    if module not in _solo_helpers:
        helpers = set()
        for name, f in vars(module).items():
            if inspect.isfunction(f) and not name.startswith("test_") and getattr(f, "__module__", "") == module.__name__:
                try:
                    if any(c in inspect.getsource(f) for c in calls):
                        helpers.add(name)
                except (OSError, TypeError):
                    pass
        _solo_helpers[module] = helpers
    try:
        src = inspect.getsource(item.function)
    except (OSError, TypeError):
        return True
    return any(c in src for c in calls) or any(f"{h}(" in src for h in _solo_helpers[module])


def _is_solo(item):
    return (_module_kind(item.module) == "solo" or item.get_closest_marker("solo") is not None
            or _calls_solo(item))


@contextlib.contextmanager
def _machine_lock(exclusive):
    """The machine's lock: exclusive for a solo test, shared for a light module (its whole run: its module-scoped
    servers must not wait behind a solo test while their live windows move on)."""
    d = os.path.join(procs.REPO, ".cache", "e2e-locks")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "intent"), "w") as intent, open(os.path.join(d, "machine"), "w") as machine:
        if exclusive:
            fcntl.flock(intent, fcntl.LOCK_EX)      # later shared takers wait here, behind this test
            fcntl.flock(machine, fcntl.LOCK_EX)     # the running light modules end first
        else:
            fcntl.flock(intent, fcntl.LOCK_SH)
            fcntl.flock(machine, fcntl.LOCK_SH)
            fcntl.flock(intent, fcntl.LOCK_UN)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(machine, fcntl.LOCK_UN)
                fcntl.flock(intent, fcntl.LOCK_UN)


@pytest.fixture(scope="module", autouse=True)
def _module_share(request):
    """Under pytest-xdist, a light module shares the machine for its whole run (before its servers start). A light
    module with a solo test of its own does not (the test's exclusive lock would wait for its own module's)."""
    if (not os.environ.get("PYTEST_XDIST_WORKER") or _module_kind(request.module) != "light"
            or any(i.module is request.module and _is_solo(i) for i in request.session.items)):
        yield
        return
    with _machine_lock(exclusive=False):
        yield


@pytest.fixture(autouse=True)
def _machine_share(request):
    """Under pytest-xdist, a solo test holds the machine alone (the light modules running end first; no other starts)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not _is_solo(request.node):
        yield
        return
    with _machine_lock(exclusive=True):
        yield


def pytest_runtest_logreport(report):
    """E2E_TIMELINE=FILE: one JSON line per test phase (worker, test, phase, start, stop, outcome), so a run's
    schedule (which worker ran what, who waited for the machine lock) can be read afterwards."""
    path = os.environ.get("E2E_TIMELINE")
    if not path or getattr(report, "node", None) is not None:  # under xdist, the workers write, not the controller
        return
    import json
    with open(path, "a") as f:
        f.write(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "test": report.nodeid,
                            "phase": report.when, "start": report.start, "stop": report.stop,
                            "outcome": report.outcome}) + "\n")


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1]
        heavy = (module in HEAVY_MODULES and module not in OWN_GROUP_MODULES) or item.get_closest_marker("heavy")
        item.add_marker(pytest.mark.xdist_group("heavy" if heavy else module))
        if _is_solo(item) and item.get_closest_marker("solo") is None:
            item.add_marker(pytest.mark.solo)   # so `-m solo` / `-m "not solo"` select them (scripts/test)


@pytest.fixture(scope="session")
def origin_bin():
    b = os.environ.get("HLS_ORIGIN_BIN")
    if not b:
        missing("HLS_ORIGIN_BIN is not set (path to the built hls-origin binary)")
    if not (os.path.isfile(b) and os.access(b, os.X_OK)):
        missing(f"HLS_ORIGIN_BIN={b} is not an executable file")
    return os.path.abspath(b)


@pytest.fixture(scope="session")
def media():
    """name -> path of the generated test inputs (see hlsharness/media.py)."""
    need("ffmpeg", "ffprobe")
    return media_mod.make_all()


@pytest.fixture(scope="session")
def hlsjs():
    return need_hlsjs()


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="e2e-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def start_origin(origin_bin, request):
    """Factory: start_origin(*args, stdin=None, wait=True, timeout=20, subcommand='serve') -> OriginServer.
    Every server started is stopped (SIGINT, then SIGKILL) at teardown; its stderr is printed there so a failing
    test shows it."""
    servers = []

    def start(*args, stdin=None, wait=True, timeout=20.0, subcommand="serve", hlsjs=True):
        args = list(args)
        if hlsjs and subcommand == "serve" and os.path.exists(procs.HLSJS_PATH) and "--hlsjs" not in args:
            args += ["--hlsjs", procs.HLSJS_PATH]
        s = procs.OriginServer(origin_bin, args, stdin=stdin, subcommand=subcommand)
        servers.append(s)
        s.start()
        if wait:
            s.ready_after = s.wait_ready(timeout)
        return s

    yield start
    for s in servers:
        rc = s.stop()
        err = s.stderr()
        print(f"\n--- {' '.join(s.args)} (exit {rc}) stderr tail:\n{err[-2000:]}")
        shutil.rmtree(s.workdir, ignore_errors=True)


def module_origin(origin_bin, *args):
    """For module-scoped fixtures: start a server outside the function-scoped factory."""
    args = list(args)
    if os.path.exists(procs.HLSJS_PATH) and "--hlsjs" not in args:
        args += ["--hlsjs", procs.HLSJS_PATH]
    return procs.OriginServer(origin_bin, args)
