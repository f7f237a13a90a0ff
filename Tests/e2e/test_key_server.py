"""`--key-server` (issue 23 §2; docs/encryption.md): cbcs/cenc keys fetched from a CPIX 2.3 key server over HTTPS, one
per key period, against the real binary and a key server written here (http.server over TLS with a self-signed
certificate the origin trusts through --key-server-ca), which hands out a new random key for every period.

- `package --key-period`: the server is asked for each period (contentId, KIDs, ContentKeyPeriod indices, usage rules,
  the --key-server-header); every segment names its period's KID (seig) and an independent decrypter
  (hlsharness/cencdecrypt.py) gives back the clear package's samples with that period's key — and not with a
  neighbouring period's key (the check can fail).
- Without key periods, over plain http://: one key, a warning that keys travel in the clear, the answer's DRM systems.
- Refusals at start, one line naming the URL: the server down, a 403.
- A live `serve` whose key server goes away keeps serving (the playlist advances) with the last key, one warning;
  when the server is back, one line and the next periods have their own keys again.
About 20 s.
"""
import base64
import http.server
import os
import re
import socket
import ssl
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
import hashlib

import pytest

from hlsharness import cpixseal
from hlsharness import cencdecrypt as cd
from hlsharness import http as h
from hlsharness import procs
from hlsharness import tlscert

NS = {"cpix": "urn:dashif:org:cpix", "pskc": "urn:ietf:params:xml:ns:keyprov:pskc", "ds": "http://www.w3.org/2000/09/xmldsig#"}
WIDEVINE = "edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"
TOKEN = "Bearer s3cret-token"


def uuid(b):
    x = b.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def kid_for(content_id, n):
    """docs/encryption.md: SHA-256("hls-origin key-server kid " + contentId + 0x00 + n as 8 big-endian bytes)[:16]."""
    return hashlib.sha256(b"hls-origin key-server kid " + content_id.encode() + b"\0" + n.to_bytes(8, "big")).digest()[:16]


class KeyServer:
    """A CPIX key server: POST a CPIX request, get each requested ContentKey back with a random key (the same key
    for a KID asked again), and a Widevine DRMSystem per KID. `status` other than 200 refuses."""

    def __init__(self, directory, port=0, cert=None, tls=True):
        self.cert, self.keyfile = cert or tlscert.self_signed(directory)
        self.tls = tls
        self.keys = {}          # kid bytes -> key bytes
        self.requests = []      # (headers, contentId, [(index, kid)], the raw document)
        self.status = 200
        self.sealed_for = []    # the certificates (DER) the keys were encrypted for
        self.usage = {}         # kid bytes -> (intendedTrackType, [(filter element, attributes)]) of its usage rule
        self.port = port
        self.lock = threading.Lock()

    def start(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                root = ET.fromstring(body)      # the request must be well-formed XML
                kids = [bytes.fromhex(k.get("kid").replace("-", "")) for k in root.findall("cpix:ContentKeyList/cpix:ContentKey", NS)]
                periods = {p.get("id"): int(p.get("index")) for p in root.findall("cpix:ContentKeyPeriodList/cpix:ContentKeyPeriod", NS)}
                rules = {}
                for r in root.findall("cpix:ContentKeyUsageRuleList/cpix:ContentKeyUsageRule", NS):
                    kid = bytes.fromhex(r.get("kid").replace("-", ""))
                    period = r.find("cpix:KeyPeriodFilter", NS)
                    rules[kid] = periods[period.get("periodId")] if period is not None else None
                    filters = [(f.tag.split("}")[1], dict(f.attrib)) for f in r if not f.tag.endswith("KeyPeriodFilter")]
                    server.usage[kid] = (r.get("intendedTrackType"), filters)
                with server.lock:
                    server.requests.append((dict(self.headers), root.get("contentId"), [(rules.get(k), k) for k in kids], body))
                    if server.status != 200:
                        self.send_error(server.status)
                        return
                    scheme = root.find("cpix:ContentKeyList/cpix:ContentKey", NS).get("commonEncryptionScheme")
                    scheme_attr = f' commonEncryptionScheme="{scheme}"' if scheme else ""
                    # A request naming a recipient (CPIX 2.3 §5.3.4: its X.509 certificate in DeliveryDataList) gets
                    # its keys encrypted for that certificate's public key.
                    cert = root.find("cpix:DeliveryDataList/cpix:DeliveryData/cpix:DeliveryKey/ds:X509Data/ds:X509Certificate", NS)
                    sealer = None
                    if cert is not None:
                        from Crypto.PublicKey import RSA
                        der = base64.b64decode(cert.text)
                        sealer = cpixseal.Sealer(RSA.import_key(der), der)
                        server.sealed_for.append(der)
                    out = ['<cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" '
                           f'{cpixseal.NAMESPACES} contentId="{root.get("contentId")}" version="2.3">',
                           sealer.delivery_data_list() if sealer else "", '<cpix:ContentKeyList>']
                    for k in kids:
                        key = server.keys.setdefault(k, os.urandom(16))
                        secret = (sealer.secret(key) if sealer
                                  else f'<pskc:PlainValue>{base64.b64encode(key).decode()}</pskc:PlainValue>')
                        out.append(f'<cpix:ContentKey kid="{uuid(k)}"{scheme_attr}><cpix:Data><pskc:Secret>'
                                   f'{secret}</pskc:Secret></cpix:Data></cpix:ContentKey>')
                    out.append("</cpix:ContentKeyList><cpix:DRMSystemList>")
                    out += [f'<cpix:DRMSystem kid="{uuid(k)}" systemId="{WIDEVINE}"/>' for k in kids]
                    out.append("</cpix:DRMSystemList></cpix:CPIX>")
                data = "".join(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.cert, self.keyfile)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/cpix"

    def args(self):
        return ["--key-server", self.url, "--key-server-ca", self.cert]


@pytest.fixture
def key_server(tmp_path):
    s = KeyServer(tmp_path).start()
    yield s
    s.stop()


def run_package(origin_bin, src, out, *args):
    p = subprocess.run([origin_bin, "package", src, "-o", out, *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
    return p.returncode, p.stderr.decode("utf-8", errors="replace")


def segment_names(d):
    return sorted((n for n in os.listdir(d) if re.match(r"seg\d+\.m4s$", n)), key=lambda n: int(n[3:-4]))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def clear_and_sealed(origin_bin, media, tmp_path, *encryption):
    """`package` of the VOD clip in 2-s segments, clear (DIR/clear) and with `encryption` (DIR/movie: the key
    server's contentId); returns both directories and the encrypted run's stderr."""
    clear, out = str(tmp_path / "clear"), str(tmp_path / "movie")
    rc, err = run_package(origin_bin, media["vod.mp4"], clear, "--segment-duration", "2")
    assert rc == 0, err
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--segment-duration", "2", *encryption)
    assert rc == 0, err
    return clear, out, err


def test_package_encrypts_each_period_with_the_servers_key(origin_bin, media, key_server, tmp_path):
    clear, out, err = clear_and_sealed(origin_bin, media, tmp_path, "--encrypt", "cbcs", "--key-period", "2s",
                                       *key_server.args(), "--key-server-header", f"Authorization: {TOKEN}")
    # What was asked: contentId the output's name, consecutive periods, the KIDs the docs define, the header.
    assert key_server.requests
    asked = {}
    for headers, content_id, periods, _ in key_server.requests:
        assert content_id == "movie" and headers.get("Authorization") == TOKEN
        assert headers.get("X-Speke-Version") == "2.0"   # SPEKE v2's HTTP requirements
        for n, kid in periods:
            assert kid == kid_for("movie", n), (n, kid.hex())
            asked[n] = kid
    assert sorted(asked)[:2] == [0, 1] and sorted(asked) == list(range(len(asked))), sorted(asked)
    # Every segment (2 s, one period each) names its period's KID and decrypts with that period's key only.
    names = segment_names(out)
    assert names == segment_names(clear) and len(names) == 3, names
    init = read(os.path.join(out, "init.mp4"))
    prot = cd.read_protection(init)
    assert {p["kid"] for p in prot.values()} == {kid_for("movie", 0)}
    by_kid = dict(key_server.keys)
    for i, n in enumerate(names):
        sealed, expected = read(os.path.join(out, n)), cd.clear_samples(read(os.path.join(clear, n)))
        _, samples, stats = cd.decrypt_segment(sealed, prot, by_kid)
        period = int(n[3:-4]) - int(names[0][3:-4])
        assert set(stats["kids"]) == {kid_for("movie", period)}, (n, period)
        assert stats["protected_bytes"] > 0
        assert samples == expected, f"{n}: the decrypted samples are not the clear ones"
        # The check can fail: the neighbouring period's key under this KID gives other samples.
        other = key_server.keys[kid_for("movie", period + 1 if i == 0 else period - 1)]
        assert cd.decrypt_segment(sealed, prot, {kid_for("movie", period): other})[1] != expected
    # Three different keys, and none of them in what the origin said; the token neither.
    assert len({by_kid[kid_for("movie", p)] for p in range(3)}) == 3
    for key in key_server.keys.values():
        assert key.hex() not in err.lower() and base64.b64encode(key).decode() not in err
    assert "s3cret" not in err


def kid_for_track(content_id, label, n):
    """docs/encryption.md: SHA-256("hls-origin key-server kid " + contentId + 0x00 + label + 0x00 + n)[:16]."""
    return hashlib.sha256(b"hls-origin key-server kid " + content_id.encode() + b"\0" + label.encode() + b"\0"
                          + n.to_bytes(8, "big")).digest()[:16]


def test_per_track_keys_from_the_key_server(origin_bin, key_server, tmp_path):
    """--track-keys sd,hd,audio with --key-period: the request asks a key per track type and period with SPEKE v2's
    usage rules (VideoFilter by pixels, AudioFilter, KeyPeriodFilter); `package --ladder source,360` of a 1280x720
    clip encrypts the 720p source with the HD keys, the 360p rung with the SD keys and the audio with the AUDIO keys,
    each segment with its period's: every segment names that KID and decrypts with the server's key for it (to the
    clear package's samples for the copied renditions), not with another track type's."""
    src = str(tmp_path / "hd.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=48000", "-ac", "2", "-t", "4", "-c:v", "libx264", "-preset",
                    "ultrafast", "-g", "50", "-c:a", "aac", "-shortest", src], check=True, timeout=60)
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,width,height,channels", "-of",
                            "csv=p=0", src], capture_output=True, text=True, check=True).stdout.split()
    assert sorted(probe) == ["audio,2", "video,1280,720"], probe      # the fixture is what it says
    clear, out = str(tmp_path / "clear"), str(tmp_path / "movie")
    rc, err = run_package(origin_bin, src, clear, "--ladder", "source,360", "--segment-duration", "2")
    assert rc == 0, err
    rc, err = run_package(origin_bin, src, out, "--ladder", "source,360", "--segment-duration", "2", "--encrypt", "cbcs",
                          "--key-period", "2s", "--track-keys", "sd,hd,audio", *key_server.args())
    assert rc == 0, err
    want_rules = {"SD": [("VideoFilter", {"maxPixels": "442368"})],
                  "HD": [("VideoFilter", {"minPixels": "442369", "maxPixels": "2073600"})],
                  "AUDIO": [("AudioFilter", {})]}
    for _, content_id, periods, _ in key_server.requests:
        assert content_id == "movie"
        for n, kid in periods:
            label, filters = key_server.usage[kid]
            assert filters == want_rules[label] and kid == kid_for_track("movie", label, n), (label, n)
    keys = dict(key_server.keys)
    for rendition, label in (("source", "HD"), ("360p", "SD"), ("audio", "AUDIO")):
        prot = cd.read_protection(read(os.path.join(out, rendition, "init.mp4")))
        assert {p["kid"] for p in prot.values()} == {kid_for_track("movie", label, 0)}, rendition
        names = segment_names(os.path.join(out, rendition))
        assert len(names) == 2, names
        for period, n in enumerate(names):
            sealed = read(os.path.join(out, rendition, n))
            _, samples, stats = cd.decrypt_segment(sealed, prot, keys)
            kid = kid_for_track("movie", label, period)
            assert set(stats["kids"]) == {kid} and stats["protected_bytes"] > 0, (rendition, n)
            if rendition != "360p":
                assert samples == cd.clear_samples(read(os.path.join(clear, rendition, n))), (rendition, n)
            other = keys[kid_for_track("movie", "SD" if label != "SD" else "HD", period)]
            assert cd.decrypt_segment(sealed, prot, {kid: other})[1] != samples, (rendition, n)
    for key in keys.values():
        assert key.hex() not in err.lower()


def test_keys_encrypted_for_the_origins_certificate(origin_bin, media, key_server, tmp_path):
    """--cpix-cert and --cpix-key: the request names the origin's certificate in its DeliveryDataList (CPIX 2.3
    §5.3.4), the server (here, pycryptodome) encrypts each period's key for it, and the origin opens them: every
    segment decrypts with its period's server key to the clear samples. A key that is not the certificate's is one
    line."""
    os.makedirs(tmp_path / "recipient")
    cert, key = tlscert.self_signed(tmp_path / "recipient")
    clear, out, err = clear_and_sealed(origin_bin, media, tmp_path, "--encrypt", "cbcs", "--key-period", "2s",
                                       *key_server.args(), "--cpix-cert", cert, "--cpix-key", key)
    with open(cert) as f:
        der = base64.b64decode("".join(ln for ln in f.read().splitlines() if "CERTIFICATE" not in ln))
    assert key_server.sealed_for and set(key_server.sealed_for) == {der}
    prot = cd.read_protection(read(os.path.join(out, "init.mp4")))
    names = segment_names(out)
    assert len(names) == 3
    for n in names:
        _, samples, stats = cd.decrypt_segment(read(os.path.join(out, n)), prot, dict(key_server.keys))
        assert stats["protected_bytes"] > 0 and samples == cd.clear_samples(read(os.path.join(clear, n))), n
    for k in key_server.keys.values():
        assert k.hex() not in err.lower()
    os.makedirs(tmp_path / "other")
    _, other_key = tlscert.self_signed(tmp_path / "other")
    rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "wrong"), "--encrypt", "cbcs",
                          *key_server.args(), "--cpix-cert", cert, "--cpix-key", other_key)
    lines = [ln for ln in err.splitlines() if ln.strip() and "Usage" not in ln and "help" not in ln]
    assert rc != 0 and "encrypted for another recipient" in err and len(lines) == 1, err


def test_package_aes128_takes_each_periods_key_from_the_server(origin_bin, media, key_server, tmp_path):
    """`--encrypt aes-128 --key-server`: the request names no CENC scheme; each segment's EXT-X-KEY names its period's
    key file, which holds the key the server gave for that period's KID, and AES-128-CBC with it and the stated IV
    (pycryptodome, RFC 8216 §5.2) gives back the clear segment byte for byte."""
    from Crypto.Cipher import AES
    from Crypto.Util.Padding import unpad
    clear, out, err = clear_and_sealed(origin_bin, media, tmp_path, "--encrypt", "aes-128", "--key-period", "2s",
                                       *key_server.args())
    assert key_server.requests and all(b"commonEncryptionScheme" not in body for *_, body in key_server.requests)
    text = open(os.path.join(out, "stream.m3u8")).read()
    listed = re.findall(r'#EXT-X-KEY:METHOD=AES-128,URI="keys/(\d+)\.key",IV=0x([0-9A-Fa-f]{32})\n(?:#[^\n]*\n)*?(seg\d+\.m4s)', text)
    names = segment_names(out)
    assert [n for *_, n in listed] == names == segment_names(clear) and len(names) == 3, (listed, names)
    first = int(names[0][3:-4])
    for period, iv, name in listed:
        n = int(name[3:-4]) - first
        assert int(period) == n, (period, name)
        key = read(os.path.join(out, "keys", f"{period}.key"))
        assert key == key_server.keys[kid_for("movie", n)], name
        plain = unpad(AES.new(key, AES.MODE_CBC, bytes.fromhex(iv)).decrypt(read(os.path.join(out, name))), 16)
        assert plain == read(os.path.join(clear, name)), name
        # The check can fail: another period's key does not give the clear bytes.
        other = key_server.keys[kid_for("movie", (n + 1) % 3)]
        try:
            wrong = unpad(AES.new(other, AES.MODE_CBC, bytes.fromhex(iv)).decrypt(read(os.path.join(out, name))), 16)
        except ValueError:
            wrong = None
        assert wrong != read(os.path.join(clear, name))
    for key in key_server.keys.values():
        assert key.hex() not in err.lower()


def test_one_key_over_plain_http_with_a_warning(origin_bin, media, tmp_path):
    """Without --key-period: one key (period 0's KID, no period lists asked); http:// works and says the keys travel
    in the clear; --drm not given: the answer's DRMSystemList (Widevine) is signalled."""
    ks = KeyServer(tmp_path, tls=False).start()
    try:
        clear, out = str(tmp_path / "clear"), str(tmp_path / "one")
        assert run_package(origin_bin, media["vod.mp4"], clear)[0] == 0
        rc, err = run_package(origin_bin, media["vod.mp4"], out, "--encrypt", "cenc", "--key-server", ks.url)
        assert rc == 0, err
        assert "travel in the clear" in err
        assert [p for _, _, periods, _ in ks.requests for p in periods] == [(None, kid_for("one", 0))]
        assert b"ContentKeyPeriodList" not in ks.requests[0][3]
        prot = cd.read_protection(read(os.path.join(out, "init.mp4")))
        assert {p["kid"] for p in prot.values()} == {kid_for("one", 0)}
        assert bytes.fromhex(WIDEVINE.replace("-", "")) in read(os.path.join(out, "init.mp4"))
        key = ks.keys[kid_for("one", 0)]
        for n in segment_names(out):
            expected = cd.clear_samples(read(os.path.join(clear, n)))
            assert cd.decrypt_segment(read(os.path.join(out, n)), prot, key)[1] == expected, n
            assert cd.decrypt_segment(read(os.path.join(out, n)), prot, os.urandom(16))[1] != expected, n
        assert key.hex() not in err.lower()
    finally:
        ks.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_refusals_at_start_are_one_line(origin_bin, media, key_server, tmp_path):
    down = f"https://127.0.0.1:{free_port()}/cpix"
    key_server.status = 403
    for args, says in [
        (["--key-server", down, "--key-server-ca", key_server.cert], f"--key-server {down}: "),
        (key_server.args(), f"--key-server {key_server.url}: answered 403"),
        (key_server.args() + ["--key", "00112233445566778899aabbccddeeff"], "--key-server and --key both give the key"),
        (["--encrypt", "aes-128", "--key-server", down], f"--key-server {down}: "),
        (["--encrypt", "aes-128", *key_server.args()], f"--key-server {key_server.url}: answered 403"),
    ]:
        if "--encrypt" not in args:
            args = ["--encrypt", "cenc", *args]
        t = time.monotonic()
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "out"), *args)
        lines = [ln for ln in err.splitlines() if ln.strip() and "Usage" not in ln and "help" not in ln]
        assert rc > 0, (args, err)
        assert says in err, (args, err)
        assert len(lines) == 1, (args, err)
        assert time.monotonic() - t < 15


def kid_of(body):
    for moof in [b for b in cd.boxes(body) if b.type == b"moof"]:
        for traf in cd.boxes(body, moof.body, moof.end):
            if traf.type == b"traf":
                g = cd.seig(body, traf)
                if g:
                    return bytes(g["kid"])
    return None


def h264_decodes(init, samples):
    """(ok, stderr) of FFmpeg decoding the video samples (track 1) as an H.264 elementary stream: the avcC's SPS and
    PPS, then each sample's 4-byte-length NAL units as Annex B. A wrongly decrypted slice is a decoding error."""
    at = init.index(b"avcC") + 4
    out, p = b"", at + 5
    for count_at in range(2):
        n = init[p] & (0x1F if count_at == 0 else 0xFF)
        p += 1
        for _ in range(n):
            size = int.from_bytes(init[p:p + 2], "big")
            out += b"\0\0\0\1" + init[p + 2:p + 2 + size]
            p += 2 + size
    for track, sample in samples:
        q = 0
        while track == 1 and q + 4 <= len(sample):
            size = int.from_bytes(sample[q:q + 4], "big")
            out += b"\0\0\0\1" + sample[q + 4:q + 4 + size]
            q += 4 + size
    r = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "h264", "-i", "pipe:0", "-f", "null", "-"],
                       input=out, capture_output=True, timeout=30)
    err = r.stderr.decode(errors="replace").strip()
    return r.returncode == 0 and not err, err


def listed(s):
    text = h.get(s.url("/stream.m3u8")).text
    return text, [ln for ln in text.splitlines() if ln and not ln.startswith("#")]


def test_live_keeps_serving_when_the_key_server_goes_away(origin_bin, tmp_path):
    ks = KeyServer(tmp_path).start()
    port = ks.port
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "320x240", "--encrypt", "cbcs", "--key-period", "1s",
                                        *ks.args()])
    s.start()
    try:
        s.wait_ready(20, path="/stream.m3u8")
        time.sleep(3)
        text, uris = listed(s)
        init = h.get(s.url("/init.mp4")).body
        prot = cd.read_protection(init)
        keys = dict(ks.keys)
        # The ClearKey EXT-X-KEY in force before each segment names the KID its fragments name.
        in_force = {}
        current = None
        for line in text.splitlines():
            if line.startswith("#EXT-X-KEY:") and "org.w3.clearkey" in line:
                current = base64.b64decode(re.search(r'base64,([^"]+)"', line).group(1))
            elif line and not line.startswith("#"):
                in_force[line] = current
        assert len(set(in_force.values())) >= 2, text
        # Each listed segment n is period n's, with the server's key: its video samples decrypt to NAL units.
        for uri in uris[-2:]:
            body = h.get(s.url("/" + uri)).body
            n = int(re.match(r"seg(\d+)\.m4s$", uri).group(1))
            assert kid_of(body) == kid_for("stream", n) == in_force[uri], uri
            _, samples, _ = cd.decrypt_segment(body, prot, keys)
            ok, err = h264_decodes(init, samples)
            assert ok, (uri, err)
            # The check can fail: with another key the slices do not decode.
            wrong = cd.decrypt_segment(body, prot, {kid_for("stream", n): os.urandom(16)})[1]
            assert wrong != samples and not h264_decodes(init, wrong)[0]
        # The server goes away: the stream keeps serving with the last key it has, one warning.
        ks.stop()
        gone_at = int(re.match(r"seg(\d+)\.m4s$", uris[-1]).group(1))
        time.sleep(5)
        _, later = listed(s)
        last = int(re.match(r"seg(\d+)\.m4s$", later[-1]).group(1))
        assert last >= gone_at + 3, (gone_at, later)
        kids = [kid_of(h.get(s.url("/" + u)).body) for u in later[-2:]]
        assert kids[0] == kids[1] and kids[1] in ks.keys, "the newest segments keep one key the server gave"
        warnings = [ln for ln in s.stderr().splitlines() if "keeping period" in ln]
        assert len(warnings) == 1 and ks.url in warnings[0], s.stderr()[-2000:]
        # Back again: one line, and the next periods have their own keys.
        ks2 = KeyServer(tmp_path, port=port, cert=(ks.cert, ks.keyfile)).start()
        try:
            deadline = time.monotonic() + 15
            while "answers again" not in s.stderr() and time.monotonic() < deadline:
                time.sleep(0.3)
            assert len([ln for ln in s.stderr().splitlines() if "answers again" in ln]) == 1, s.stderr()[-2000:]
            time.sleep(1.5)
            _, uris = listed(s)
            body = h.get(s.url("/" + uris[-1])).body
            n = int(re.match(r"seg(\d+)\.m4s$", uris[-1]).group(1))
            assert kid_of(body) == kid_for("stream", n)
            _, samples, _ = cd.decrypt_segment(body, prot, ks2.keys)
            assert h264_decodes(init, samples)[0]
        finally:
            ks2.stop()
        err = s.stderr()
        for key in list(keys.values()) + list(ks2.keys.values()):
            assert key.hex() not in err.lower() and base64.b64encode(key).decode() not in err
        assert all(k.hex() not in h.get(s.url("/streams.json")).text for k in keys.values())
    finally:
        rc = s.stop()
        print(f"\n--- live origin exit {rc}; stderr tail:\n{s.stderr()[-2000:]}")
