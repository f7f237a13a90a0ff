"""CENC sample encryption (issue 23 §1-2; docs/encryption.md) against the real binary, checked by an independent
ISO/IEC 23001-7 decrypter written in the test (hlsharness/cencdecrypt.py, pycryptodome) and by FFmpeg's own.

- `package` of one file clear, `--encrypt cenc` and `--encrypt cbcs`, and an H.265 file clear and `cenc`
  (module-scoped, a fraction of a second each):
  the init segments' `encv`/`enca` + `sinf` (`frma`, `schm`, `tenc` fields: IV sizes, constant IV, 1:9 and 0:0
  patterns, the KID) and `pssh` boxes; every segment decrypted by following `saio`/`saiz`/`senc` gives the clear
  segments' samples byte for byte, and the decrypted stream decodes with ffmpeg to the clear one's frames (framemd5);
  a wrong key gives neither (the checker can fail).
- FFmpeg's mov demuxer decrypts `cenc` (`-decryption_key`) one fragment at a time (it fails on many fragments in one
  file, an FFmpeg 5.1 bug: docs/encryption.md): every fragment, with the init segment, decodes to the clear
  fragment's frames; with a wrong key it does not.
- The playlists: `EXT-X-KEY` METHOD SAMPLE-AES / SAMPLE-AES-CTR, one per KEYFORMAT (FairPlay `skd://`, Widevine's
  pssh, PlayReady, ClearKey's KID), `EXT-X-SESSION-KEY` in the multivariant playlist; no key file is written.
- A live LL-HLS test pattern with `--encrypt cbcs --key-period 1s`: every segment a new key (its KID in a seig
  sample group and in the EXT-X-KEY in force), each derived here (HMAC) and used by the decrypter by KID; served parts
  and segments decrypt to samples that tile (the segment is its parts in turn), and the origin serves no key.
- hls.js 1.6 in headless Chromium plays that stream across its key changes through EME with Chromium's ClearKey CDM
  (its own cbcs decryption), each period's key from a ClearKey licence endpoint the test serves (JSON Web Keys).
- `--clear-lead`: the first segment clear (marked unprotected), the rest as without it.
- `--single-file`: the CENC segments tile one file that decrypts whole to the clear samples.
- `--cpix`: a DASH-IF CPIX document's key, KID and DRM systems give the same bytes as the flags.
- Bad input: one clear line each.
About 15 s.
"""
import base64
import functools
import hashlib
import hmac
import http.server
import json
import os
import shutil
import xml.etree.ElementTree as ET
import re
import struct
import subprocess
import time

import pytest

from hlsharness import cencdecrypt as cd
from hlsharness import chromium
from hlsharness import cpixseal
from hlsharness import http as h
from hlsharness import procs
from hlsharness.mp4 import boxes
from hlsharness.testenv import need, need_chromium

KEY = "00112233445566778899aabbccddeeff"
KID = "0123456789abcdef0123456789abcdef"
WRONG = "ff" + KEY[2:]
SYSTEMS = {
    "edef8ba979d64acea3c827dcd51d21ed": "widevine",
    "9a04f07998404286ab92e65be0885f95": "playready",
    "1077efecc0b24d02ace33c1e52e2fb4b": "common",
}


def run_package(origin_bin, src, out, *args):
    p = subprocess.run([origin_bin, "package", src, "-o", out, *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
    return p.returncode, p.stderr.decode("utf-8", errors="replace")


@pytest.fixture(scope="module")
def packaged(origin_bin, media, tmp_path_factory):
    need("ffmpeg")
    root = tmp_path_factory.mktemp("cenc")
    out = {}
    for name, args in [("clear", []),
                       ("cenc", ["--encrypt", "cenc", "--key", f"{KID}:{KEY}", "--drm", "widevine,playready"]),
                       ("cbcs", ["--encrypt", "cbcs", "--key", f"{KID}:{KEY}", "--drm", "fairplay,widevine,playready"]),
                       ("hevc_clear", []), ("hevc_cenc", ["--encrypt", "cenc", "--key", f"{KID}:{KEY}"])]:
        d = str(root / name)
        rc, err = run_package(origin_bin, media["hevc.mp4" if name.startswith("hevc") else "vod.mp4"], d, *args)
        assert rc == 0, err
        assert KEY not in err
        out[name] = d
    return out


def read(d, name):
    with open(os.path.join(d, name), "rb") as f:
        return f.read()


def segment_names(d):
    return sorted((n for n in os.listdir(d) if re.match(r"seg\d+\.m4s$", n)), key=lambda n: int(n[3:-4]))


def framemd5(data, *args):
    """(frame lines, stderr) of ffmpeg decoding `data` (an MP4 stream on stdin)."""
    p = subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", *args, "-i", "pipe:0", "-map", "0",
                        "-f", "framemd5", "-"], input=data, capture_output=True, timeout=30)
    lines = [ln for ln in p.stdout.decode().splitlines() if ln and not ln.startswith("#")]
    return lines, p.stderr.decode(errors="replace").strip() + ("" if p.returncode == 0 else f" (exit {p.returncode})")


def fragments(data):
    """The moof+mdat pairs of a segment (the first with the styp before it)."""
    top = list(boxes(data))
    out, start = [], 0
    for i, b in enumerate(top):
        if b.type == b"mdat":
            out.append(data[start:b.end])
            start = b.end
    return out


@pytest.mark.parametrize("scheme", ["cenc", "cbcs"])
def test_init_segment_states_the_protection(packaged, scheme):
    init = read(packaged[scheme], "init.mp4")
    prot = cd.read_protection(init)
    assert set(prot) == {1, 2}, prot
    video, audio = prot[1], prot[2]
    assert (video["original"], audio["original"]) == ("avc1", "mp4a")
    for p in (video, audio):
        assert p["scheme"] == scheme and p["kid"].hex() == KID and p["protected"] == 1
    if scheme == "cenc":
        assert video["iv_size"] == audio["iv_size"] == 8 and video["constant_iv"] is None
    else:
        assert video["iv_size"] == audio["iv_size"] == 0 and len(video["constant_iv"]) == 16
        assert (video["crypt"], video["skip"]) == (1, 9) and (audio["crypt"], audio["skip"]) == (0, 0)
    # pssh boxes in moov: the common (W3C) one with the KID always, and one per asked system (FairPlay has none).
    moov = next(b for b in boxes(init) if b.type == b"moov")
    psshs = {}
    for b in boxes(init, moov.body, moov.end):
        if b.type == b"pssh":
            version = init[b.body]
            system = init[b.body + 4:b.body + 20].hex()
            kids = []
            p = b.body + 20
            if version == 1:
                (n,) = struct.unpack_from(">I", init, p)
                kids = [init[p + 4 + 16 * i:p + 20 + 16 * i].hex() for i in range(n)]
                p += 4 + 16 * n
            (size,) = struct.unpack_from(">I", init, p)
            assert p + 4 + size == b.end
            psshs[SYSTEMS[system]] = (kids, init[p + 4:b.end])
    assert set(psshs) == {"common", "widevine", "playready"}
    assert psshs["common"] == ([KID], b"")
    assert bytes.fromhex(KID) in psshs["widevine"][1], "Widevine's pssh data names the KID"
    assert "<WRMHEADER".encode("utf-16-le") in psshs["playready"][1]
    # Everything else is the clear init segment's: same ftyp, same track count.
    assert init[:24] == read(packaged["clear"], "init.mp4")[:24]


@pytest.mark.parametrize("scheme", ["cenc", "cbcs", "hevc_cenc"])
def test_independent_decryption_gives_the_clear_samples_and_frames(packaged, scheme):
    d, clear = packaged[scheme], packaged["hevc_clear" if scheme.startswith("hevc") else "clear"]
    prot = cd.read_protection(read(d, "init.mp4"))
    names = segment_names(d)
    assert names == segment_names(clear) and len(names) >= 3
    decrypted, total = [], {"samples": 0, "protected_bytes": 0, "subsamples": 0}
    for n in names:
        sealed = read(d, n)
        plain, samples, stats = cd.decrypt_segment(sealed, prot, bytes.fromhex(KEY))
        expected = cd.clear_samples(read(clear, n))
        assert [t for t, _ in samples] == [t for t, _ in expected]
        assert samples == expected, f"{n}: the decrypted samples are not the clear ones"
        assert cd.clear_samples(sealed) != expected, f"{n}: nothing was encrypted"
        for k in total:
            total[k] += stats[k]
        decrypted.append(plain)
    assert total["protected_bytes"] > 0.8 * sum(len(s) for n in names for _, s in cd.clear_samples(read(clear, n)))
    # The decrypted stream (the clear init segment: the same tracks, no sinf) decodes to the clear stream's frames.
    clear_init = read(clear, "init.mp4")
    want, err = framemd5(clear_init + b"".join(read(clear, n) for n in names))
    assert not err and len(want) > 60, err
    got, err = framemd5(clear_init + b"".join(decrypted))
    assert not err, err
    assert got == want
    # The checker can fail: a wrong key gives other samples, and frames that are not the clear ones.
    _, wrong, _ = cd.decrypt_segment(read(d, names[1]), prot, bytes.fromhex(WRONG))
    assert wrong != cd.clear_samples(read(clear, names[1]))
    bad = [cd.decrypt_segment(read(d, n), prot, bytes.fromhex(WRONG))[0] for n in names]
    got, err = framemd5(clear_init + b"".join(bad))
    assert got != want


def test_ffmpeg_decrypts_cenc_fragment_by_fragment(packaged):
    d, clear = packaged["cenc"], packaged["clear"]
    init, clear_init = read(d, "init.mp4"), read(clear, "init.mp4")
    checked = 0
    for n in segment_names(d):
        for sealed, plain in zip(fragments(read(d, n)), fragments(read(clear, n))):
            want, err = framemd5(clear_init + plain)
            assert not err and want, err
            got, err = framemd5(init + sealed, "-decryption_key", KEY)
            assert not err, f"{n}: {err}"
            assert got == want, n
            checked += 1
    assert checked >= 6
    got, _ = framemd5(init + fragments(read(d, "seg1.m4s"))[1], "-decryption_key", WRONG)
    assert got != framemd5(clear_init + fragments(read(clear, "seg1.m4s"))[1])[0]


def key_lines(text, tag="#EXT-X-KEY:"):
    out = []
    for line in text.splitlines():
        if line.startswith(tag):
            attrs = dict(re.findall(r'([A-Z-]+)=("[^"]*"|[^,]*)', line[len(tag):]))
            out.append({k: v.strip('"') for k, v in attrs.items()})
    return out


@pytest.mark.parametrize("scheme,method", [("cenc", "SAMPLE-AES-CTR"), ("cbcs", "SAMPLE-AES")])
def test_playlists_signal_every_system(packaged, scheme, method):
    d = packaged[scheme]
    keys = key_lines(open(os.path.join(d, "stream.m3u8")).read())
    formats = [k["KEYFORMAT"] for k in keys]
    expected = (["urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", "com.microsoft.playready", "org.w3.clearkey"]
                if scheme == "cenc" else
                ["com.apple.streamingkeydelivery", "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed",
                 "com.microsoft.playready", "org.w3.clearkey"])
    assert formats == expected, keys
    assert all(k["METHOD"] == method and k["KEYFORMATVERSIONS"] == "1" and "IV" not in k for k in keys)
    by = {k["KEYFORMAT"]: k["URI"] for k in keys}
    # ClearKey: a data URI whose bytes are the KID (what hls.js reads); Widevine: the whole pssh box.
    assert base64.b64decode(by["org.w3.clearkey"].split(",", 1)[1]).hex() == KID
    pssh = base64.b64decode(by["urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"].split(",", 1)[1])
    assert pssh[4:8] == b"pssh" and bytes.fromhex(KID) in pssh
    if scheme == "cbcs":
        assert by["com.apple.streamingkeydelivery"] == "skd://" + KID
    session = key_lines(open(os.path.join(d, "index.m3u8")).read(), "#EXT-X-SESSION-KEY:")
    assert [k["KEYFORMAT"] for k in session] == expected and all(k["METHOD"] == method for k in session)
    # The key is a licence server's to give: none is written beside the content.
    assert not os.path.exists(os.path.join(d, "keys"))
    check_mpd(open(os.path.join(d, "manifest.mpd")).read(), scheme,
              {"widevine", "playready", "common"})
    # The I-frame playlist lists each keyframe fragment (a moof with its own senc) under the same keys: each range
    # decrypts alone to the clear I-frame's samples.
    iframes = open(os.path.join(d, "stream.iframes.m3u8")).read()
    assert [k["KEYFORMAT"] for k in key_lines(iframes)] == expected
    clear_ranges = iframe_ranges(open(os.path.join(packaged["clear"], "stream.iframes.m3u8")).read())
    ranges = iframe_ranges(iframes)
    assert len(ranges) == len(clear_ranges) >= 3
    prot = cd.read_protection(read(d, "init.mp4"))
    for (uri, length, offset), (curi, clength, coffset) in zip(ranges, clear_ranges):
        sealed = read(d, uri)[offset:offset + length]
        assert sealed[4:8] == b"moof"
        _, samples, _ = cd.decrypt_segment(sealed, prot, bytes.fromhex(KEY))
        assert samples == cd.clear_samples(read(packaged["clear"], curi)[coffset:coffset + clength])


def iframe_ranges(text):
    """(uri, length, offset) of each entry of an I-frame playlist."""
    out, pending = [], None
    for line in text.splitlines():
        if line.startswith("#EXT-X-BYTERANGE:"):
            length, offset = line.split(":", 1)[1].split("@")
            pending = (int(length), int(offset))
        elif line and not line.startswith("#"):
            out.append((line, *pending))
    return out


NS = {"mpd": "urn:mpeg:dash:schema:mpd:2011", "cenc": "urn:mpeg:cenc:2013"}


def default_kids(text):
    """The cenc:default_KIDs of an MPD's ContentProtection descriptors, as 32 hex digits."""
    return {cp.get(f"{{{NS['cenc']}}}default_KID").replace("-", "") for cp in ET.fromstring(text).findall(".//mpd:ContentProtection", NS)
            if cp.get(f"{{{NS['cenc']}}}default_KID")}


def check_mpd(text, scheme, systems, kids=(KID,)):
    """Every AdaptationSet: the common scheme with value cenc/cbcs and cenc:default_KID (one of `kids`), then one
    ContentProtection per DRM system whose cenc:pssh is a whole pssh box of that SystemID naming that KID."""
    root = ET.fromstring(text)
    sets = root.findall(".//mpd:AdaptationSet", NS)
    assert sets
    uuids = {f"{k[:8]}-{k[8:12]}-{k[12:16]}-{k[16:20]}-{k[20:]}": k for k in kids}
    for a in sets:
        cps = a.findall("mpd:ContentProtection", NS)
        assert cps and list(a)[0].tag.endswith("ContentProtection"), "ContentProtection comes first in its set"
        common = cps[0]
        assert common.get("schemeIdUri") == "urn:mpeg:dash:mp4protection:2011" and common.get("value") == scheme
        kid = uuids[common.get(f"{{{NS['cenc']}}}default_KID")]
        named = set()
        for cp in cps[1:]:
            system = cp.get("schemeIdUri")[len("urn:uuid:"):].replace("-", "")
            pssh = base64.b64decode(cp.find("cenc:pssh", NS).text)
            assert pssh[4:8] == b"pssh" and pssh[12:28].hex() == system
            assert bytes.fromhex(kid) in pssh
            named.add(SYSTEMS[system])
        assert named == systems


def cpix_document(systems=("edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", "9a04f079-9840-4286-ab92-e65be0885f95")):
    """A DASH-IF CPIX 2.3 document with our KID and key (clear PlainValue) and a DRMSystemList."""
    kid = f"{KID[:8]}-{KID[8:12]}-{KID[12:16]}-{KID[16:20]}-{KID[20:]}"
    drm = "".join(f'<cpix:DRMSystem kid="{kid}" systemId="{s}"/>' for s in systems)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" version="2.3">
  <cpix:ContentKeyList>
    <cpix:ContentKey kid="{kid}" commonEncryptionScheme="cbcs">
      <cpix:Data><pskc:Secret><pskc:PlainValue>{base64.b64encode(bytes.fromhex(KEY)).decode()}</pskc:PlainValue></pskc:Secret></cpix:Data>
    </cpix:ContentKey>
  </cpix:ContentKeyList>
  <cpix:DRMSystemList>{drm}</cpix:DRMSystemList>
</cpix:CPIX>
"""


def test_cpix_document_gives_the_key_and_the_systems(origin_bin, media, packaged, tmp_path):
    """--cpix: the same KID, key and DRM systems as the flags give: the same bytes as --key/--drm."""
    doc = tmp_path / "keys.cpix.xml"
    doc.write_text(cpix_document(("edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", "9a04f079-9840-4286-ab92-e65be0885f95",
                                  "94ce86fb-07ff-4f43-adb8-93d2fa968ca2")))
    out = str(tmp_path / "cpix")
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--encrypt", "cbcs", "--cpix", str(doc))
    assert rc == 0, err
    assert KEY not in err
    # fairplay, widevine, playready in the flags' order there, the document's order here: the same boxes and keys.
    assert read(out, "init.mp4") == read(packaged["cbcs"], "init.mp4")
    for n in segment_names(out):
        assert read(out, n) == read(packaged["cbcs"], n)
    formats = [k["KEYFORMAT"] for k in key_lines(open(os.path.join(out, "stream.m3u8")).read())]
    assert sorted(formats) == sorted(k["KEYFORMAT"] for k in key_lines(open(os.path.join(packaged["cbcs"], "stream.m3u8")).read()))


def encrypted_cpix_document(recipient_key, mac_of=None):
    """`cpix_document()` with its content key encrypted for `recipient_key` (a pycryptodome RSA key) by
    `hlsharness.cpixseal` (its ValueMAC of `mac_of(value)` to forge one)."""
    sealer = cpixseal.Sealer(recipient_key.publickey())
    doc = cpix_document().replace("<cpix:ContentKeyList>", sealer.delivery_data_list() + "<cpix:ContentKeyList>", 1)
    plain = f"<pskc:PlainValue>{base64.b64encode(bytes.fromhex(KEY)).decode()}</pskc:PlainValue>"
    doc = doc.replace(plain, sealer.secret(bytes.fromhex(KEY), mac_of))
    doc = doc.replace("xmlns:pskc=", cpixseal.NAMESPACES + " xmlns:pskc=", 1)
    assert KEY not in doc.lower() and base64.b64encode(bytes.fromhex(KEY)).decode() not in doc
    return doc


def test_cpix_document_with_key_periods(origin_bin, media, packaged, tmp_path):
    """--cpix with a ContentKeyPeriodList (periods 0 and 1) and --key-period 2s: 2-s segments, each of its period's key
    (the seig KID names it, pycryptodome decrypts it to the clear package's samples); the third period has no key in
    the document, so it keeps period 1's, with one warning. Key periods without --key-period, or --key-period with a
    document of none, are one line each."""
    keys = {n: (f"0123456789abcdef0123456789abcd{n:02x}", bytes([0x40 + 16 * n + i for i in range(16)]).hex()) for n in (0, 1)}

    def uuid(k):
        return f"{k[:8]}-{k[8:12]}-{k[12:16]}-{k[16:20]}-{k[20:]}"
    doc = tmp_path / "periods.xml"
    doc.write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" version="2.3">
  <cpix:ContentKeyList>{"".join(f'<cpix:ContentKey kid="{uuid(kid)}" commonEncryptionScheme="cbcs"><cpix:Data><pskc:Secret><pskc:PlainValue>{base64.b64encode(bytes.fromhex(key)).decode()}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>' for kid, key in keys.values())}</cpix:ContentKeyList>
  <cpix:ContentKeyPeriodList><cpix:ContentKeyPeriod id="first" index="0"/><cpix:ContentKeyPeriod id="second" index="1"/></cpix:ContentKeyPeriodList>
  <cpix:ContentKeyUsageRuleList>{"".join(f'<cpix:ContentKeyUsageRule kid="{uuid(keys[n][0])}" intendedTrackType="ALL"><cpix:KeyPeriodFilter periodId="{p}"/></cpix:ContentKeyUsageRule>' for n, p in ((0, "first"), (1, "second")))}</cpix:ContentKeyUsageRuleList>
</cpix:CPIX>
""")
    clear, out = str(tmp_path / "clear2"), str(tmp_path / "periods")
    rc, err = run_package(origin_bin, media["vod.mp4"], clear, "--segment-duration", "2")
    assert rc == 0, err
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--segment-duration", "2", "--encrypt", "cbcs", "--cpix", str(doc),
                          "--key-period", "2s")
    assert rc == 0, err
    warnings = [ln for ln in err.splitlines() if "no key for key period 2" in ln]
    assert len(warnings) == 1 and "keeping period 1's key" in warnings[0], err
    prot = cd.read_protection(read(out, "init.mp4"))
    names = segment_names(out)
    assert names == segment_names(clear) and len(names) == 3, names
    by_kid = {bytes.fromhex(kid): bytes.fromhex(key) for kid, key in keys.values()}
    for i, n in enumerate(names):
        sealed = read(out, n)
        _, samples, stats = cd.decrypt_segment(sealed, prot, by_kid)
        want_kid = keys[min(i, 1)][0]
        assert set(stats["kids"]) == {bytes.fromhex(want_kid)} and stats["protected_bytes"] > 0, (n, stats["kids"])
        assert samples == cd.clear_samples(read(clear, n)), n
        other = keys[1 - min(i, 1)][1]
        assert cd.decrypt_segment(sealed, prot, {bytes.fromhex(want_kid): bytes.fromhex(other)})[1] != samples
    for args, says in [(["--cpix", str(doc)], "its keys are for key periods: give --key-period"),
                       (["--cpix", str(tmp_path / "one.xml"), "--key-period", "2s"], "the document has no key periods")]:
        (tmp_path / "one.xml").write_text(cpix_document())
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "bad"), "--encrypt", "cbcs", *args)
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("Usage:") and "--help" not in ln]
        assert rc > 0 and len(lines) == 1 and says in err, (args, err)


def test_cpix_document_with_an_encrypted_key(origin_bin, media, packaged, tmp_path):
    """--cpix with --cpix-key: a content key encrypted for a recipient (made here with pycryptodome) gives the same
    bytes as the clear document; another recipient's private key, a forged ValueMAC or no --cpix-key is one line
    naming the file, and the key is never printed."""
    from Crypto.PublicKey import RSA
    recipient, other = RSA.generate(2048), RSA.generate(2048)
    doc, key_pem, other_pem = tmp_path / "sealed.cpix.xml", tmp_path / "recipient.pem", tmp_path / "other.pem"
    doc.write_text(encrypted_cpix_document(recipient))
    key_pem.write_bytes(recipient.export_key(pkcs=8))
    other_pem.write_bytes(other.export_key())
    out = str(tmp_path / "sealed")
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--encrypt", "cbcs", "--cpix", str(doc),
                          "--cpix-key", str(key_pem))
    assert rc == 0, err
    assert read(out, "init.mp4") == read(packaged["cbcs"], "init.mp4")
    for n in segment_names(out):
        assert read(out, n) == read(packaged["cbcs"], n)
    forged = tmp_path / "forged.cpix.xml"
    forged.write_text(encrypted_cpix_document(recipient, mac_of=lambda v: v[:-1] + bytes([v[-1] ^ 1])))
    for args, says in [
        (["--cpix", str(doc), "--cpix-key", str(other_pem)], "encrypted for another recipient"),
        (["--cpix", str(forged), "--cpix-key", str(key_pem)], "fails its MAC"),
        (["--cpix", str(doc)], "give its private key (--cpix-key)"),
        (["--cpix", str(doc), "--cpix-key", str(doc)], "not an RSA private key"),
        (["--cpix-key", str(key_pem), "--key", f"{KID}:{KEY}"], "--cpix-key is the private key of a --cpix document"),
    ]:
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "bad"), "--encrypt", "cbcs", *args)
        lines = [ln for ln in err.splitlines() if ln.strip() and "Usage" not in ln and "help" not in ln]
        assert rc > 0 and says in err and len(lines) == 1, (args, err)
        assert KEY not in err.lower()


def test_single_file(origin_bin, media, packaged, tmp_path):
    """--single-file: the CENC segments tile one file (saio counts from each moof): the sidx's references cover them,
    and the whole file decrypts to the clear segments' samples; its MPD carries the ContentProtection."""
    out = str(tmp_path / "single")
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--single-file", "--encrypt", "cenc", "--key", f"{KID}:{KEY}")
    assert rc == 0, err
    data = read(out, "stream.mp4")
    top = list(boxes(data))
    sidx = next(b for b in top if b.type == b"sidx")
    version = data[sidx.body]
    p = sidx.body + 4 + 8 + (16 if version else 8) + 2
    (count,) = struct.unpack_from(">H", data, p)
    sizes = [struct.unpack_from(">I", data, p + 2 + 12 * i)[0] & 0x7FFFFFFF for i in range(count)]
    assert sidx.end + sum(sizes) == len(data)
    _, samples, _ = cd.decrypt_segment(data, cd.read_protection(data), bytes.fromhex(KEY))
    expected = [x for n in segment_names(packaged["clear"]) for x in cd.clear_samples(read(packaged["clear"], n))]
    assert samples == expected
    check_mpd(open(os.path.join(out, "manifest.mpd")).read(), "cenc", {"common"})


def test_clear_lead(origin_bin, media, packaged, tmp_path):
    """--clear-lead 2s: the first segment (2 s) is clear, its trafs saying so (a seig entry with isProtected 0, no
    senc), and listed before any EXT-X-KEY; the rest are the cbcs package's bytes."""
    out = str(tmp_path / "lead")
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--encrypt", "cbcs", "--key", f"{KID}:{KEY}",
                          "--drm", "fairplay,widevine,playready", "--clear-lead", "2s")
    assert rc == 0, err
    prot = cd.read_protection(read(out, "init.mp4"))
    names = segment_names(out)
    first = read(out, names[0])
    _, samples, stats = cd.decrypt_segment(first, prot, bytes.fromhex(KEY))
    assert stats["clear_trafs"] >= 1 and stats["protected_bytes"] == 0 and b"senc" not in first
    assert samples == cd.clear_samples(read(packaged["clear"], names[0])) == cd.clear_samples(first)
    for n in names[1:]:
        assert read(out, n) == read(packaged["cbcs"], n)
    lines = open(os.path.join(out, "stream.m3u8")).read().splitlines()
    assert lines.index(names[0]) < min(i for i, ln in enumerate(lines) if ln.startswith("#EXT-X-KEY:"))
    assert lines.index(names[1]) > min(i for i, ln in enumerate(lines) if ln.startswith("#EXT-X-KEY:"))


@pytest.fixture(scope="module")
def live_cbcs(origin_bin, tmp_path_factory):
    record = str(tmp_path_factory.mktemp("record"))
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "320x240", "--encrypt", "cbcs", "--key", KEY,
                                        "--key-period", "1s", "--part-duration", "0.5", "--record", record])
    s.record = record
    s.start()
    try:
        s.wait_ready(20, path="/stream.m3u8")
        yield s
    finally:
        s.stop()


def period_key(n):
    """Key period n's key and KID as docs/encryption.md defines them, computed here independently of the origin:
    HMAC-SHA256(K, "hls-origin cenc key " / "hls-origin cenc kid " + n as 8 big-endian bytes), first 16 bytes."""
    def derive(label):
        return hmac.new(bytes.fromhex(KEY), label + n.to_bytes(8, "big"), hashlib.sha256).digest()[:16]
    return derive(b"hls-origin cenc kid "), derive(b"hls-origin cenc key ")


ROTATED = dict(period_key(n) for n in range(400))


def test_live_parts_and_segments_decrypt(live_cbcs):
    """The live stream rotates keys every second (every segment): each segment's fragments name their period's KID
    (seig sample group) and decrypt with that period's key derived here; the playlist states each key ahead."""
    s = live_cbcs
    deadline = time.monotonic() + 15
    while True:
        text = h.get(s.url("/stream.m3u8")).text
        uris = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
        parts = re.findall(r'#EXT-X-PART:.*?URI="([^"]+)"', text)
        done = [u for u in uris if len([p for p in parts if p.startswith(u[:-4] + ".")]) >= 2]
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert done, text
    keys = key_lines(text)
    assert keys[0]["METHOD"] == "SAMPLE-AES"
    init = h.get(s.url("/init.mp4")).body
    prot = cd.read_protection(init)
    assert {p["scheme"] for p in prot.values()} == {"cbcs"}
    # Every listed segment: its fragments' KID is its period's (segment n, period n), and the ClearKey EXT-X-KEY in
    # force names it.
    kid_lines, current = {}, None
    for line in text.splitlines():
        if line.startswith("#EXT-X-KEY:") and "org.w3.clearkey" in line:
            current = base64.b64decode(re.search(r'base64,([^"]+)"', line).group(1))
        elif line and not line.startswith("#"):
            kid_lines[line] = current
    assert len(set(kid_lines.values())) >= 2, text
    for uri, kid in kid_lines.items():
        n = int(re.match(r"seg(\d+)\.m4s$", uri).group(1))
        assert kid == period_key(n)[0], uri
    seg = done[0]
    sealed = h.get(s.url("/" + seg)).body
    _, samples, stats = cd.decrypt_segment(sealed, prot, ROTATED)
    n = int(re.match(r"seg(\d+)\.m4s$", seg).group(1))
    assert stats["samples"] > 0 and stats["protected_bytes"] > 0
    assert set(stats["kids"]) == {period_key(n)[0]}
    # The checker can fail: the previous period's key alone does not decrypt it.
    assert cd.decrypt_segment(sealed, prot, {period_key(n)[0]: period_key(n - 1)[1]})[1] != samples
    part_bytes = [h.get(s.url("/" + p)).body for p in parts if p.startswith(seg[:-4] + ".")]
    assert b"".join(part_bytes) == sealed, "the segment is its encrypted parts in turn"
    from_parts = []
    for p in part_bytes:
        from_parts += cd.decrypt_segment(p, prot, ROTATED)[1]
    assert from_parts == samples
    # The decrypted samples decode: every video sample starts with a length-prefixed NAL unit that fits.
    for track, sample in samples:
        if track == 1:
            (length,) = struct.unpack_from(">I", sample, 0)
            assert 0 < length <= len(sample) - 4 and sample[4] & 0x80 == 0
    # DASH says how (the same segments): ContentProtection with the KID and the common pssh.
    r = h.get(s.url("/manifest.mpd"))
    assert r.status == 200, r.status
    check_mpd(r.text, "cbcs", {"common"}, kids=[k.hex() for k in ROTATED])
    # DASH-IF IOP 4.3 §7.4.1.1: cenc:default_KID is "the default KID, as specified by the 'tenc' box": the init
    # segment's (the period it was made in), not the latest period's.
    assert default_kids(r.text) == {p["kid"].hex() for p in prot.values()}, (default_kids(r.text), prot)
    # No key route for CENC, and the key is nowhere in what the origin says.
    assert h.get(s.url("/keys/0.key")).status == 404
    assert KEY not in s.stderr().lower()
    assert KEY not in h.get(s.url("/streams.json")).text.lower()


def test_bad_input_is_one_line(origin_bin, media, tmp_path):
    cpix_file, bad_cpix = tmp_path / "keys.xml", tmp_path / "bad.xml"
    cpix_file.write_text(cpix_document())
    bad_cpix.write_text(cpix_document().replace(base64.b64encode(bytes.fromhex(KEY)).decode(), "AAEC"))
    for args, says in [
        (["--encrypt", "cenc", "--key", f"{KID}:{KEY}", "--drm", "fairplay"], "FairPlay decrypts cbcs only"),
        (["--encrypt", "cbcs"], "--encrypt cbcs needs --key KID:KEY, $HLS_ORIGIN_KEY, --cpix or --key-server"),
        (["--encrypt", "cbcs", "--cpix", str(tmp_path / "missing.xml")], "missing.xml: cannot be read"),
        (["--encrypt", "cbcs", "--cpix", str(bad_cpix)], "no 16-byte PlainValue"),
        (["--encrypt", "cenc", "--cpix", str(cpix_file)], "its content key is for cbcs, not cenc"),
        (["--encrypt", "cbcs", "--key", "00:" + KEY], "--key takes KID:KEY"),
        (["--encrypt", "cenc", "--key", f"{KID}:{KEY}", "--key-period", "10s"], "--key-period derives each period's KID"),
        (["--drm", "widevine"], "--drm needs --encrypt cbcs or cenc"),
        (["--encrypt", "aes-128", "--clear-lead", "4s"], "--clear-lead needs --encrypt cbcs or cenc"),
    ]:
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "out"), *args)
        lines = [ln for ln in err.splitlines() if ln.strip() and "Usage" not in ln and "help" not in ln]
        assert rc > 0, args
        assert says in err, (args, err)
        assert len(lines) == 1, (args, err)
        assert KEY not in err


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


CLEARKEY_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>clearkey</title></head>
<body style="margin:0;background:#000">
<video id="video" muted autoplay playsinline style="display:block;width:640px;height:360px"></video>
<script type="module">
const p = new URLSearchParams(location.search);
const { default: Hls } = await import('/hls.mjs');
const video = document.getElementById('video');
// hls.js 1.6 takes the KID from the ClearKey EXT-X-KEY's data URI but makes no init data of it (it asks a
// generateRequest filter, and ignores pssh boxes for ClearKey): the W3C "keyids" init data of that KID.
const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const generateRequest = (type, data, ctx) => ({ initDataType: 'keyids',
  initData: new TextEncoder().encode(JSON.stringify({ kids: [b64url(ctx.decryptdata.keyId)] })) });
const hls = new Hls({ emeEnabled: true,
  drmSystems: { 'org.w3.clearkey': { licenseUrl: '/license', generateRequest } } });
window.hls = hls;
hls.loadSource(p.get('src'));
hls.attachMedia(video);
hls.on(Hls.Events.MANIFEST_PARSED, () => video.play().catch(e => console.warn('play()', e.message)));
// ?switch=S: after S s of playback, the next variant (another key with per-track keys).
const after = Number(p.get('switch') || 0);
if (after > 0) video.addEventListener('timeupdate', function once() {
  if (video.currentTime < after) return;
  video.removeEventListener('timeupdate', once);
  hls.nextLevel = (hls.currentLevel + 1) % hls.levels.length;
});
</script></body></html>
"""


class ClearKeyLicence(http.server.SimpleHTTPRequestHandler):
    """The page, hls.mjs, and POST /license: a ClearKey licence request (W3C EME §9.1.3: {"kids": [...]}) answered
    with the key as a JSON Web Key Set when the KID is ours."""
    requests = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        kids = json.loads(body or b"{}").get("kids", [])
        ClearKeyLicence.requests.append(kids)
        by_kid = {b64url(kid): b64url(key) for kid, key in ROTATED.items()}
        by_kid[b64url(bytes.fromhex(KID))] = b64url(bytes.fromhex(KEY))
        by_kid.update({b64url(bytes.fromhex(kid)): b64url(bytes.fromhex(key)) for kid, key in TRACK_KEYS.values()})
        keys = [{"kty": "oct", "kid": k, "k": by_kid[k]} for k in kids if k in by_kid]
        out = json.dumps({"keys": keys, "type": "temporary"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def play_with_clearkey(src, seconds, tmp_path, query=""):
    """hls.js on the ClearKey page playing `src` for `seconds` (licences from `ClearKeyLicence`, whose requests are
    reset first); Chromium's result."""
    need_chromium()
    if not os.path.exists(procs.HLSJS_PATH):
        pytest.skip(f"{procs.HLSJS_PATH} missing (scripts/install-deps fetches it)")
    shutil.copy(procs.HLSJS_PATH, tmp_path / "hls.mjs")
    (tmp_path / "clearkey.html").write_text(CLEARKEY_PAGE)
    ClearKeyLicence.requests = []
    handler = functools.partial(ClearKeyLicence, directory=str(tmp_path))
    with procs.LoopbackHTTPServer(handler) as page:
        res = chromium.chromium_play(f"{page.base_url}/clearkey.html?{query}src={src}", seconds, startup_timeout=15)
    print(chromium.summary(res), ClearKeyLicence.requests)
    return res


def assert_plays_without_key_errors(res):
    """Keys and decryption are these tests' point (like test_encryption's): a loose playback bound (dropped frames at
    any speed, the catch-up to the live edge too), no crypto error."""
    assert chromium.playback_problems(res, max_dropped=0.5, min_advance=0.5) == []
    crypto = [e for e in res["errors"] if re.search(r"key|decrypt|eme|drm", str(e.get("details", "")), re.I)]
    assert crypto == [], crypto[:3]


def test_hlsjs_plays_with_clearkey(live_cbcs, tmp_path):
    res = play_with_clearkey(live_cbcs.url("/index.m3u8"), 4, tmp_path)
    # A licence request per key period played (1-s periods: several across the 4 s).
    asked = {k for kids in ClearKeyLicence.requests for k in kids}
    assert len(asked) >= 3 and asked <= {b64url(k) for k in ROTATED}, ClearKeyLicence.requests
    assert_plays_without_key_errors(res)


TRACK_KEYS = {label: (f"0123456789abcdef0123456789abcde{n}", bytes([0x10 * n + i for i in range(16)]).hex())
              for n, label in ((1, "SD"), (2, "HD"), (3, "AUDIO"))}


def per_track_cpix(rules=None, keys=None):
    """A CPIX 2.3 document of three content keys and SPEKE v2's usage rules for them: SD video up to 50,000 pixels
    (the 240x180 rung), HD above (the 320x240 source), and the audio."""
    def uuid(k):
        return f"{k[:8]}-{k[8:12]}-{k[12:16]}-{k[16:20]}-{k[20:]}"
    rules = rules or {"SD": '<cpix:VideoFilter maxPixels="50000"/>', "HD": '<cpix:VideoFilter minPixels="50001"/>',
                      "AUDIO": "<cpix:AudioFilter/>"}
    keys = "".join(f'<cpix:ContentKey kid="{uuid(kid)}" commonEncryptionScheme="cbcs"><cpix:Data><pskc:Secret><pskc:PlainValue>'
                   f'{base64.b64encode(bytes.fromhex(key)).decode()}</pskc:PlainValue></pskc:Secret></cpix:Data></cpix:ContentKey>'
                   for kid, key in (TRACK_KEYS[label] for label in keys or rules))
    usage = "".join(f'<cpix:ContentKeyUsageRule kid="{uuid(TRACK_KEYS[label][0])}" intendedTrackType="{label}">{f}</cpix:ContentKeyUsageRule>'
                    for label, f in rules.items())
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<cpix:CPIX xmlns:cpix="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" version="2.3">
  <cpix:ContentKeyList>{keys}</cpix:ContentKeyList>
  <cpix:ContentKeyUsageRuleList>{usage}</cpix:ContentKeyUsageRuleList>
</cpix:CPIX>
"""


def test_per_track_keys(origin_bin, media, tmp_path):
    """Issue 23, per-track keys: `package --ladder source,180 --encrypt cbcs --cpix` of a document with SD, HD and
    AUDIO keys (SPEKE v2's usage rules: VideoFilter by pixels, AudioFilter). Each rendition is encrypted with its
    usage's key: its `tenc` names that KID, its samples decrypt (pycryptodome, ISO/IEC 23001-7) with that key and no
    other; each media playlist's EXT-X-KEY names its KID and the multivariant lists each key once
    (EXT-X-SESSION-KEY); DASH puts the SD and HD representations in sets of their own (DASH-IF IOP 4.3 §7.5.2: a set's
    ContentProtection applies to all its representations) that say they can be switched between (§3.8)."""
    doc = tmp_path / "keys.xml"
    doc.write_text(per_track_cpix())
    clear, sealed = str(tmp_path / "clear"), str(tmp_path / "sealed")
    for out, extra in ((clear, []), (sealed, ["--encrypt", "cbcs", "--cpix", str(doc)])):
        rc, err = run_package(origin_bin, media["vod.mp4"], out, "--ladder", "source,180", *extra)
        assert rc == 0, err
    assert all(key not in err for _, key in TRACK_KEYS.values())
    want = {"source": "HD", "180p": "SD", "audio": "AUDIO"}
    for rendition, label in want.items():
        kid, key = TRACK_KEYS[label]
        prot = cd.read_protection(read(sealed, f"{rendition}/init.mp4"))
        assert [p["kid"].hex() for p in prot.values()] == [kid], (rendition, prot)
        text = open(os.path.join(sealed, f"{rendition}.m3u8")).read()
        clearkey = [k for k in key_lines(text) if k.get("KEYFORMAT") == "org.w3.clearkey"]
        assert {base64.b64decode(k["URI"].split(",", 1)[1]).hex() for k in clearkey} == {kid}, (rendition, text)
        names = sorted(os.listdir(os.path.join(sealed, rendition)))
        names = [n for n in names if n.endswith(".m4s")]
        assert len(names) >= 3
        others = [k for lbl, (_, k) in TRACK_KEYS.items() if lbl != label]
        for n in names:
            data = read(sealed, f"{rendition}/{n}")
            _, samples, stats = cd.decrypt_segment(data, prot, bytes.fromhex(key))
            assert stats["protected_bytes"] > 0, (rendition, n)
            if rendition != "180p":   # copied: the clear package's samples, byte for byte (the 180p rung is encoded)
                assert samples == cd.clear_samples(read(clear, f"{rendition}/{n}")), (rendition, n)
            for other in others:   # the checker can fail: another usage's key gives other samples
                assert cd.decrypt_segment(data, prot, bytes.fromhex(other))[1] != samples, (rendition, n)
    # The encoded rung decrypted with its key decodes (its clear init: same tracks, no sinf) as many frames as the
    # clear package's rung, with no error.
    prot = cd.read_protection(read(sealed, "180p/init.mp4"))
    names = sorted((n for n in os.listdir(os.path.join(sealed, "180p")) if n.endswith(".m4s")), key=lambda n: int(n[3:-4]))
    plain = [cd.decrypt_segment(read(sealed, f"180p/{n}"), prot, bytes.fromhex(TRACK_KEYS["SD"][1]))[0] for n in names]
    got, err = framemd5(read(clear, "180p/init.mp4") + b"".join(plain))
    want_frames, _ = framemd5(read(clear, "180p/init.mp4") + b"".join(read(clear, f"180p/{n}") for n in names))
    assert not err and len(got) == len(want_frames) > 100, err
    # Each key once in the multivariant playlist.
    master = open(os.path.join(sealed, "index.m3u8")).read()
    session = [base64.b64decode(k["URI"].split(",", 1)[1]).hex() for k in key_lines(master, "#EXT-X-SESSION-KEY:")]
    assert sorted(session) == sorted(kid for kid, _ in TRACK_KEYS.values()), master
    # DASH: each set its own key; the two video sets switchable.
    text = open(os.path.join(sealed, "manifest.mpd")).read()
    check_mpd(text, "cbcs", {"common"}, kids=[kid for kid, _ in TRACK_KEYS.values()])
    root = ET.fromstring(text)
    by_rep = {}
    for a in root.findall(".//mpd:AdaptationSet", NS):
        kid = a.find("mpd:ContentProtection", NS).get(f"{{{NS['cenc']}}}default_KID").replace("-", "")
        switch = [p.get("value") for p in a.findall("mpd:SupplementalProperty", NS)
                  if p.get("schemeIdUri") == "urn:mpeg:dash:adaptation-set-switching:2016"]
        for r in a.findall("mpd:Representation", NS):
            by_rep[r.get("id")] = (kid, a.get("id"), switch)
    assert {r: k for r, (k, _, _) in by_rep.items()} == {r: TRACK_KEYS[lbl][0] for r, lbl in want.items()}, by_rep
    assert by_rep["source"][2] == [by_rep["180p"][1]] and by_rep["180p"][2] == [by_rep["source"][1]], by_rep
    assert by_rep["audio"][2] == []
    # A rendition no usage rule takes is one line naming it; so is a key no rule names.
    video_only = {"SD": '<cpix:VideoFilter maxPixels="50000"/>', "HD": '<cpix:VideoFilter minPixels="50001"/>'}
    for text, says in [(per_track_cpix(video_only), "no content key is for audio of 2 channels: the usage rules are SD, HD"),
                       (per_track_cpix(video_only, keys=TRACK_KEYS), f"ContentKey {TRACK_KEYS['AUDIO'][0][:8]}-")]:
        doc.write_text(text)
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "bad"), "--ladder", "source,180", "--encrypt", "cbcs",
                              "--cpix", str(doc))
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("Usage:") and "--help" not in ln]
        assert rc > 0 and len(lines) == 1 and says in err, err


def test_track_keys_derived_from_one_key(origin_bin, media, tmp_path):
    """--track-keys video,audio with --key KEY: each track type's key is HMAC-SHA256(KEY, "hls-origin track key " +
    its label)[:16] and its KID SHA-256("hls-origin kid " + that key)[:16] (docs/encryption.md), computed here: the
    video renditions decrypt with the VIDEO key, the audio with the AUDIO key. Bad --track-keys are one line each."""
    out = str(tmp_path / "derived")
    rc, err = run_package(origin_bin, media["vod.mp4"], out, "--ladder", "source,180", "--encrypt", "cbcs", "--key", KEY,
                          "--track-keys", "video,audio")
    assert rc == 0, err
    derived = {}
    for label in ("VIDEO", "AUDIO"):
        key = hmac.new(bytes.fromhex(KEY), b"hls-origin track key " + label.encode(), hashlib.sha256).digest()[:16]
        derived[label] = (hashlib.sha256(b"hls-origin kid " + key).digest()[:16], key)
    for rendition, label in (("source", "VIDEO"), ("180p", "VIDEO"), ("audio", "AUDIO")):
        kid, key = derived[label]
        prot = cd.read_protection(read(out, f"{rendition}/init.mp4"))
        assert [p["kid"] for p in prot.values()] == [kid], rendition
        seg = read(out, f"{rendition}/seg1.m4s")
        _, samples, stats = cd.decrypt_segment(seg, prot, key)
        assert stats["protected_bytes"] > 0
        other = derived["AUDIO" if label == "VIDEO" else "VIDEO"][1]
        assert cd.decrypt_segment(seg, prot, other)[1] != samples
    for args, says in [(["--track-keys", "sd,tiny"], "lists sd, hd, uhd, video, audio (got 'tiny')"),
                       (["--track-keys", "video,hd"], "video (every picture) or sd/hd/uhd (by size), not both"),
                       (["--track-keys", "sd,hd", "--key", f"{KID}:{KEY}"], "--track-keys derives each track type's KID"),
                       (["--track-keys", "audio", "--encrypt", "aes-128"], "--track-keys needs --encrypt cbcs or cenc")]:
        full = (["--encrypt", "cbcs", "--key", KEY] if "--encrypt" not in args else ["--key", KEY]) + args
        rc, err = run_package(origin_bin, media["vod.mp4"], str(tmp_path / "bad"), *full)
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("Usage:") and "--help" not in ln]
        assert rc > 0 and len(lines) == 1 and says in err, (args, err)


@pytest.fixture(scope="module")
def live_tracks(origin_bin, tmp_path_factory):
    """The test pattern as a two-rung ladder (320x240: HD, 240x180: SD) and its audio, per-track keys from a CPIX
    document, recorded."""
    root = tmp_path_factory.mktemp("tracks")
    doc = root / "keys.xml"
    doc.write_text(per_track_cpix())
    record = str(root / "record")
    s = procs.OriginServer(origin_bin, ["--test-pattern-size", "320x240", "--ladder", "240,180", "--encrypt", "cbcs",
                                        "--cpix", str(doc), "--record", record])
    s.record = record
    s.start()
    try:
        s.wait_ready(30, path="/index.m3u8")
        yield s
    finally:
        s.stop()


def test_hlsjs_plays_per_track_keys_and_switches_between_them(live_tracks, tmp_path):
    """hls.js with Chromium's ClearKey CDM plays the live ladder of per-track keys: it asks the licence endpoint for the
    audio's key and its first variant's, and, switched to the other variant after 2 s, for that one's key too; no
    key or decryption error. Then the recording's MPD gives each set its key."""
    res = play_with_clearkey(live_tracks.url("/index.m3u8"), 6, tmp_path, query="switch=2&")
    asked = {k for kids in ClearKeyLicence.requests for k in kids}
    assert asked == {b64url(bytes.fromhex(kid)) for kid, _ in TRACK_KEYS.values()}, ClearKeyLicence.requests
    assert_plays_without_key_errors(res)
    live_tracks.stop()
    text = open(os.path.join(live_tracks.record, "manifest.mpd")).read()
    check_mpd(text, "cbcs", {"common"}, kids=[kid for kid, _ in TRACK_KEYS.values()])
    sets = {r.get("id"): a.find("mpd:ContentProtection", NS).get(f"{{{NS['cenc']}}}default_KID").replace("-", "")
            for a in ET.fromstring(text).findall(".//mpd:AdaptationSet", NS) for r in a.findall("mpd:Representation", NS)}
    assert sets == {"240p": TRACK_KEYS["HD"][0], "180p": TRACK_KEYS["SD"][0], "audio": TRACK_KEYS["AUDIO"][0]}, sets


def test_the_recording_keeps_the_encrypted_bytes_and_its_mpd_says_how(live_cbcs):
    """Last in the module: it ends the live stream (the recording's manifest.mpd is written at its end)."""
    s = live_cbcs
    uri = [ln for ln in h.get(s.url("/stream.m3u8")).text.splitlines() if ln and not ln.startswith("#")][0]
    served = h.get(s.url("/" + uri)).body
    s.stop()
    recorded = read(s.record, uri)
    assert recorded == served
    prot = cd.read_protection(read(s.record, "init.mp4"))
    assert cd.decrypt_segment(recorded, prot, ROTATED)[2]["protected_bytes"] > 0
    assert key_lines(open(os.path.join(s.record, "stream.m3u8")).read())[0]["METHOD"] == "SAMPLE-AES"
    assert not os.path.exists(os.path.join(s.record, "keys"))
    recorded_mpd = open(os.path.join(s.record, "manifest.mpd")).read()
    check_mpd(recorded_mpd, "cbcs", {"common"}, kids=[k.hex() for k in ROTATED])
    assert default_kids(recorded_mpd) == {p["kid"].hex() for p in prot.values()}

