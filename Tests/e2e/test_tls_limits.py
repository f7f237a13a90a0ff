"""The TLS port's `--header-timeout` (issue 25 §2): TCP connections that never start the TLS handshake, TLS
connections that send their first request head a byte at a time or stop half-way, and HTTP/2 connections that send
the preface but never a HEADERS frame are all closed once the header timeout has passed since they opened, as the
plain port closes them (nginx: `ssl_handshake_timeout`, `client_header_timeout`), while an honest client keeps being
answered. Before, all of them were still open 30 s later. And `--max-connections`: one connection more is closed
before its handshake. About 20 s.
"""
import socket
import ssl
import subprocess
import threading
import time

import pytest

from hlsharness import procs, tlscert
from hlsharness.testenv import need

HEADER_TIMEOUT = 2


@pytest.fixture(scope="module")
def tls_origin(origin_bin, tmp_path_factory):
    need("openssl", "curl")
    cert, key = tlscert.self_signed(tmp_path_factory.mktemp("tls-limits"))
    port = procs.free_port()
    proc = subprocess.Popen([origin_bin, "serve", "--port", str(port), "--tls-cert", cert,
                             "--tls-key", key, "--header-timeout", str(HEADER_TIMEOUT),
                             "--test-pattern-size", "320x180", "--quiet"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and honest_get(port)[0] != "200":
        time.sleep(0.2)
    yield port
    procs.stop_process(proc)


def honest_get(port, path="/stream.m3u8"):
    p = subprocess.run(["curl", "-sk", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code} %{time_total}",
                        f"https://127.0.0.1:{port}{path}"], capture_output=True, text=True, timeout=10)
    code, _, seconds = p.stdout.partition(" ")
    return code, float(seconds or 0)


def tls_socket(port, alpn):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols([alpn])
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5), server_hostname="127.0.0.1")


def is_closed(sock):
    """Whether the server closed `sock` (EOF, reset, or a TLS close), without waiting long."""
    sock.settimeout(0.5)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (socket.timeout, TimeoutError):
        return False
    except (ConnectionError, ssl.SSLError, OSError):
        return True


def test_slow_and_silent_tls_clients_are_closed_after_the_header_timeout(tls_origin):
    port = tls_origin
    assert honest_get(port)[0] == "200"
    silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]          # never start the handshake
    half = [tls_socket(port, "http/1.1") for _ in range(10)]                             # half a head, then nothing
    for s in half:
        s.sendall(b"GET /stream.m3u8 HTTP/1.1\r\nHo")
    h2 = [tls_socket(port, "h2") for _ in range(10)]                                     # preface, SETTINGS, no HEADERS
    for s in h2:
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    trickle = [tls_socket(port, "http/1.1") for _ in range(10)]                          # a byte every 0.25 s
    stop = threading.Event()

    def drip():
        head = b"GET /stream.m3u8 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 200
        for i in range(len(head)):
            if stop.wait(0.25):
                return
            for s in trickle:
                try:
                    s.sendall(head[i:i + 1])
                except OSError:
                    pass

    dripper = threading.Thread(target=drip, daemon=True)
    dripper.start()
    opened = time.monotonic()
    # Meanwhile an honest client is answered, quickly.
    answers = []
    while time.monotonic() - opened < HEADER_TIMEOUT + 1.5:
        answers.append(honest_get(port))
        time.sleep(0.2)
    assert all(code == "200" for code, _ in answers), answers
    assert max(seconds for _, seconds in answers) < 2.0, answers
    time.sleep(max(0.0, opened + HEADER_TIMEOUT + 2 - time.monotonic()))
    still_open = {name: sum(not is_closed(s) for s in group)
                  for name, group in (("silent", silent), ("half head", half), ("h2 no headers", h2),
                                      ("trickle", trickle))}
    stop.set()
    dripper.join(timeout=5)
    for group in (silent, half, h2, trickle):
        for s in group:
            s.close()
    assert still_open == {"silent": 0, "half head": 0, "h2 no headers": 0, "trickle": 0}, still_open
    assert honest_get(port)[0] == "200"


def read_response(sock):
    """Status line of one HTTP/1.1 response read whole (by its Content-Length)."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, len(body)
        body += chunk
    return head.split(b"\r\n", 1)[0]


def test_a_prompt_client_keeps_its_connection_past_the_header_timeout(tls_origin):
    """The deadline is for the first head only: a connection whose head arrived in time is answered and stays
    open for its next request after the header timeout (the idle timeout is longer)."""
    port = tls_origin
    s = tls_socket(port, "http/1.1")
    request = b"GET /stream.m3u8 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    s.sendall(request)
    assert read_response(s) == b"HTTP/1.1 200 OK"
    time.sleep(HEADER_TIMEOUT + 1)
    s.sendall(request)
    assert read_response(s) == b"HTTP/1.1 200 OK"
    s.close()


def test_http11_over_tls_answers_every_request_of_a_keep_alive_connection(tls_origin):
    """ALPN http/1.1 runs the HTTP/2 fast path's handler once per connection: after a request it answered, the next
    one on the same connection used to get no answer at all (curl waited out its --max-time)."""
    url = f"https://127.0.0.1:{tls_origin}/stream.m3u8"
    p = subprocess.run(["curl", "-sk", "--http1.1", "--max-time", "5", "-o", "/dev/null", "-o", "/dev/null",
                        "-o", "/dev/null", "-w", "%{http_code} %{num_connects}\n", url, url, url],
                       capture_output=True, text=True, timeout=20)
    assert p.stdout.split("\n")[:3] == ["200 1", "200 0", "200 0"], p.stdout


def test_a_connection_beyond_max_connections_is_closed_before_its_handshake(origin_bin, tmp_path_factory):
    """`--max-connections` on the TLS port as on the plain one: one connection more is refused at once and the others
    are not disturbed; here it is closed before its TLS handshake (a `503` would cost the handshake that refusing it
    saves). Before, the port stopped accepting: the connection waited in the listen queue, its handshake unanswered,
    until a slot freed."""
    cert, key = tlscert.self_signed(tmp_path_factory.mktemp("tls-max-connections"))
    port = procs.free_port()
    proc = subprocess.Popen([origin_bin, "serve", "--port", str(port), "--tls-cert", cert, "--tls-key", key,
                             "--max-connections", "4", "--test-pattern-size", "320x180", "--quiet"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and honest_get(port)[0] != "200":
            time.sleep(0.2)
        time.sleep(0.5)  # curl's connections are closed and counted out
        request = b"GET /stream.m3u8 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        held = [tls_socket(port, "http/1.1") for _ in range(4)]
        for s in held:
            s.sendall(request)
            assert read_response(s) == b"HTTP/1.1 200 OK"
        opened = time.monotonic()
        extra = socket.create_connection(("127.0.0.1", port), timeout=5)
        assert is_closed(extra), "the connection beyond --max-connections is still open"
        refused_after = time.monotonic() - opened
        extra.close()
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            tls_socket(port, "http/1.1")   # a handshake is not even started
        for s in held:
            s.sendall(request)
            assert read_response(s) == b"HTTP/1.1 200 OK"
        held.pop().close()
        time.sleep(0.5)
        assert honest_get(port)[0] == "200"   # a slot freed is taken again
        print(f"\nthe 5th connection closed {refused_after:.2f} s after it opened")
        assert refused_after < 1.0, refused_after
        for s in held:
            s.close()
    finally:
        procs.stop_process(proc)
