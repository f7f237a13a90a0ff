"""Deployment files (issue 27 §2) against the real binary and the real checkers: scripts/install into a temporary
prefix (twice: idempotent, the edited config kept) and `systemd-analyze verify` of the unit it installed; the binary
serving the example config under the unit's seccomp filters, rebuilt as systemd 252 builds them (MemoryDenyWriteExecute,
SystemCallFilter=@system-service, RestrictAddressFamilies); `promtool check rules` and `promtool test rules` of the
alerts; every PromQL expression of the Grafana dashboard through promtool, and every metric name it reads exported
by a running origin; `--log-format json`: every stderr line one JSON object, no secret in any. About 30 s.
"""
import base64
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse

import pytest

from hlsharness import http as h
from hlsharness import m3u8, procs, promql
from hlsharness.testenv import missing, need

REPO = procs.REPO
UNIT = os.path.join(REPO, "deploy", "systemd", "hls-origin.service")
CONFIG = os.path.join(REPO, "deploy", "hls-origin", "streams.toml")
DASHBOARD = os.path.join(REPO, "deploy", "grafana", "hls-origin.json")
ALERTS = os.path.join(REPO, "deploy", "prometheus", "alerts.yml")
SANDBOX = os.path.join(REPO, "Tests", "e2e", "hlsharness", "unitsandbox.py")
SYSTEM_PYTHON = "/usr/bin/python3"

SECRET = "deploy-test secret 5f1d"
BASIC = "viewer:pa55-w0rd-77"


def need_seccomp():
    """Debian's python3-seccomp, for the system python (the sandbox runs under it, not under the test's python)."""
    need("systemd-analyze")
    ok = os.path.exists(SYSTEM_PYTHON) and subprocess.run(
        [SYSTEM_PYTHON, "-c", "import seccomp"], capture_output=True).returncode == 0
    if not ok:
        missing("python3-seccomp is not installed for /usr/bin/python3 (scripts/install-deps installs it)")


def install(origin_bin, root, *extra):
    r = subprocess.run([os.path.join(REPO, "scripts", "install"), "--bin", origin_bin, "--prefix", f"{root}/usr",
                        "--sysconfdir", f"{root}/etc", *extra], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stderr


def verify(unit_path):
    return subprocess.run(["systemd-analyze", "verify", unit_path], capture_output=True, text=True, timeout=60)


# MARK: the unit and scripts/install

def test_install_is_idempotent_and_the_installed_unit_verifies(origin_bin, workdir):
    need("systemd-analyze")
    root = os.path.join(workdir, "root")
    dry = install(origin_bin, root, "--dry-run")
    assert "would run: install -D -m 0755" in dry and not os.path.exists(root), dry

    first = install(origin_bin, root)
    unit = f"{root}/etc/systemd/system/hls-origin.service"
    config = f"{root}/etc/hls-origin/streams.toml"
    env = f"{root}/etc/hls-origin/env"
    assert f"installed: {root}/usr/bin/hls-origin" in first and f"installed: {config}" in first, first
    assert os.stat(env).st_mode & 0o777 == 0o600
    text = open(unit).read()
    assert f"ExecStart={root}/usr/bin/hls-origin serve --config {root}/etc/hls-origin/streams.toml" in text
    assert "/usr/local/" not in text and "=/etc/hls-origin" not in text

    with open(config, "a") as f:
        f.write("\n# edited by the operator\n")
    second = install(origin_bin, root)
    assert f"unchanged: {root}/usr/bin/hls-origin" in second and f"unchanged: {unit}" in second, second
    assert f"kept existing: {config}" in second, second
    assert open(config).read().endswith("# edited by the operator\n")

    r = verify(unit)
    assert r.returncode == 0 and "hls-origin.service" not in r.stderr, f"systemd-analyze verify:\n{r.stderr}"
    r = security(unit)
    assert r.returncode == 0, f"exposure over 2.0:\n{r.stdout[-3000:]}"


def security(unit_path):
    """`systemd-analyze security` offline: exit 1 when the unit's exposure is over 2.0 (of 10)."""
    return subprocess.run(["systemd-analyze", "security", "--offline=true", "--threshold=20", unit_path],
                          capture_output=True, text=True, timeout=60)


def test_verify_refuses_a_broken_unit(workdir):
    """The checkers can fail: the unit with its binary missing, without its hardening, with a misspelt directive."""
    need("systemd-analyze")
    text = open(UNIT).read()
    missing_bin = os.path.join(workdir, "hls-origin.service")
    with open(missing_bin, "w") as f:
        f.write(text.replace("/usr/local/bin/hls-origin", os.path.join(workdir, "no-such-binary")))
    r = verify(missing_bin)
    assert r.returncode != 0 and "no-such-binary" in r.stderr, r.stderr

    bare = os.path.join(workdir, "bare", "hls-origin.service")
    os.makedirs(os.path.dirname(bare))
    hardening = re.compile(r"^(Protect|Private|Restrict|NoNew|Lock|Memory|SystemCall|Capability|DynamicUser)")
    with open(bare, "w") as f:
        f.write("".join(l for l in text.replace("/usr/local/bin/hls-origin", "/bin/true").splitlines(True)
                        if not hardening.match(l)))
    r = security(bare)
    assert r.returncode != 0 and "UNSAFE" in r.stdout, r.stdout[-500:]

    misspelt = os.path.join(workdir, "sub", "hls-origin.service")
    os.makedirs(os.path.dirname(misspelt))
    with open(misspelt, "w") as f:
        f.write(text.replace("/usr/local/bin/hls-origin", "/bin/true").replace("ProtectSystem=", "ProtectSytsem="))
    r = verify(misspelt)
    assert "ProtectSytsem" in r.stderr, r.stderr


# MARK: the unit's sandbox, the example config

def sandboxed(origin_bin, config, port):
    return [SYSTEM_PYTHON, SANDBOX, "--", origin_bin, "serve", "--config", config, "--host", "127.0.0.1",
            "--port", str(port), "--log-format", "json", "--log-level", "info", "--quiet"]


def example_config(workdir):
    """deploy/hls-origin/streams.toml with its SRT listener moved from port 9000 to a free one; (path, SRT port)."""
    srt_port = procs.free_port()
    text = open(CONFIG).read()
    assert "srt://0.0.0.0:9000?mode=listener" in text
    path = os.path.join(workdir, "streams.toml")
    with open(path, "w") as f:
        f.write(text.replace("srt://0.0.0.0:9000?", f"srt://127.0.0.1:{srt_port}?"))
    return path, srt_port


def publish_srt(port):
    """ffmpeg publishing a 960x540 H.264/AAC test source over SRT, in real time, for 15 s."""
    return subprocess.Popen(["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re",
                             "-f", "lavfi", "-i", "testsrc=size=960x540:rate=30", "-f", "lavfi", "-i",
                             "sine=frequency=440:sample_rate=48000", "-t", "15", "-c:v", "libx264", "-preset",
                             "ultrafast", "-g", "30", "-c:a", "aac", "-f", "mpegts", f"srt://127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_the_sandbox_bites(workdir):
    """The filters refuse what they are for: a W+X mapping, a netlink socket, a system call outside the group."""
    need_seccomp()
    probes = {
        "mdwe": "import mmap; mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)",
        "families": "import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)",
        "syscalls": "import os; os.chroot('/')",
    }
    for only, code in probes.items():
        free = subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, text=True, cwd=workdir)
        jailed = subprocess.run([SYSTEM_PYTHON, SANDBOX, "--only", only, "--", SYSTEM_PYTHON, "-c", code],
                                capture_output=True, text=True, cwd=workdir)
        assert jailed.returncode != 0 and re.search(r"Operation not permitted|Address family not supported",
                                                    jailed.stderr), (only, jailed.stderr)
        if only != "syscalls" or os.geteuid() == 0:
            assert free.returncode == 0, (only, free.stderr)


def test_serves_the_example_config_under_the_units_filters(origin_bin, workdir):
    """The test pattern (libx264) and, from an SRT publisher, the ladder (H.264 decode, swscale, libx264) under the
    filters: nothing of it needs memory both writable and executable, nor a system call outside @system-service."""
    need_seccomp()
    need("ffmpeg")
    config, srt_port = example_config(workdir)
    port = procs.free_port()
    err_path = os.path.join(workdir, "stderr")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(sandboxed(origin_bin, config, port), stdout=subprocess.DEVNULL, stderr=err,
                                cwd=workdir)
    base = f"http://127.0.0.1:{port}"
    publisher = None
    try:
        time.sleep(0.5)
        publisher = publish_srt(srt_port)
        assert h.wait_for_200(base + "/clock/stream.m3u8", 25, proc=proc) is not None, open(err_path).read()[-3000:]
        media = h.get(base + "/clock/stream.m3u8")
        pl = m3u8.parse_media(media.text)
        seg = h.get(h.join(media.url, pl.segments[-1].uri))
        assert seg.status == 200 and len(seg.body) > 1000
        parts = re.findall(r'#EXT-X-PART:[^\n]*URI="([^"]+)"', media.text)
        assert parts and h.get(h.join(media.url, parts[-1])).status == 200
        streams = json.loads(h.get(base + "/streams.json").text)
        names = {s["name"] for s in (streams["streams"] if isinstance(streams, dict) else streams)}
        assert names == {"clock", "cam1"}, streams
        assert h.get(base + "/metrics").status == 200
        status = open(f"/proc/{proc.pid}/status").read()
        # The filters are on the origin itself (exec'd by the sandbox: same pid): mdwe, families, syscalls.
        assert re.search(r"^NoNewPrivs:\s+1$", status, re.M) and re.search(r"^Seccomp:\s+2$", status, re.M), status
        assert re.search(r"^Seccomp_filters:\s+3$", status, re.M), status
        for name in ("480p", "360p"):  # scaled and encoded from the published 540p
            assert h.wait_for_200(f"{base}/cam1/{name}.m3u8", 20, proc=proc) is not None, open(err_path).read()[-3000:]
            rung = h.get(f"{base}/cam1/{name}.m3u8")
            seg = h.get(h.join(rung.url, m3u8.parse_media(rung.text).segments[-1].uri))
            assert seg.status == 200 and len(seg.body) > 1000
    finally:
        procs.stop_process(publisher)
        rc = procs.stop_process(proc)
    stderr = open(err_path).read()
    assert rc == 0, stderr[-3000:]
    lines = json_lines(stderr)
    messages = [l["message"] for l in lines]
    assert any(m.startswith(f"serving 2 streams at http://127.0.0.1:{port}/") for m in messages), messages
    assert "stopped" in messages, messages
    # The per-stream lines carry their stream ("video: h264 960x540 -> ladder source, 480p, 360p").
    assert any(l.get("stream") == "cam1" and "ladder" in l["message"] for l in lines), messages
    # libsrt's own lines (the listener closing) come through the log handler as JSON too.
    srt = [l for l in lines if l.get("source") == "libsrt"]
    assert all(l["level"] in ("warning", "notice", "info", "debug") for l in srt), srt


# MARK: alerts

def test_alert_rules_check_and_their_unit_tests_pass():
    need("promtool")
    r = subprocess.run(["promtool", "check", "rules", ALERTS], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["promtool", "test", "rules", "alerts_test.yml"], capture_output=True, text=True, timeout=60,
                       cwd=os.path.dirname(ALERTS))
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


# MARK: one origin with --log-format json, signed URLs, Bearer, Basic, and every kind of request

def sign(origin_bin):
    env = dict(os.environ, HLS_ORIGIN_AUTH_TOKEN=SECRET)
    r = subprocess.run([origin_bin, "sign", "--expires", "1h", "--prefix", "/", "/index.m3u8"], capture_output=True,
                       text=True, timeout=20, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().split("?", 1)[1]


def post(url, body):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    conn.request("POST", u.path + "?" + u.query, body=body, headers={"Content-Type": "text/plain"})
    status = conn.getresponse().status
    conn.close()
    return status


def exercise(s, query):
    """Playlists, a segment, a part, a blocking reload, a QoE beacon, a 404, a 403, Basic and Bearer requests."""
    base = s.base_url
    assert h.get(f"{base}/index.m3u8?{query}").status == 200
    media = h.get(f"{base}/stream.m3u8?{query}")
    assert media.status == 200, media.text
    pl = m3u8.parse_media(media.text)
    assert h.get(h.join(media.url, pl.segments[-1].uri)).status == 200
    parts = re.findall(r'#EXT-X-PART:[^\n]*URI="([^"]+)"', media.text)
    assert h.get(h.join(media.url, parts[-1])).status == 200
    # The part after the last one listed (the preload hint's): not out yet, so the request is held.
    msn = pl.media_sequence + len(pl.segments)
    listed = media.text.rsplit("\n" + pl.segments[-1].uri + "\n", 1)[1].count("#EXT-X-PART:")
    assert h.get(f"{base}/stream.m3u8?{query}&_HLS_msn={msn}&_HLS_part={listed}", timeout=10).status == 200
    assert post(f"{base}/qoe?{query}", json.dumps({"startup": 0.6, "latency": 1.3, "stalls": 1, "stalled": 0.5,
                                                  "switches": 0})) == 204
    assert h.get(f"{base}/seg999999.m4s?{query}").status == 404
    assert h.get(f"{base}/index.m3u8").status in (401, 403)
    basic = "Basic " + base64.b64encode(BASIC.encode()).decode()
    assert h.get(f"{base}/index.m3u8", headers={"Authorization": basic}).status == 200


@pytest.fixture(scope="module")
def json_run(origin_bin):
    """Runs the origin once (debug level, so every request is logged), scrapes it twice, stops it."""
    env = dict(os.environ, HLS_ORIGIN_AUTH_TOKEN=SECRET, HLS_ORIGIN_AUTH_BASIC=BASIC)
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "640x360", "--log-format", "json",
                                        "--log-level", "debug"], env=env)
    s.start()
    query = sign(origin_bin)
    try:
        if h.wait_for_200(s.url(f"/stream.m3u8?{query}"), 20, proc=s.proc) is None:
            raise RuntimeError(f"no playlist: {s.stderr()[-3000:]}")
        exercise(s, query)
        bearer = {"Authorization": f"Bearer {SECRET}"}
        first = h.get(s.url("/metrics"), headers=bearer)
        time.sleep(1.2)
        second = h.get(s.url("/metrics"), headers=bearer)
        assert first.status == second.status == 200, (first.status, second.text[:300])
    finally:
        rc = s.stop()
    stderr = s.stderr()
    shutil.rmtree(s.workdir, ignore_errors=True)
    return {"rc": rc, "stderr": stderr, "metrics": second.text, "query": query}


def json_lines(stderr):
    """Every line of stderr as a JSON object with `time` (RFC 3339 UTC, ms) and `level`."""
    lines = []
    for line in stderr.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}")
        assert isinstance(obj, dict), line
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", obj.get("time", "")), line
        assert obj.get("level") in ("trace", "debug", "info", "notice", "warning", "error", "critical"), line
        assert isinstance(obj.get("message"), str), line
        lines.append(obj)
    assert lines, "no stderr at all"
    return lines


def test_json_log_lines(json_run):
    assert json_run["rc"] == 0, json_run["stderr"][-2000:]
    lines = json_lines(json_run["stderr"])
    messages = [l["message"] for l in lines]
    assert any(m.startswith("serving http://127.0.0.1:") for m in messages), messages
    assert messages[-1] == "stopped", messages[-5:]
    requests = [l for l in lines if l["message"] == "request"]
    assert {"method", "path", "query", "status", "remote"} <= set(requests[0]), requests[0]
    assert any(r["path"] == "/seg999999.m4s" and r["status"] == "404" for r in requests), requests


def test_no_secret_in_the_log(json_run):
    stderr = json_run["stderr"]
    signature = urllib.parse.parse_qs(json_run["query"])["hls_sig"][0]
    basic64 = base64.b64encode(BASIC.encode()).decode()
    for secret in (SECRET, BASIC, BASIC.split(":")[1], basic64, signature):
        assert secret not in stderr, f"{secret!r} is in the log"
    assert "hls_sig=(redacted)" in stderr  # the signed requests were logged, without their signature


# MARK: the dashboard

def test_dashboard_reads_only_exported_metrics(json_run):
    dashboard = json.load(open(DASHBOARD))
    exprs = promql.dashboard_expressions(dashboard)
    assert len(exprs) >= 20
    families = promql.exported_families(json_run["metrics"])
    assert promql.unknown_names(exprs, families) == {}
    read = set().union(*(promql.metric_names(e) for e in exprs))
    assert len(read) >= 15 and all(n.startswith("hls_origin_") for n in read), read


def test_name_check_catches_a_made_up_metric(json_run):
    dashboard = json.load(open(DASHBOARD))
    dashboard["panels"][-1]["targets"][0]["expr"] = 'sum by (stream) (rate(hls_origin_segmnets_published_total[5m]))'
    families = promql.exported_families(json_run["metrics"])
    unknown = promql.unknown_names(promql.dashboard_expressions(dashboard), families)
    assert list(unknown) == ["hls_origin_segmnets_published_total"], unknown


def test_dashboard_shape_and_promql_syntax(workdir):
    need("promtool")
    dashboard = json.load(open(DASHBOARD))
    assert 36 <= dashboard["schemaVersion"] <= 41
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_PROMETHEUS"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["stream"]["definition"].startswith("label_values(")
    exprs = promql.dashboard_expressions(dashboard)
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": promql.concrete(e)} for i, e in enumerate(exprs)]}]}
    good = os.path.join(workdir, "dashboard_rules.yml")
    with open(good, "w") as f:
        json.dump(rules, f)  # JSON is YAML
    r = subprocess.run(["promtool", "check", "rules", good], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    # The same check refuses a broken expression.
    rules["groups"][0]["rules"].append({"record": "dashboard:broken", "expr": "sum by (stream (rate(x[5m]))"})
    bad = os.path.join(workdir, "broken_rules.yml")
    with open(bad, "w") as f:
        json.dump(rules, f)
    r = subprocess.run(["promtool", "check", "rules", bad], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0, r.stdout
