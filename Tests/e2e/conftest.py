"""Fixtures for hls-origin's end-to-end tests.

The binary under test is $HLS_ORIGIN_BIN. A test that needs a missing tool (or binary) is skipped when run by
hand, and FAILS when CI=true, so CI can never go green by skipping.
"""
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hlsharness import media as media_mod  # noqa: E402
from hlsharness import procs  # noqa: E402

from hlsharness.testenv import IN_CI, missing, need, need_hlsjs  # noqa: E402,F401


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
