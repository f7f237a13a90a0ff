"""HTTP/2 over TLS at the frame level (RFC 9113 §4.1), for clients that break the rules on purpose, and an honest
HTTP/2 client (PyPI `h2`) that measures its latency in a process of its own.

`RawH2` writes frames it builds itself (the `h2` state machine refuses to send most attacks) and reads the server's
frames on a thread: GOAWAY (its last stream ID and error code), RST_STREAM, SETTINGS (acknowledged unless told not
to), and when the server closed the connection."""
import socket
import ssl
import struct
import time

import hpack

from .honest import HonestClient

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Frame types and flags (RFC 9113 §6)
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
# Settings (RFC 9113 §6.5.2)
SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_HEADER_LIST_SIZE = 0x3, 0x4, 0x6
# Error codes (RFC 9113 §7)
NO_ERROR, PROTOCOL_ERROR, FLOW_CONTROL_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM = (
    0x0, 0x1, 0x3, 0x7, 0x8, 0x9, 0xb)
ERROR_NAMES = {0x0: "NO_ERROR", 0x1: "PROTOCOL_ERROR", 0x2: "INTERNAL_ERROR", 0x3: "FLOW_CONTROL_ERROR",
               0x4: "SETTINGS_TIMEOUT", 0x5: "STREAM_CLOSED", 0x6: "FRAME_SIZE_ERROR", 0x7: "REFUSED_STREAM",
               0x8: "CANCEL", 0x9: "COMPRESSION_ERROR", 0xa: "CONNECT_ERROR", 0xb: "ENHANCE_YOUR_CALM",
               0xc: "INADEQUATE_SECURITY", 0xd: "HTTP_1_1_REQUIRED"}


def frame(ftype, flags, stream_id, payload=b""):
    """One frame: 24-bit length, type, flags, 31-bit stream ID, payload (RFC 9113 §4.1)."""
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream_id) + payload


def hpack_int(value, prefix_bits, first=0):
    """An HPACK integer with an N-bit prefix (RFC 7541 §5.1); `first`: the bits above the prefix."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = [first | limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def hpack_literal(name, value, index=0):
    """A field line without indexing (RFC 7541 §6.2.2): name by static `index`, or a literal name when 0."""
    out = hpack_int(index, 4)
    if not index:
        out += hpack_int(len(name), 7) + name.encode()
    return out + hpack_int(len(value), 7) + value.encode()


def tls_connect(port, alpn="h2", timeout=5.0):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols([alpn])
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=timeout), server_hostname="127.0.0.1")
    assert s.selected_alpn_protocol() == alpn, s.selected_alpn_protocol()
    return s


class RawH2:
    """A TLS connection speaking raw HTTP/2 frames, on one thread: what the server sent is read (and its SETTINGS
    acknowledged, unless `ack_settings=False`) whenever this client sends or waits, unless `read=False` (a client
    that never reads, until `wait_closed`)."""

    def __init__(self, port, initial_settings=b"", read=True, ack_settings=True):
        self.port = port
        self.sock = tls_connect(port)
        self.reading = read
        self.ack_settings = ack_settings
        self.goaway = None            # (last stream id, error code, debug data)
        self.resets = {}              # stream id -> error code
        self.server_settings = {}
        self.headers_received = set()  # streams the server answered with HEADERS
        self.statuses = {}             # stream id -> the response's :status
        self.decoder = hpack.Decoder()
        self.data_bytes = 0
        self.closed_at = None
        self.error = None
        self._buf = b""
        self.send(PREFACE + frame(SETTINGS, 0, 0, initial_settings))
        if read:  # the server's SETTINGS acknowledged before anything else is sent (no ACK inside a header block)
            self.wait(lambda: self.server_settings, 3)

    def send(self, data):
        """Sends bytes (then reads what arrived); False when the server has closed the connection."""
        try:
            self.sock.settimeout(5.0)
            self.sock.sendall(data)
        except (OSError, ssl.SSLError) as e:
            self.error = e
            self.pump(0.2)
            return False
        if self.reading:
            self.pump(0)
        return self.closed_at is None

    @staticmethod
    def header_block(path="/stream.m3u8", pad=0):
        """A request's header block that leaves the HPACK dynamic table alone (static indexes and literals without
        indexing, RFC 7541 §6.2.2), so the same bytes can be sent again and again."""
        block = b"\x82\x87" + hpack_literal(":path", path, 4) + hpack_literal(":authority", "127.0.0.1", 1)
        return block + (hpack_literal("x-pad", "a" * pad) if pad else b"")   # (0x82 GET, 0x87 https)

    def request(self, stream_id, path="/stream.m3u8", end_stream=True, pad=0):
        return frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream_id, self.header_block(path, pad))

    def pump(self, timeout):
        """Reads and handles whatever the server sent, waiting up to `timeout` for the first bytes."""
        self.reading = True
        if self.closed_at is not None:
            return
        self.sock.settimeout(timeout if timeout > 0 else 0.0)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    self.closed_at = time.monotonic()
                    return
                self._buf += data
                self._frames()
                self.sock.settimeout(0.0)
        except (BlockingIOError, ssl.SSLWantReadError, TimeoutError, socket.timeout):
            return
        except (OSError, ssl.SSLError) as e:
            self.error = e
            self.closed_at = time.monotonic()

    def _frames(self):
        while len(self._buf) >= 9:
            length = int.from_bytes(self._buf[:3], "big")
            if len(self._buf) < 9 + length:
                return
            ftype, flags, sid = self._buf[3], self._buf[4], int.from_bytes(self._buf[5:9], "big") & 0x7FFF_FFFF
            payload, self._buf = self._buf[9:9 + length], self._buf[9 + length:]
            if ftype == GOAWAY:
                last, code = struct.unpack(">II", payload[:8])
                self.goaway = (last & 0x7FFF_FFFF, code, payload[8:])
            elif ftype == RST_STREAM:
                self.resets[sid] = struct.unpack(">I", payload)[0]
            elif ftype == PING and not flags & ACK:
                self._reply(frame(PING, ACK, 0, payload))   # RFC 9113 §6.7 (the server's graceful shutdown asks)
            elif ftype == SETTINGS and not flags & ACK:
                for i in range(0, len(payload), 6):
                    k, v = struct.unpack(">HI", payload[i:i + 6])
                    self.server_settings[k] = v
                if self.ack_settings:
                    self._reply(frame(SETTINGS, ACK, 0))
            elif ftype == HEADERS:
                self.headers_received.add(sid)
                block = payload
                if flags & 0x8:   # PADDED
                    block = block[1:len(block) - block[0]]
                if flags & 0x20:  # PRIORITY
                    block = block[5:]
                if flags & END_HEADERS:
                    fields = dict(self.decoder.decode(block, raw=True))
                    if b":status" in fields:
                        self.statuses[sid] = int(fields[b":status"])
            elif ftype == DATA:
                self.data_bytes += len(payload)

    def _reply(self, data):
        try:
            self.sock.settimeout(5.0)
            self.sock.sendall(data)
        except (OSError, ssl.SSLError):
            pass

    def wait(self, condition, timeout):
        """Reads until `condition()` holds or `timeout` passes; returns it."""
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline and self.closed_at is None:
            self.pump(min(0.05, max(0.0, deadline - time.monotonic())))
        return condition()

    def wait_closed(self, timeout):
        """Whether the server closed the connection within `timeout` (read until then)."""
        return self.wait(lambda: self.closed_at is not None, timeout)

    def goaway_name(self):
        return ERROR_NAMES.get(self.goaway[1], hex(self.goaway[1])) if self.goaway else None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------------------------
# The honest client over HTTP/2 (hlsharness.honest): one connection over TLS, PyPI `h2`.

FETCH = r'''
import socket, ssl
import h2.config, h2.connection, h2.events
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2"])
conn = None
def connect():
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5), server_hostname="127.0.0.1")
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    c.initiate_connection(); c.increment_flow_control_window(1 << 24); s.sendall(c.data_to_send())
    return s, c
def exchange(s, c, p):
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, [(":method", "GET"), (":scheme", "https"), (":path", p),
                         (":authority", f"127.0.0.1:{port}")], end_stream=True)
    s.sendall(c.data_to_send())
    status, body, done = None, bytearray(), False
    while not done:
        data = s.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        for ev in c.receive_data(data):
            if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == sid:
                status = int(dict(ev.headers)[":status"])
            elif isinstance(ev, h2.events.DataReceived):
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                if ev.stream_id == sid:
                    body += ev.data
            elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)) and ev.stream_id == sid:
                done = True
            elif isinstance(ev, h2.events.ConnectionTerminated):
                raise ConnectionError(f"GOAWAY {ev.error_code}")
        out = c.data_to_send()
        if out:
            s.sendall(out)
    return status, bytes(body)
def fetch(p):
    global conn
    t = time.monotonic()
    try:
        if conn is None:
            conn = connect()
        status, body = exchange(*conn, p)
    except Exception as e:
        if conn:
            conn[0].close()
        conn = None
        errors.append(f"{p}: {type(e).__name__}: {e}"); return None
    lat.append((time.monotonic() - t) * 1000)
    if status != 200:
        errors.append(f"{p}: {status}"); return None
    return body
'''


def honest_h2(port, label, path="/stream.m3u8"):
    """`with honest_h2(port, label) as h:` (attack) ... then `h.check(p99_limit_ms)`."""
    return HonestClient(port, label, FETCH, path, name="honest h2 client")
