"""The fast path (`RawFastPathHandler`) against the full path, on the real `hls-origin serve` (test pattern, LL-HLS):
a plain GET/HEAD of a playlist, segment, part or init segment is answered on the event loop from prepared bytes;
the same request with a query the origin ignores (`?x=1`) takes the full path. Both must give the same status,
headers (but `Date`) and bytes. Pipelined requests mixing both paths are answered in order (RFC 9112 §9.3.2: "A
server ... MUST send the corresponding responses in the same order that the requests were received"), and a
request held by the full path (a blocking reload) holds the fast answers behind it. About 15 seconds."""
import re
import socket
import time

import pytest

from hlsharness import http, m3u8, procs


@pytest.fixture(scope="module")
def served(origin_bin):
    with procs.serving(origin_bin, ["--window", "4", "--test-pattern-size", "320x180"], "fast path server") as s:
        for _ in range(100):
            r = http.get(s.url("/stream.m3u8"))
            if r.status == 200 and m3u8.parse_media(r.text).segments:
                break
            time.sleep(0.1)
        yield s


def comparable(r):
    return {k: v for k, v in r.headers.items() if k != "date"}


def test_fast_and_full_paths_answer_alike(served):
    s = served
    pl = m3u8.parse_media(http.get(s.url("/stream.m3u8")).text)
    seg = pl.segments[-1].uri
    part = re.search(r'#EXT-X-PART:[^\n]*URI="([^"]+)"', http.get(s.url("/stream.m3u8")).text).group(1)
    for path in (f"/{seg}", f"/{part}", "/init.mp4"):
        for method in ("GET", "HEAD"):
            fast = http.get(s.url(path), method=method)
            full = http.get(s.url(path + "?x=1"), method=method)
            assert fast.status == full.status == 200, (path, method, fast.status, full.status)
            assert comparable(fast) == comparable(full), (path, method)
            assert fast.body == full.body and (method == "HEAD") == (fast.body == b""), (path, method)
            assert re.match(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$", fast.header("date")), fast.header("date")
    # The playlist changes every part: compare a pair fetched within the same part.
    for _ in range(20):
        fast, full = http.get(s.url("/stream.m3u8")), http.get(s.url("/stream.m3u8?x=1"))
        if fast.body == full.body:
            break
    assert fast.body == full.body and comparable(fast) == comparable(full)
    # Missing objects are the full path's business (404), as are conditional and range requests.
    assert http.get(s.url("/seg999999.m4s")).status == 404
    tag = http.get(s.url(f"/{seg}")).header("etag")
    assert http.get(s.url(f"/{seg}"), headers={"If-None-Match": tag}).status == 304
    assert http.get(s.url(f"/{seg}"), headers={"Range": "bytes=0-9"}).status == 206


def read_responses(sock, count, timeout=10):
    """Reads `count` responses (Content-Length framed) from a socket; returns [(status, headers, body)]."""
    sock.settimeout(timeout)
    data = b""
    out = []
    while len(out) < count:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed after {len(out)} responses"
            data += chunk
        head, data = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v for k, v in (ln.split(": ", 1) for ln in lines[1:])}
        n = int(headers.get("content-length", "0"))
        while len(data) < n:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        body, data = data[:n], data[n:]
        out.append((int(lines[0].split()[1]), headers, body))
    return out


def test_pipelined_requests_are_answered_in_order(served):
    s = served
    pl = m3u8.parse_media(http.get(s.url("/stream.m3u8")).text)
    seg, nxt = pl.segments[-1].uri, pl.segments[-1].seq + 1
    expected_seg = http.get(s.url(f"/{seg}")).body
    req = lambda target: f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()  # noqa: E731
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        t0 = time.monotonic()
        # fast, held by the full path until the next segment is out (blocking reload), fast, full (404), fast
        sock.sendall(req(f"/{seg}") + req(f"/stream.m3u8?_HLS_msn={nxt}") + req("/init.mp4") + req("/nope.m4s")
                     + req(f"/{seg}"))
        got = read_responses(sock, 5)
    assert [g[0] for g in got] == [200, 200, 200, 404, 200], [g[0] for g in got]
    assert got[0][2] == expected_seg and got[4][2] == expected_seg
    assert got[1][1]["content-type"] == "application/vnd.apple.mpegurl"
    assert f"seg{nxt}.m4s" in got[1][2].decode(), "the held reload answered once segment N was out"
    assert got[2][2][4:8] == b"ftyp"
    assert time.monotonic() - t0 < 5


def playlist_state(text):
    """(last segment's sequence number, parts listed after it): grows with every part the origin publishes."""
    pl = m3u8.parse_media(text)
    tail = text.rsplit("#EXTINF", 1)[-1]
    return pl.segments[-1].seq, tail.count("#EXT-X-PART:")


def test_a_connection_reloading_a_playlist_always_gets_the_current_one(served):
    """The fast path keeps a connection's last answer while the presentation has not changed. On one keep-alive
    connection, plain reloads (fast path) alternate with `?x=1` reloads (full path, rendered fresh): over 4 s the
    playlist must never go back (RFC 8216 §6.2.1: a server MUST NOT remove or reorder what it has published; a
    stale copy would show an older state after a newer one) and must follow every part."""
    s = served
    states = []
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        end = time.monotonic() + 4
        i = 0
        while time.monotonic() < end:
            target = "/stream.m3u8" if i % 2 == 0 else "/stream.m3u8?x=1"
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            status, _, body = read_responses(sock, 1)[0]
            assert status == 200
            states.append(playlist_state(body.decode()))
            i += 1
            time.sleep(0.01)
    assert all(a <= b for a, b in zip(states, states[1:])), [(i, a, b) for i, (a, b) in enumerate(zip(states, states[1:])) if a > b][:3]
    assert len(set(states)) >= 8, f"{len(set(states))} states in 4 s of 1/3-s parts"
