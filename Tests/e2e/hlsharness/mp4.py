"""A tiny ISO-BMFF box walker: enough to read fMP4 init segments (codecs, timescales, trex defaults) and media
fragments (tfdt, trun sample durations and flags) so tests can check what an HLS origin serves."""
import struct
from dataclasses import dataclass, field

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"mvex", b"moof", b"traf", b"edts", b"dinf", b"udta",
              b"sinf", b"schi"}


class MP4Error(ValueError):
    pass


@dataclass
class Box:
    type: bytes
    start: int
    size: int
    header: int

    @property
    def body(self):
        return self.start + self.header

    @property
    def end(self):
        return self.start + self.size


def boxes(data, start=0, end=None):
    """Iterate over the boxes in data[start:end]; raises MP4Error if sizes do not add up exactly."""
    end = len(data) if end is None else end
    pos = start
    while pos < end:
        if end - pos < 8:
            raise MP4Error(f"{end - pos} trailing bytes at {pos}")
        size, typ = struct.unpack_from(">I4s", data, pos)
        header = 8
        if size == 1:
            if end - pos < 16:
                raise MP4Error("truncated largesize")
            size = struct.unpack_from(">Q", data, pos + 8)[0]
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise MP4Error(f"box {typ!r} at {pos} has size {size}, only {end - pos} bytes left")
        yield Box(typ, pos, size, header)
        pos += size


def children(data, box):
    return list(boxes(data, box.body, box.end))


def find(data, box, path):
    """First descendant at a '/'-separated path of container boxes, e.g. 'mdia/minf/stbl/stsd'."""
    cur = box
    for name in path.split("/"):
        nb = name.encode()
        nxt = None
        for b in boxes(data, cur.body if cur else 0, cur.end if cur else len(data)):
            if b.type == nb:
                nxt = b
                break
        if nxt is None:
            return None
        cur = nxt
    return cur


def find_all(data, box, name):
    nb = name.encode()
    return [b for b in boxes(data, box.body if box else 0, box.end if box else len(data)) if b.type == nb]


def _fullbox(data, box):
    v = data[box.body]
    flags = int.from_bytes(data[box.body + 1:box.body + 4], "big")
    return v, flags, box.body + 4


@dataclass
class Track:
    track_id: int
    handler: str          # 'vide', 'soun', ...
    timescale: int
    sample_entry: str     # 'avc1', 'mp4a', ...
    codec: str            # RFC 6381 string we derive, e.g. 'avc1.64001F', 'mp4a.40.2'
    width: int = 0
    height: int = 0
    channels: int = 0
    sample_rate: int = 0
    default_duration: int = 0
    default_flags: int = 0
    nal_length_size: int = 0  # avcC lengthSizeMinusOne + 1 (H.264 only)


@dataclass
class InitSegment:
    ftyp_major: str
    brands: list
    tracks: list = field(default_factory=list)
    has_mvex: bool = False

    def track(self, track_id):
        for t in self.tracks:
            if t.track_id == track_id:
                return t
        return None

    @property
    def codecs(self):
        return [t.codec for t in self.tracks]


def _descriptors(data, pos, end):
    """Iterate MPEG-4 descriptors (tag, body_start, body_end)."""
    while pos < end:
        tag = data[pos]
        pos += 1
        length = 0
        for _ in range(4):
            b = data[pos]
            pos += 1
            length = (length << 7) | (b & 0x7F)
            if not b & 0x80:
                break
        yield tag, pos, min(pos + length, end)
        pos += length


def _esds_codec(data, esds):
    _, _, pos = _fullbox(data, esds)
    for tag, s, e in _descriptors(data, pos, esds.end):
        if tag != 0x03:
            continue
        flags = data[s + 2]
        p = s + 3
        if flags & 0x80:
            p += 2
        if flags & 0x40:
            p += 1 + data[p]
        if flags & 0x20:
            p += 2
        for tag2, s2, e2 in _descriptors(data, p, e):
            if tag2 != 0x04:
                continue
            oti = data[s2]
            if oti != 0x40:
                return f"mp4a.{oti:02X}" if oti != 0x20 else "mp4v.20"
            for tag3, s3, e3 in _descriptors(data, s2 + 13, e2):
                if tag3 == 0x05 and e3 > s3:
                    aot = data[s3] >> 3
                    if aot == 31 and e3 > s3 + 1:
                        aot = 32 + (((data[s3] & 0x07) << 3) | (data[s3 + 1] >> 5))
                    return f"mp4a.40.{aot}"
            return "mp4a.40"
    raise MP4Error("esds without DecoderConfigDescriptor")


def hevc_codec_suffix(hvcc):
    """ISO/IEC 14496-15 Annex E.3: "<space letter><profile_idc>.<compatibility flags in reverse bit order, hex>.
    <L|H><level_idc>[.<constraint byte, hex>...]" with trailing zero constraint bytes left out."""
    if len(hvcc) < 13 or hvcc[0] != 1:
        raise MP4Error("hvcC is not an HEVCDecoderConfigurationRecord")
    space, tier, profile = hvcc[1] >> 6, hvcc[1] >> 5 & 1, hvcc[1] & 0x1F
    flags = int.from_bytes(hvcc[2:6], "big")
    reversed_flags = int(f"{flags:032b}"[::-1], 2)
    constraints = list(hvcc[6:12])
    while constraints and constraints[-1] == 0:
        constraints.pop()
    text = f"{'' if space == 0 else 'ABC'[space - 1]}{profile}.{reversed_flags:X}.{'H' if tier else 'L'}{hvcc[12]}"
    return text + "".join(f".{b:X}" for b in constraints)


def _sample_entry_codec(data, entry):
    fourcc = entry.type.decode("latin-1")
    info = {}
    if fourcc in ("avc1", "avc3", "hvc1", "hev1", "mp4v", "av01", "vp09", "encv"):
        info["width"], info["height"] = struct.unpack_from(">HH", data, entry.body + 24)
        kids = list(boxes(data, entry.body + 78, entry.end))
        if fourcc in ("avc1", "avc3"):
            avcc = next((b for b in kids if b.type == b"avcC"), None)
            if avcc is None:
                raise MP4Error(f"{fourcc} without avcC")
            p = avcc.body
            if data[p] != 1:
                raise MP4Error(f"avcC configurationVersion {data[p]}")
            info["nal_length_size"] = (data[p + 4] & 3) + 1
            return f"{fourcc}.{data[p + 1]:02X}{data[p + 2]:02X}{data[p + 3]:02X}", info
        if fourcc in ("hvc1", "hev1"):
            hvcc = next((b for b in kids if b.type == b"hvcC"), None)
            if hvcc is None:
                raise MP4Error(f"{fourcc} without hvcC")
            return f"{fourcc}.{hevc_codec_suffix(data[hvcc.body:hvcc.end])}", info
        if fourcc == "av01":
            av1c = next((b for b in kids if b.type == b"av1C"), None)
            if av1c is None or av1c.end - av1c.body < 4:
                raise MP4Error("av01 without av1C")
            b1, b2 = data[av1c.body + 1], data[av1c.body + 2]
            profile, level, tier = b1 >> 5, b1 & 0x1F, "H" if b2 >> 7 else "M"
            high, twelve = b2 >> 6 & 1, b2 >> 5 & 1
            depth = (12 if twelve else 10) if high and profile == 2 else (10 if high else 8)
            return f"av01.{profile}.{level:02d}{tier}.{depth:02d}", info
        if fourcc == "mp4v":
            esds = next((b for b in kids if b.type == b"esds"), None)
            return (_esds_codec(data, esds) if esds else "mp4v"), info
        return fourcc, info
    if fourcc in ("mp4a", "Opus", "fLaC", "ac-3", "ec-3", "enca"):
        info["channels"] = struct.unpack_from(">H", data, entry.body + 16)[0]
        info["sample_rate"] = struct.unpack_from(">I", data, entry.body + 24)[0] >> 16
        kids = list(boxes(data, entry.body + 28, entry.end))
        if fourcc == "mp4a":
            esds = next((b for b in kids if b.type == b"esds"), None)
            if esds is None:
                raise MP4Error("mp4a without esds")
            return _esds_codec(data, esds), info
        return fourcc, info
    return fourcc, info


def parse_init(data):
    top = list(boxes(data))
    types = [b.type for b in top]
    if not types or types[0] != b"ftyp":
        raise MP4Error(f"init segment does not start with ftyp: {types}")
    if b"moov" not in types:
        raise MP4Error(f"init segment without moov: {types}")
    if b"moof" in types or b"mdat" in types:
        raise MP4Error(f"init segment contains media: {types}")
    ftyp = top[0]
    major = data[ftyp.body:ftyp.body + 4].decode("latin-1")
    brands = [data[i:i + 4].decode("latin-1") for i in range(ftyp.body + 8, ftyp.end, 4)]
    moov = top[types.index(b"moov")]
    init = InitSegment(major, brands)
    trex = {}
    mvex = find(data, moov, "mvex")
    if mvex is not None:
        init.has_mvex = True
        for t in find_all(data, mvex, "trex"):
            _, _, p = _fullbox(data, t)
            tid, _sdi, dur, _size, flags = struct.unpack_from(">IIIII", data, p)
            trex[tid] = (dur, flags)
    for trak in find_all(data, moov, "trak"):
        tkhd = find(data, trak, "tkhd")
        v, _, p = _fullbox(data, tkhd)
        track_id = struct.unpack_from(">I", data, p + (16 if v == 1 else 8))[0]
        mdhd = find(data, trak, "mdia/mdhd")
        v, _, p = _fullbox(data, mdhd)
        timescale = struct.unpack_from(">I", data, p + (16 if v == 1 else 8))[0]
        hdlr = find(data, trak, "mdia/hdlr")
        _, _, p = _fullbox(data, hdlr)
        handler = data[p + 4:p + 8].decode("latin-1")
        stsd = find(data, trak, "mdia/minf/stbl/stsd")
        if stsd is None:
            raise MP4Error(f"track {track_id} without stsd")
        _, _, p = _fullbox(data, stsd)
        entries = list(boxes(data, p + 4, stsd.end))
        if len(entries) != 1:
            raise MP4Error(f"track {track_id} has {len(entries)} sample entries")
        codec, info = _sample_entry_codec(data, entries[0])
        d, f = trex.get(track_id, (0, 0))
        init.tracks.append(Track(track_id, handler, timescale, entries[0].type.decode("latin-1"), codec,
                                 default_duration=d, default_flags=f, **info))
    return init


def is_sync(flags):
    """ISO/IEC 14496-12 sample flags: sample_is_non_sync_sample bit clear and not depends_on=1."""
    return not (flags >> 16) & 1 and ((flags >> 24) & 3) != 1


@dataclass
class TrackRun:
    track_id: int
    base_decode_time: int
    durations: list
    sizes: list
    flags: list
    cts_offsets: list

    @property
    def duration(self):
        return sum(self.durations)


@dataclass
class Fragment:
    top_types: list
    runs: list  # TrackRun per traf, in order

    def track_runs(self, track_id):
        return [r for r in self.runs if r.track_id == track_id]


def parse_fragment(data, init=None):
    """Parse a media segment (optionally styp/sidx/prft, then one or more moof+mdat pairs)."""
    top = list(boxes(data))
    types = [b.type.decode("latin-1") for b in top]
    moofs = [b for b in top if b.type == b"moof"]
    if not moofs:
        raise MP4Error(f"segment without moof: {types}")
    allowed = {"styp", "sidx", "prft", "moof", "mdat", "emsg", "free"}
    if set(types) - allowed:
        raise MP4Error(f"unexpected top-level boxes {types}")
    runs = []
    for i, b in enumerate(top):
        if b.type != b"moof":
            continue
        if i + 1 >= len(top) or top[i + 1].type != b"mdat":
            raise MP4Error(f"moof at {b.start} not followed by mdat: {types}")
        mdat = top[i + 1]
        for traf in find_all(data, b, "traf"):
            tfhd = find(data, traf, "tfhd")
            _, fl, p = _fullbox(data, tfhd)
            track_id = struct.unpack_from(">I", data, p)[0]
            p += 4
            d_dur = d_size = d_flags = None
            if init is not None and init.track(track_id) is not None:
                t = init.track(track_id)
                d_dur, d_flags = t.default_duration, t.default_flags
            if fl & 0x1:
                p += 8
            if fl & 0x2:
                p += 4
            if fl & 0x8:
                d_dur = struct.unpack_from(">I", data, p)[0]
                p += 4
            if fl & 0x10:
                d_size = struct.unpack_from(">I", data, p)[0]
                p += 4
            if fl & 0x20:
                d_flags = struct.unpack_from(">I", data, p)[0]
                p += 4
            tfdt = find(data, traf, "tfdt")
            if tfdt is None:
                raise MP4Error(f"traf for track {track_id} without tfdt")
            v, _, p = _fullbox(data, tfdt)
            bdt = struct.unpack_from(">Q" if v == 1 else ">I", data, p)[0]
            durs, sizes, flags, ctss = [], [], [], []
            for trun in find_all(data, traf, "trun"):
                v, tf, p = _fullbox(data, trun)
                count = struct.unpack_from(">I", data, p)[0]
                p += 4
                data_offset = None
                if tf & 0x1:
                    data_offset = struct.unpack_from(">i", data, p)[0]
                    p += 4
                first_flags = None
                if tf & 0x4:
                    first_flags = struct.unpack_from(">I", data, p)[0]
                    p += 4
                for k in range(count):
                    dd, ss, ff, cc = d_dur, d_size, d_flags, 0
                    if tf & 0x100:
                        dd = struct.unpack_from(">I", data, p)[0]
                        p += 4
                    if tf & 0x200:
                        ss = struct.unpack_from(">I", data, p)[0]
                        p += 4
                    if tf & 0x400:
                        ff = struct.unpack_from(">I", data, p)[0]
                        p += 4
                    if tf & 0x800:
                        cc = struct.unpack_from(">i" if v == 1 else ">I", data, p)[0]
                        p += 4
                    if k == 0 and first_flags is not None:
                        ff = first_flags
                    if dd is None or ss is None:
                        raise MP4Error(f"track {track_id}: sample without duration/size (no defaults)")
                    durs.append(dd)
                    sizes.append(ss)
                    flags.append(ff if ff is not None else 0)
                    ctss.append(cc)
                if data_offset is not None and (fl & 0x20000 or not fl & 0x1):
                    start = b.start + data_offset
                    if start < mdat.body or start > mdat.end:
                        raise MP4Error(f"trun data_offset {data_offset} points outside mdat")
            runs.append(TrackRun(track_id, bdt, durs, sizes, flags, ctss))
        # the sizes of all runs in this moof must fit the mdat payload
        total = sum(sum(r.sizes) for r in runs[-len(find_all(data, b, "traf")):])
        if total > mdat.size - mdat.header:
            raise MP4Error(f"samples ({total} bytes) overflow mdat ({mdat.size - mdat.header} bytes)")
    return Fragment(types, runs)


def first_sample_range(data, init, track_id):
    """(offset, size) of the first sample of track_id in a media segment (None if it has none for that track).
    The data offset follows ISO/IEC 14496-12 §8.8.7/8.8.8: tfhd base-data-offset if present, else the start of
    the moof; plus the trun data_offset (or the mdat payload start when the trun has none)."""
    top = list(boxes(data))
    for i, b in enumerate(top):
        if b.type != b"moof" or i + 1 >= len(top):
            continue
        mdat = top[i + 1]
        for traf in find_all(data, b, "traf"):
            tfhd = find(data, traf, "tfhd")
            _, fl, p = _fullbox(data, tfhd)
            if struct.unpack_from(">I", data, p)[0] != track_id:
                continue
            base = struct.unpack_from(">Q", data, p + 4)[0] if fl & 0x1 else b.start
            q = p + 4 + (8 if fl & 0x1 else 0) + (4 if fl & 0x2 else 0) + (4 if fl & 0x8 else 0)
            d_size = struct.unpack_from(">I", data, q)[0] if fl & 0x10 else None
            trun = find(data, traf, "trun")
            if trun is None:
                continue
            _, tf, p = _fullbox(data, trun)
            if struct.unpack_from(">I", data, p)[0] == 0:
                continue
            p += 4
            start = mdat.body
            if tf & 0x1:
                start = base + struct.unpack_from(">i", data, p)[0]
                p += 4
            if tf & 0x4:
                p += 4
            if tf & 0x100:
                p += 4
            size = struct.unpack_from(">I", data, p)[0] if tf & 0x200 else d_size
            if size is None:
                raise MP4Error(f"track {track_id}: first sample size unknown")
            return start, size
    return None


def first_sample_bytes(data, init, track_id):
    """The bytes of the first sample of track_id in a media segment (None if the segment has none for it)."""
    r = first_sample_range(data, init, track_id)
    return None if r is None else data[r[0]:r[0] + r[1]]


def nal_unit_types(sample, length_size=4):
    """H.264 NAL unit types (nal_unit_type, ISO/IEC 14496-10 §7.4.1) in a length-prefixed sample."""
    out, pos = [], 0
    while pos + length_size <= len(sample):
        n = int.from_bytes(sample[pos:pos + length_size], "big")
        pos += length_size
        if n == 0 or pos + n > len(sample):
            raise MP4Error(f"NAL unit of {n} bytes at {pos} overruns the {len(sample)}-byte sample")
        out.append(sample[pos] & 0x1F)
        pos += n
    return out
