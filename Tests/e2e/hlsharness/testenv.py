"""Dependency gates for tests: skip outside CI, fail with CI=true."""
import os
import shutil

import pytest

from . import procs

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what):
    """Skip outside CI, fail in CI."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: a missing dependency is a failure; run scripts/install-deps)", pytrace=False)
    pytest.skip(what)


def need(*tools):
    for t in tools:
        if t == "nginx":
            if procs.nginx_binary() is None:
                missing("nginx is not installed")
        elif shutil.which(t) is None:
            missing(f"{t} is not installed")


def need_hlsjs():
    if not os.path.exists(procs.HLSJS_PATH):
        missing(f"{procs.HLSJS_PATH} missing (scripts/install-deps fetches it)")
    return procs.HLSJS_PATH


def need_python(module):
    try:
        __import__(module)
    except ImportError:
        missing(f"python module {module} missing (pip install -r Tests/e2e/requirements.txt)")


def need_chromium():
    need("chromium")
    need_python("websocket")
    return need_hlsjs()
