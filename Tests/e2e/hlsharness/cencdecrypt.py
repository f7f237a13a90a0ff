"""An independent ISO/IEC 23001-7 decrypter for tests (pycryptodome's AES): shares no code with the origin.

It reads the protection of each track from the init segment (`encv`/`enca` -> `sinf` -> `frma`, `schm`, `schi`/`tenc`),
then, per fragment, finds each sample's auxiliary information the way a player does: `saio` (offset from the `moof`,
default-base-is-moof) and `saiz` (its size) locate the IV and subsamples, which are also checked against `senc`;
`trun` `data_offset` (from the `moof`) locates the samples in `mdat`. It decrypts in place:

- `cenc`: AES-CTR, the sample's IV (8 bytes + a 64-bit block counter from 0, or 16 bytes) as the first counter block,
  one keystream over the protected bytes of all the sample's subsamples.
- `cbcs`: AES-CBC from the constant IV, restarted at each subsample; of each crypt+skip 16-byte blocks of a protected
  range, the first crypt are encrypted (0:0: every whole block); a trailing partial block is clear.
"""
import struct

from Crypto.Cipher import AES

from .mp4 import boxes


class CencError(ValueError):
    pass


def _children(data, box_start, header, end):
    return list(boxes(data, box_start + header, end))


def _find(data, start, end, path):
    """The first box along `path` (list of types) inside data[start:end], as (start, header, end)."""
    for b in boxes(data, start, end):
        if b.type == path[0]:
            if len(path) == 1:
                return b
            inner = b.body
            if b.type in (b"encv", b"enca", b"avc1", b"hvc1", b"mp4a"):
                inner = b.body + (78 if b.type in (b"encv", b"avc1", b"hvc1") else 28)
            elif b.type == b"stsd":
                inner = b.body + 8
            found = _find(data, inner, b.end, path[1:])
            if found is not None:
                return found
    return None


def read_protection(init):
    """track_ID -> dict(scheme, original, iv_size, constant_iv, crypt, skip, kid) for each protected track."""
    out = {}
    moov = _find(init, 0, len(init), [b"moov"])
    for trak in boxes(init, moov.body, moov.end):
        if trak.type != b"trak":
            continue
        tkhd = _find(init, trak.body, trak.end, [b"tkhd"])
        version = init[tkhd.body]
        track_id = struct.unpack_from(">I", init, tkhd.body + 4 + (16 if version == 1 else 8))[0]
        stsd = _find(init, trak.body, trak.end, [b"mdia", b"minf", b"stbl", b"stsd"])
        entry = next(iter(boxes(init, stsd.body + 8, stsd.end)))
        if entry.type not in (b"encv", b"enca"):
            continue
        first = entry.body + (78 if entry.type == b"encv" else 28)
        sinf = next(b for b in boxes(init, first, entry.end) if b.type == b"sinf")
        frma = _find(init, sinf.body, sinf.end, [b"frma"])
        schm = _find(init, sinf.body, sinf.end, [b"schm"])
        tenc = _find(init, sinf.body, sinf.end, [b"schi", b"tenc"])
        scheme = init[schm.body + 4:schm.body + 8].decode()
        version = init[tenc.body]
        p = tenc.body + 4
        pattern = init[p + 1]
        iv_size = init[p + 3]
        kid = init[p + 4:p + 20]
        constant_iv = None
        if iv_size == 0:
            n = init[p + 20]
            constant_iv = init[p + 21:p + 21 + n]
        out[track_id] = dict(scheme=scheme, original=init[frma.body:frma.body + 4].decode(), iv_size=iv_size,
                             constant_iv=constant_iv, crypt=(pattern >> 4) if version else 0,
                             skip=(pattern & 15) if version else 0, kid=kid, protected=init[p + 2])
    return out


def _aux_entries(data, moof_start, traf, prot, sample_count):
    """(iv, [(clear, protected)]) per sample, read through saio/saiz, and checked against senc."""
    saiz = saio = senc = None
    for b in boxes(data, traf.body, traf.end):
        if b.type == b"saiz":
            saiz = b
        elif b.type == b"saio":
            saio = b
        elif b.type == b"senc":
            senc = b
    if saiz is None or saio is None or senc is None:
        raise CencError("a protected traf without saiz, saio or senc")
    flags = struct.unpack_from(">I", data, saiz.body)[0] & 0xFFFFFF
    p = saiz.body + 4 + (8 if flags & 1 else 0)
    default_size, count = struct.unpack_from(">BI", data, p)
    sizes = [default_size] * count if default_size else list(data[p + 5:p + 5 + count])
    if saiz.end != p + 5 + (0 if default_size else count):
        raise CencError("saiz size table does not fill the box")
    if count != sample_count:
        raise CencError(f"saiz counts {count} samples, trun {sample_count}")
    v_flags = struct.unpack_from(">I", data, saio.body)[0]
    p = saio.body + 4 + (8 if v_flags & 1 else 0)
    entry_count = struct.unpack_from(">I", data, p)[0]
    if entry_count != 1:
        raise CencError("saio with more than one offset")
    offset = struct.unpack_from(">Q" if v_flags >> 24 else ">I", data, p + 4)[0]
    senc_flags = struct.unpack_from(">I", data, senc.body)[0] & 0xFFFFFF
    senc_count = struct.unpack_from(">I", data, senc.body + 4)[0]
    if senc_count != sample_count or moof_start + offset != senc.body + 8:
        raise CencError(f"saio offset {offset} does not point at senc's first entry")
    at = moof_start + offset
    entries = []
    for size in sizes:
        raw = data[at:at + size]
        iv = raw[:prot["iv_size"]]
        subs = []
        if senc_flags & 2:
            (n,) = struct.unpack_from(">H", raw, prot["iv_size"])
            for k in range(n):
                subs.append(struct.unpack_from(">HI", raw, prot["iv_size"] + 2 + 6 * k))
            if len(raw) != prot["iv_size"] + 2 + 6 * n:
                raise CencError("saiz size does not match the entry")
        elif len(raw) != prot["iv_size"]:
            raise CencError("saiz size does not match the IV size")
        entries.append((iv, subs))
        at += size
    return entries


def _ranges(start, size, subs):
    if not subs:
        return [(start, start + size)]
    out, at = [], start
    for clear, protected in subs:
        at += clear
        out.append((at, at + protected))
        at += protected
    if at != start + size:
        raise CencError(f"subsamples cover {at - start} of {size} bytes")
    return out


def decrypt_sample(buf, start, size, iv, subs, prot, key):
    ranges = _ranges(start, size, subs)
    if prot["scheme"] == "cenc":
        counter = bytes(iv) + bytes(16 - len(iv))
        c = AES.new(key, AES.MODE_CTR, initial_value=counter, nonce=b"")
        data = b"".join(bytes(buf[a:b]) for a, b in ranges)
        clear = c.decrypt(data)
        k = 0
        for a, b in ranges:
            buf[a:b] = clear[k:k + b - a]
            k += b - a
    elif prot["scheme"] == "cbcs":
        crypt, skip = prot["crypt"], prot["skip"]
        for a, b in ranges:
            blocks = [a + 16 * i for i in range((b - a) // 16) if crypt + skip == 0 or i % (crypt + skip) < crypt]
            if not blocks:
                continue
            c = AES.new(key, AES.MODE_CBC, iv=bytes(prot["constant_iv"]))
            clear = c.decrypt(b"".join(bytes(buf[x:x + 16]) for x in blocks))
            for i, x in enumerate(blocks):
                buf[x:x + 16] = clear[16 * i:16 * i + 16]
    else:
        raise CencError(f"scheme {prot['scheme']}")


def seig(data, traf):
    """The KID, IV size, constant IV and pattern a traf's `seig` sample group (sgpd + sbgp, key rotation) gives its
    samples, or None. Only the form "every sample -> this traf's first entry" is read."""
    sgpd = next((b for b in boxes(data, traf.body, traf.end) if b.type == b"sgpd"
                 and data[b.body + 4:b.body + 8] == b"seig"), None)
    if sgpd is None:
        return None
    sbgp = next((b for b in boxes(data, traf.body, traf.end) if b.type == b"sbgp"
                 and data[b.body + 4:b.body + 8] == b"seig"), None)
    if sbgp is None or struct.unpack_from(">I", data, sbgp.body + 16)[0] != 0x10001:
        raise CencError("a seig sgpd without its sbgp to the traf's entry 1")
    version = data[sgpd.body]
    p = sgpd.body + 8 + (4 if version == 1 else 0)
    (count,) = struct.unpack_from(">I", data, p)
    if count != 1:
        raise CencError("more than one seig entry")
    e = p + 4
    pattern, protected, iv_size = data[e + 1], data[e + 2], data[e + 3]
    kid = data[e + 4:e + 20]
    constant = None
    if iv_size == 0:
        n = data[e + 20]
        constant = data[e + 21:e + 21 + n]
    return dict(kid=kid, iv_size=iv_size, constant_iv=constant, crypt=pattern >> 4, skip=pattern & 15, protected=protected)


def decrypt_segment(data, protection, key):
    """(decrypted bytes, [(track_id, sample bytes)] in order, stats) of a segment (styp? (moof mdat)+).
    `key`: 16 bytes, or {KID bytes: key bytes} to pick each fragment's key by the KID its tenc or seig names."""
    buf = bytearray(data)
    samples = []
    stats = {"samples": 0, "subsamples": 0, "protected_bytes": 0}
    top = list(boxes(data))
    for i, moof in enumerate(top):
        if moof.type != b"moof":
            continue
        for traf in boxes(data, moof.body, moof.end):
            if traf.type != b"traf":
                continue
            tfhd = next(b for b in boxes(data, traf.body, traf.end) if b.type == b"tfhd")
            tf_flags = struct.unpack_from(">I", data, tfhd.body)[0] & 0xFFFFFF
            if not tf_flags & 0x020000:
                raise CencError("tfhd without default-base-is-moof")
            track_id = struct.unpack_from(">I", data, tfhd.body + 4)[0]
            trun = next(b for b in boxes(data, traf.body, traf.end) if b.type == b"trun")
            tr_flags = struct.unpack_from(">I", data, trun.body)[0] & 0xFFFFFF
            count, data_offset = struct.unpack_from(">Ii", data, trun.body + 4)
            p = trun.body + 12 + (4 if tr_flags & 4 else 0)
            sizes = []
            for _ in range(count):
                if tr_flags & 0x100:
                    p += 4
                sizes.append(struct.unpack_from(">I", data, p)[0])
                p += 4 if tr_flags & 0x200 else 0
                p += 4 if tr_flags & 0x400 else 0
                p += 4 if tr_flags & 0x800 else 0
            prot = protection.get(track_id)
            if prot:
                group = seig(data, traf)
                if group and not group["protected"]:
                    prot = None                     # a clear lead: the samples are marked unprotected
                    stats["clear_trafs"] = stats.get("clear_trafs", 0) + 1
                elif group:
                    prot = {**prot, **group}
                    stats.setdefault("kids", []).append(bytes(group["kid"]))
            entries = _aux_entries(data, moof.start, traf, prot, count) if prot else [None] * count
            sample_key = key.get(bytes(prot["kid"])) if prot and isinstance(key, dict) else key
            if prot and sample_key is None:
                raise CencError(f"no key for KID {bytes(prot['kid']).hex()}")
            at = moof.start + data_offset
            for size, entry in zip(sizes, entries):
                if entry is not None:
                    iv, subs = entry
                    decrypt_sample(buf, at, size, iv, subs, prot, sample_key)
                    stats["subsamples"] += len(subs)
                    stats["protected_bytes"] += sum(pr for _, pr in subs) if subs else size
                samples.append((track_id, bytes(buf[at:at + size])))
                stats["samples"] += 1
                at += size
    return bytes(buf), samples, stats


def clear_samples(data):
    """[(track_id, sample bytes)] of a clear segment, in order."""
    return decrypt_segment(data, {}, None)[1]
