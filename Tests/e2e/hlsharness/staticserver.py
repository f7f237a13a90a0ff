"""A static file server for tests that answers single byte ranges (RFC 9110 §14) with 206, as the static hosts a
single-file VOD is made for do (Python's http.server ignores Range). Serves a directory plus in-memory extras."""
import http.server
import os
import re
import threading
from contextlib import contextmanager

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _handler(root, extra, log):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _body(self):
            path = self.path.split("?", 1)[0]
            if path in extra:
                return extra[path]
            full = os.path.realpath(os.path.join(root, path.lstrip("/")))
            if not full.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(full):
                return None
            with open(full, "rb") as f:
                return f.read(), ("application/vnd.apple.mpegurl" if full.endswith(".m3u8")
                                  else "application/dash+xml" if full.endswith(".mpd") else "video/mp4")

        def _send(self, head):
            found = self._body()
            if found is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body, ctype = found
            status, start, end = 200, 0, len(body)
            m = _RANGE.match(self.headers.get("Range", ""))
            if m and (m.group(1) or m.group(2)):
                if m.group(1):
                    start = int(m.group(1))
                    end = min(len(body), int(m.group(2)) + 1) if m.group(2) else len(body)
                else:
                    start = max(0, len(body) - int(m.group(2)))
                status = 206 if start < len(body) and start < end else 416
            log.append((self.command, self.path, self.headers.get("Range"), status))
            self.send_response(status)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", ctype)
            if status == 416:
                self.send_header("Content-Range", f"bytes */{len(body)}")
                body, start, end = b"", 0, 0
            elif status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(body)}")
            self.send_header("Content-Length", str(end - start))
            self.end_headers()
            if not head:
                self.wfile.write(body[start:end])

        def do_GET(self):
            self._send(False)

        def do_HEAD(self):
            self._send(True)

        def do_OPTIONS(self):
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Headers", "Range")
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


@contextmanager
def serving(root, extra=None, log=None):
    """Serve `root` (and `extra`: path -> (bytes, content type)) on 127.0.0.1; yields the base URL. `log` (a list)
    receives (method, path, Range header, status) per answered request."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(root, extra or {}, [] if log is None else log))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
