"""Single-file VOD (`package --single-file`): playlists that address one CMAF file per rendition by byte ranges,
and the file's `sidx`.

RFC 8216 §4.3.2.2: "The EXT-X-BYTERANGE tag indicates that a Media Segment is a sub-range of the resource
identified by its URI." ... "#EXT-X-BYTERANGE:<n>[@<o>] where n is a decimal-integer indicating the length of the
sub-range in bytes. If present, o is a decimal-integer indicating the start of the sub-range, as a byte offset from
the beginning of the resource. If o is not present, the sub-range begins at the next byte following the sub-range
of the previous Media Segment." §4.3.2.5 (EXT-X-MAP): "BYTERANGE ... specifying a byte range into the resource
specified by the URI attribute. This range SHOULD contain only the Media Initialization Section."

So a sub-range that is an fMP4 Media Segment must itself be whole boxes: it starts on a `styp` or `moof` box
boundary and ends on a box boundary, and the map's range is exactly `ftyp`+`moov`.
"""
import struct

from . import mp4


def resolve(value, prev_uri, prev_end, uri):
    """(offset, length) of an EXT-X-BYTERANGE value; an absent offset continues the previous sub-range of the same
    resource (None when there is none: the playlist is invalid)."""
    n, _, o = value.partition("@")
    length = int(n)
    if o:
        return int(o), length
    if prev_end is None or prev_uri != uri:
        return None
    return prev_end, length


def parse_sidx(data, box):
    """ISO/IEC 14496-12 §8.16.3.2, versions 0 and 1."""
    p = box.body
    version = data[p]
    ref_id, timescale = struct.unpack_from(">II", data, p + 4)
    if version == 0:
        ept, first_offset = struct.unpack_from(">II", data, p + 12)
        p += 20
    else:
        ept, first_offset = struct.unpack_from(">QQ", data, p + 12)
        p += 28
    _, count = struct.unpack_from(">HH", data, p)
    p += 4
    refs = []
    for _ in range(count):
        a, dur, s = struct.unpack_from(">III", data, p)
        refs.append({"type": a >> 31, "size": a & 0x7FFFFFFF, "duration": dur, "sap": s >> 31,
                     "sap_type": (s >> 28) & 7, "sap_delta": s & 0x0FFFFFFF})
        p += 12
    if p != box.end:
        raise mp4.MP4Error(f"sidx: {box.end - p} bytes after {count} references")
    return {"version": version, "reference_id": ref_id, "timescale": timescale, "ept": ept,
            "first_offset": first_offset, "refs": refs}


def check_file(data, name, map_range, segments, errors, init=None):
    """Check one single-file rendition: `map_range` (offset, length) and `segments` [(offset, length, extinf)] in
    playlist order against the file's top-level boxes and its sidx. Returns the parsed sidx (or None)."""
    try:
        top = list(mp4.boxes(data))
    except mp4.MP4Error as e:
        errors.add(f"{name}: top-level boxes do not parse: {e}")
        return None
    starts = {b.start: b for b in top}
    ends = {b.end for b in top}
    types = [b.type.decode("latin-1") for b in top]
    moov = next((b for b in top if b.type == b"moov"), None)
    if types[:2] != ["ftyp", "moov"] or moov is None:
        errors.add(f"{name}: starts with {types[:3]}, not ftyp moov")
        return None
    if map_range != (0, moov.end):
        errors.add(f"{name}: EXT-X-MAP BYTERANGE {map_range[1]}@{map_range[0]} is not ftyp+moov (0..{moov.end})")
    for off, length, _ in segments:
        first = starts.get(off)
        if first is None or first.type not in (b"styp", b"moof"):
            errors.add(f"{name}: EXT-X-BYTERANGE {length}@{off} does not start on a styp/moof box "
                       f"({first.type if first else 'inside a box'})")
        if off + length not in ends:
            errors.add(f"{name}: EXT-X-BYTERANGE {length}@{off} does not end on a box boundary")
    for (o1, l1, _), (o2, _, _) in zip(segments, segments[1:]):
        if o1 + l1 != o2:
            errors.add(f"{name}: segment ranges not contiguous ({l1}@{o1} then @{o2})")
    sidxs = [b for b in top if b.type == b"sidx"]
    if len(sidxs) != 1:
        errors.add(f"{name}: {len(sidxs)} sidx boxes, expected 1")
        return None
    box = sidxs[0]
    try:
        sidx = parse_sidx(data, box)
    except (mp4.MP4Error, struct.error) as e:
        errors.add(f"{name}: sidx does not parse: {e}")
        return None
    if not segments:
        return sidx
    # §8.16.3.3: first_offset is "the distance in bytes, in the file containing media, from the anchor point, to
    # the first byte of the indexed material"; the anchor point is the first byte after the sidx.
    if box.end + sidx["first_offset"] != segments[0][0]:
        errors.add(f"{name}: sidx ends at {box.end} + first_offset {sidx['first_offset']}, first segment at "
                   f"{segments[0][0]}")
    sizes = [r["size"] for r in sidx["refs"]]
    if sizes != [length for _, length, _ in segments]:
        errors.add(f"{name}: sidx referenced sizes {sizes[:4]}... differ from the EXT-X-BYTERANGE lengths")
    if box.end + sidx["first_offset"] + sum(sizes) != len(data):
        errors.add(f"{name}: sidx references {sum(sizes)} bytes, the file has {len(data) - box.end} after it")
    if any(r["type"] != 0 for r in sidx["refs"]):
        errors.add(f"{name}: sidx references another sidx (reference_type 1)")
    if init is not None:
        ref = next((t for t in init.tracks if t.handler == "vide"), init.tracks[0] if init.tracks else None)
        if ref is not None:
            if sidx["reference_id"] != ref.track_id or sidx["timescale"] != ref.timescale:
                errors.add(f"{name}: sidx reference_ID {sidx['reference_id']} timescale {sidx['timescale']}, "
                           f"reference track is {ref.track_id} at {ref.timescale}")
            # earliest_presentation_time: the smallest tfdt + composition offset of the first segment's samples.
            off, length, _ = segments[0]
            try:
                frag = mp4.parse_fragment(data[off:off + length], init)
                times = [r.base_decode_time + sum(r.durations[:i]) + r.cts_offsets[i]
                         for r in frag.track_runs(ref.track_id) for i in range(len(r.durations))]
                if times and min(times) != sidx["ept"]:
                    errors.add(f"{name}: sidx earliest_presentation_time {sidx['ept']}, first segment's is {min(times)}")
            except (mp4.MP4Error, IndexError) as e:
                errors.add(f"{name}: first segment does not parse: {e}")
    for k, (r, (_, _, extinf)) in enumerate(zip(sidx["refs"], segments)):
        secs = r["duration"] / sidx["timescale"]
        if extinf is not None and abs(secs - extinf) > 0.05:
            errors.add(f"{name}: sidx subsegment {k} lasts {secs:.6f}s, EXTINF {extinf:.6f}")
        if not r["sap"] or r["sap_type"] not in (1, 2):
            errors.add(f"{name}: subsegment {k} does not start with a SAP of type 1 or 2")
    return sidx


def segment_ranges(pl):
    """Per segment of a parsed media playlist: (offset, length) of its EXT-X-BYTERANGE, or None without one.
    Raises ValueError for an absent offset with no previous sub-range of the same resource."""
    out, prev_uri, prev_end = [], None, None
    for s in pl.segments:
        if s.byterange is None:
            out.append(None)
            prev_uri, prev_end = s.uri, None
            continue
        r = resolve(s.byterange, prev_uri, prev_end, s.uri)
        if r is None:
            raise ValueError(f"EXT-X-BYTERANGE:{s.byterange} without an offset and no previous sub-range of {s.uri}")
        out.append(r)
        prev_uri, prev_end = s.uri, r[0] + r[1]
    return out


def map_range(seg):
    """(offset, length) of the segment's EXT-X-MAP BYTERANGE, or None."""
    if seg.map_byterange is None:
        return None
    n, _, o = seg.map_byterange.partition("@")
    return int(o or 0), int(n)


def cut(data, r):
    return data if r is None or data is None else data[r[0]:r[0] + r[1]]
