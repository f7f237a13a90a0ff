"""Checks of a multivariant presentation (an ABR ladder: video rungs + an audio rendition group), live or VOD:
the multivariant playlist itself, every media playlist (livecheck.check_media_playlist, all at once), and the rules
across renditions.

Rules quote draft-pantos-hls-rfc8216bis (HTTP Live Streaming 2nd Edition, "§" below) or RFC 8216 where the text
is the same; rules the harness adds on top are marked as such. The delta-update check lives in deltacheck.py.
"""
import concurrent.futures
import os
import posixpath
import re
from dataclasses import dataclass, field
from fractions import Fraction

from . import clients, http, llcheck, m3u8, singlefile
from .deltacheck import DeltaResult, check_delta_update, expected_skip, with_query  # noqa: F401 - API
from .livecheck import LiveCheckResult, SegmentRecord, check_media_playlist
from .segcheck import Errors, SegmentValidator, check_common_headers, codec_matches

AAC_FRAME = 1024            # samples per AAC-LC frame
PDT_MS = 0.002              # PROGRAM-DATE-TIME is written to the millisecond (two roundings)


@dataclass
class Rendition:
    name: str        # the playlist URI without ".m3u8" ("720p", "audio")
    uri: str         # as written in the multivariant playlist
    url: str         # absolute URL (live) or path relative to the presentation directory (VOD)
    kind: str        # "video": the URI of an EXT-X-STREAM-INF; "audio": an EXT-X-MEDIA TYPE=AUDIO
    attrs: dict


def renditions(mv, base_url=None):
    out = []
    for v in mv.variants:
        out.append(Rendition(re.sub(r"\.m3u8$", "", v.uri), v.uri, http.join(base_url, v.uri) if base_url else v.uri,
                             "video", v.attrs))
    for m in mv.media:
        if m.get("TYPE") == "AUDIO" and m.get("URI"):
            u = m["URI"]
            out.append(Rendition(re.sub(r"\.m3u8$", "", u), u, http.join(base_url, u) if base_url else u, "audio", m))
    return out


def _int(attrs, key):
    try:
        return int(attrs[key])
    except (KeyError, ValueError):
        return None


def check_multivariant(mv, errors, order="descending"):
    """Rules that need only the multivariant playlist."""
    e = errors.add
    if not mv.variants:
        e("multivariant playlist has no EXT-X-STREAM-INF")
        return
    groups = {}
    for m in mv.media:
        for k in ("TYPE", "GROUP-ID", "NAME"):
            # "TYPE ... This attribute is REQUIRED." "GROUP-ID ... REQUIRED." "NAME ... REQUIRED." (§4.4.6.1)
            if k not in m:
                e(f"EXT-X-MEDIA without {k}: {m}")
        groups.setdefault((m.get("TYPE"), m.get("GROUP-ID")), []).append(m)
        # "If the AUTOSELECT attribute is present, its value MUST be YES if the value of the DEFAULT attribute is
        # YES." (§4.4.6.1)
        if m.get("DEFAULT") == "YES" and m.get("AUTOSELECT", "YES") != "YES":
            e(f"EXT-X-MEDIA {m.get('NAME')!r}: DEFAULT=YES with AUTOSELECT={m.get('AUTOSELECT')}")
        # "The CHANNELS attribute MUST NOT be present unless the TYPE is AUDIO." "All audio EXT-X-MEDIA tags
        # SHOULD have a CHANNELS attribute." (§4.4.6.1; the SHOULD is enforced)
        if m.get("TYPE") == "AUDIO" and not re.fullmatch(r"\d+(/.*)?", m.get("CHANNELS", "")):
            e(f"audio EXT-X-MEDIA {m.get('NAME')!r} without a CHANNELS count")
        if m.get("TYPE") != "AUDIO" and "CHANNELS" in m:
            e(f"CHANNELS on EXT-X-MEDIA TYPE={m.get('TYPE')}")
    for (typ, gid), members in groups.items():
        names = [m.get("NAME") for m in members]
        # "All EXT-X-MEDIA tags in the same Group MUST have different NAME attributes." "A Group MUST NOT have
        # more than one member with a DEFAULT attribute of YES." (§4.4.6.1.1)
        if len(names) != len(set(names)):
            e(f"group {typ} {gid!r} repeats a NAME: {names}")
        if sum(1 for m in members if m.get("DEFAULT") == "YES") > 1:
            e(f"group {typ} {gid!r} has more than one DEFAULT=YES member")
    bws = []
    for v in mv.variants:
        a = v.attrs
        what = f"EXT-X-STREAM-INF {v.uri}"
        # "Every EXT-X-STREAM-INF tag MUST include the BANDWIDTH attribute." (§4.4.6.2) AVERAGE-BANDWIDTH, CODECS
        # ("SHOULD"), RESOLUTION and FRAME-RATE ("recommended if the Variant Stream includes video") are all
        # required by the harness.
        for k, pat in (("BANDWIDTH", r"\d+"), ("AVERAGE-BANDWIDTH", r"\d+"), ("CODECS", r".+"),
                       ("RESOLUTION", r"\d+x\d+"), ("FRAME-RATE", r"\d+\.\d{3}")):
            if k not in a:
                e(f"{what}: no {k}")
            elif not re.fullmatch(pat, a[k]):
                # FRAME-RATE: "a decimal-floating-point describing the maximum frame rate ..., rounded to three
                # decimal places" (§4.4.6.2)
                e(f"{what}: {k}={a[k]!r} is not of the form {pat}")
        bw, avg = _int(a, "BANDWIDTH"), _int(a, "AVERAGE-BANDWIDTH")
        bws.append(bw or 0)
        if bw is not None and avg is not None and avg > bw:
            e(f"{what}: AVERAGE-BANDWIDTH {avg} > BANDWIDTH {bw}")
        # AUDIO: "It MUST match the value of the GROUP-ID attribute of an EXT-X-MEDIA tag elsewhere in the
        # Multivariant Playlist whose TYPE attribute is AUDIO." (§4.4.6.2) Harness: that rendition has a URI.
        if "AUDIO" in a:
            members = groups.get(("AUDIO", a["AUDIO"]), [])
            if not members:
                e(f"{what}: AUDIO={a['AUDIO']!r} but no EXT-X-MEDIA TYPE=AUDIO has that GROUP-ID")
            elif not any(m.get("URI") for m in members):
                e(f"{what}: AUDIO group {a['AUDIO']!r} has no member with a URI")
    if len({v.uri for v in mv.variants}) != len(mv.variants):
        e("two EXT-X-STREAM-INF share a URI")
    # harness rule: variants are listed by BANDWIDTH (the origin's layout: highest first)
    want = sorted(bws, reverse=(order == "descending"))
    if order and bws != want:
        e(f"variants not ordered by BANDWIDTH ({order}): {bws}")


def peak_segment_bit_rate(records, target_duration):
    """RFC 8216 §4.1: "The peak segment bit rate of a Media Playlist is the largest bit rate of any contiguous set
    of segments whose total duration is between 0.5 and 1.5 times the target duration. The bit rate of a set is
    calculated by dividing the sum of the segment sizes by the sum of the segment durations." Contiguous = one
    run of consecutive sequence numbers among the downloaded segments."""
    recs = sorted(records.values(), key=lambda r: r.seq)
    best = None
    for i in range(len(recs)):
        size = dur = 0
        for j in range(i, len(recs)):
            if j > i and recs[j].seq != recs[j - 1].seq + 1:
                break
            size += recs[j].size
            dur += recs[j].extinf
            if dur > 1.5 * target_duration + 1e-9:
                break
            if dur >= 0.5 * target_duration - 1e-9:
                rate = 8 * size / dur
                best = rate if best is None else max(best, rate)
    return best


def average_segment_bit_rate(records):
    """RFC 8216 §4.1: "the sum of the sizes (in bits) of every Media Segment in the Media Playlist, divided by the
    Media Playlist duration" (here: of every downloaded segment)."""
    dur = sum(r.extinf for r in records.values())
    return 8 * sum(r.size for r in records.values()) / dur if dur > 0 else None


def _secs(x):
    return f"{float(x):.6f}"


def cross_check(mv, rends, results, errors, live=True, encoded=True, bandwidth_tolerance=0.10,
                bandwidth_overstate=None):
    """The rules across renditions, from what each media playlist checker recorded."""
    e = errors.add
    got = {r.name: results.get(r.name) for r in rends}
    inits = {n: (res.init if res else None) for n, res in got.items()}
    for n, init in inits.items():
        if init is None:
            e(f"{n}: no init segment could be read")
    audio_groups = {}
    for r in rends:
        if r.kind == "audio":
            audio_groups.setdefault(r.attrs.get("GROUP-ID"), []).append(r)
    videos = [r for r in rends if r.kind == "video"]
    audios = [r for r in rends if r.kind == "audio"]
    # --- each variant against its init segments and its measured bit rate
    for r in videos:
        init, res = inits[r.name], got[r.name]
        if init is None:
            continue
        group = audio_groups.get(r.attrs.get("AUDIO"), [])
        handlers = [t.handler for t in init.tracks]
        # harness rule (the origin's CMAF layout): with an AUDIO group, a video rung carries only its video track
        if group and handlers != ["vide"]:
            e(f"{r.name}: init has tracks {handlers}; a rung with an AUDIO group carries one video track")
        derived = [t.codec for t in init.tracks]
        for a in group:
            derived += [t.codec for t in inits[a.name].tracks] if inits.get(a.name) else []
        adv = [c.strip() for c in r.attrs.get("CODECS", "").split(",") if c.strip()]
        # CODECS: "the attribute value MUST include every media format [RFC6381] present in any Media Segment in
        # any of the Renditions specified by the Variant Stream" (§6.2.4); harness: and nothing else.
        if {c.lower() for c in adv} != {c.lower() for c in derived} and not (
                all(any(codec_matches(a, d) for d in derived) for a in adv)
                and all(any(codec_matches(a, d) for a in adv) for d in derived)):
            e(f"{r.name}: CODECS={','.join(adv)!r} but its init segments say {','.join(derived)!r}")
        v = next((t for t in init.tracks if t.handler == "vide"), None)
        if v is not None and r.attrs.get("RESOLUTION") != f"{v.width}x{v.height}":
            e(f"{r.name}: RESOLUTION={r.attrs.get('RESOLUTION')} but the video sample entry is {v.width}x{v.height}")
        fps = _measured_fps(res)
        try:
            adv_fps = float(r.attrs.get("FRAME-RATE", "nan"))
        except ValueError:
            adv_fps = float("nan")
        if fps is not None and not abs(adv_fps - fps) <= 0.0015:
            e(f"{r.name}: FRAME-RATE={r.attrs.get('FRAME-RATE')} but the video runs at {fps:.3f} frames/s")
        _check_bandwidth(r, res, [got.get(a.name) for a in group], e, bandwidth_tolerance, bandwidth_overstate)
    for r in audios:
        init = inits[r.name]
        if init is None:
            continue
        if [t.handler for t in init.tracks] != ["soun"]:
            e(f"{r.name}: audio rendition init has tracks {[t.handler for t in init.tracks]}, expected one audio")
        ch = re.match(r"\d+", r.attrs.get("CHANNELS", ""))
        # CHANNELS: "a count of audio channels ... indicating the maximum number of independent, simultaneous
        # audio channels present in any Media Segment in the Rendition" (§4.4.6.1)
        if ch and init.tracks and int(ch.group(0)) != init.tracks[0].channels:
            e(f"{r.name}: CHANNELS={r.attrs.get('CHANNELS')} but the sample entry has {init.tracks[0].channels}")
    # --- playlist-level rules across renditions (§6.2.4)
    live_res = [res for res in got.values() if res is not None]
    # "Each Media Playlist in each Variant Stream and Rendition MUST have the same Target Duration."
    tds = {n: res.target_duration for n, res in got.items() if res and res.target_duration is not None}
    if len(set(tds.values())) > 1:
        e(f"TARGETDURATION differs between renditions: {tds}")
    # "If any Media Playlist in a Multivariant Playlist contains an EXT-X-SERVER-CONTROL tag, then all Media
    # Playlists in that Multivariant Playlist MUST contain that tag, with the same attributes and values."
    scs = {n: _server_control(res) for n, res in got.items() if res}
    if any(scs.values()) and len({tuple(sorted((sc or {}).items())) for sc in scs.values()}) > 1:
        e(f"EXT-X-SERVER-CONTROL differs between renditions: {scs}")
    pts = [res.ll.part_target for res in live_res if res.ll and res.ll.part_target]
    phb = next((float(sc["PART-HOLD-BACK"]) for sc in scs.values() if sc and "PART-HOLD-BACK" in sc), None)
    # "If different Renditions have different Part Target Durations then PART-HOLD-BACK SHOULD be at least three
    # times the maximum Part Target Duration." (§4.4.3.8)
    if pts and phb is not None and phb < 3 * max(pts) - 1e-9:
        e(f"PART-HOLD-BACK {phb} < 3 x the largest PART-TARGET {max(pts)}")
    # --- media timing across renditions
    _check_alignment(videos, audios, got, e, encoded)


def _server_control(res):
    if res.ll is not None and res.ll.server_control is not None:
        return res.ll.server_control
    return res.playlist.server_control if res.playlist is not None else None


def _measured_fps(res):
    if res is None or not res.segments:
        return None
    n = sum(rec.timing["vide"][2] for rec in res.segments.values() if "vide" in rec.timing)
    d = sum(rec.timing["vide"][1] for rec in res.segments.values() if "vide" in rec.timing)
    return n / float(d) if n and d else None


def _check_bandwidth(r, res, audio_results, e, tolerance, overstate):
    """BANDWIDTH: "If all the Media Segments in a Variant Stream have already been created, the BANDWIDTH value
    MUST be the largest sum of peak segment bit rates that is produced by any playable combination of Renditions."
    Live: "the BANDWIDTH value SHOULD be the BANDWIDTH value of a representative period of similar content"
    (§4.4.6.2), so live allows the measured peak to exceed it by `tolerance`; VOD also bounds it from above by
    `overstate`. AVERAGE-BANDWIDTH likewise with the average segment bit rate."""
    if res is None or not res.segments or not res.target_duration:
        return
    td = res.target_duration
    peaks = [peak_segment_bit_rate(a.segments, td) for a in audio_results if a and a.segments]
    avgs = [average_segment_bit_rate(a.segments) for a in audio_results if a and a.segments]
    peak = (peak_segment_bit_rate(res.segments, td) or 0) + max([p for p in peaks if p] or [0])
    avg = (average_segment_bit_rate(res.segments) or 0) + max([a for a in avgs if a] or [0])
    for key, measured in (("BANDWIDTH", peak), ("AVERAGE-BANDWIDTH", avg)):
        adv = _int(r.attrs, key)
        if adv is None or not measured:
            continue
        if measured > adv * (1 + tolerance):
            e(f"{r.name}: {key}={adv} but the measured {'peak' if key == 'BANDWIDTH' else 'average'} segment bit "
              f"rate of video+audio is {measured:.0f} (> {tolerance:.0%} above)")
        if overstate is not None and adv > measured * (1 + overstate):
            e(f"{r.name}: {key}={adv} overstates the measured {measured:.0f} by more than {overstate:.0%}")


def _check_alignment(videos, audios, got, e, encoded):
    """Harness rules for switching between rungs (§6.2.4: "Matching content in Variant Streams and Renditions MUST
    have matching timestamps."): segment N of every video rung has the same tfdt and (checked per playlist)
    starts with an IDR; audio segment N starts within one AAC frame of video segment N; part N.i starts at the
    same time in every video rung and within one AAC frame in the audio rendition; PROGRAM-DATE-TIME minus
    media time is the same in every rendition ("consistent mappings of date and time to media timestamps")."""
    vres = [(r.name, got[r.name]) for r in videos if got.get(r.name)]
    ares = [(r.name, got[r.name]) for r in audios if got.get(r.name)]

    def frame(res):
        t = res.init.tracks[0] if res.init and res.init.tracks else None
        return Fraction(AAC_FRAME, t.sample_rate or t.timescale) if t and (t.sample_rate or t.timescale) else None

    def compare(what, key, table):
        vstarts = {n: tab[key]["vide"][0] for n, tab in table["v"] if key in tab and "vide" in tab[key]}
        if len(set(vstarts.values())) > 1:
            e(f"{what}: video starts differ between rungs: "
              f"{', '.join(f'{n} {_secs(s)}' for n, s in vstarts.items())}")
        if not vstarts or not encoded:
            return
        ref_name, ref = next(iter(vstarts.items()))
        for n, tab, fr in table["a"]:
            if key in tab and "soun" in tab[key] and fr is not None:
                gap = tab[key]["soun"][0] - ref
                if abs(gap) > fr:
                    e(f"{what}: {n} starts {float(gap) * 1000:+.2f} ms from {ref_name} (more than one AAC frame)")

    seg_table = {"v": [(n, {k: rec.timing for k, rec in res.segments.items()}) for n, res in vres],
                 "a": [(n, {k: rec.timing for k, rec in res.segments.items()}, frame(res)) for n, res in ares]}
    for seq in sorted({k for _, tab in seg_table["v"] for k in tab}):
        compare(f"segment {seq}", seq, seg_table)
    part_table = {"v": [(n, {k: p.timing for k, p in res.ll.parts.items()}) for n, res in vres if res.ll],
                  "a": [(n, {k: p.timing for k, p in res.ll.parts.items()}, frame(res)) for n, res in ares if res.ll]}
    for key in sorted({k for _, tab in part_table["v"] for k in tab}):
        compare(f"part {key[0]}.{key[1]}", key, part_table)
    # PROGRAM-DATE-TIME - media time, per rendition and sequence number
    offsets = {}
    for n, res in vres + ares:
        slack = (frame(res) or 0) if (n, res) in ares else 0
        for seq, rec in res.segments.items():
            h = "vide" if "vide" in rec.timing else "soun"
            if rec.pdt is not None and h in rec.timing:
                offsets.setdefault(seq, []).append((n, rec.pdt - float(rec.timing[h][0]), float(slack)))
    for seq, offs in sorted(offsets.items()):
        lo, hi = min(o for _, o, _ in offs), max(o for _, o, _ in offs)
        if hi - lo > PDT_MS + max(s for _, _, s in offs):
            e(f"segment {seq}: PROGRAM-DATE-TIME maps to media time differently per rendition: "
              f"{', '.join(f'{n} {o:.3f}' for n, o, _ in offs)}")


@dataclass
class PresentationResult:
    errors: list
    multivariant: object = None
    renditions: dict = field(default_factory=dict)   # name -> LiveCheckResult
    kinds: dict = field(default_factory=dict)        # name -> "video" | "audio"

    def summary(self):
        return "; ".join([f"{len(self.renditions)} renditions, errors={len(self.errors)}"]
                         + [r.summary() for r in self.renditions.values()])


def _fetch_multivariant(url, errors, live=True):
    r = http.get(url)
    if r.status != 200:
        errors.add(f"GET {url}: status {r.status} {r.error}")
        return url, None
    check_common_headers(r, "multivariant", errors, live)
    bad = llcheck.number_problems(r.text)
    if bad:
        errors.add(f"multivariant: numbers with float noise: {bad[:3]}")
    try:
        return url, m3u8.parse_multivariant(r.text)
    except m3u8.PlaylistError as ex:
        errors.add(f"multivariant: {ex}")
        return url, None


def check_live_presentation(base_url, seconds, encoded=True, ll=True, poll_interval=0.5, order="descending",
                            bandwidth_tolerance=0.10, path="/index.m3u8"):
    """Read base_url + path (the multivariant playlist), check it, then check every media playlist it names for `seconds`, all at once
    (livecheck.check_media_playlist; with ll=True the LL-HLS rules and rendition reports too), then the rules
    across renditions (cross_check). encoded=True: the origin encodes, so audio starts within one AAC frame of
    video."""
    errors = Errors()
    res = PresentationResult(errors=[])
    mv_url, mv = _fetch_multivariant(http.join(base_url, path), errors)
    res.multivariant = mv
    if mv is None:
        res.errors = errors.list()
        return res
    check_multivariant(mv, errors, order)
    rends = renditions(mv, mv_url)
    res.kinds = {r.name: r.kind for r in rends}

    def run(r):
        return check_media_playlist(r.url, seconds, poll_interval=poll_interval, encoded=encoded, name=r.name,
                                    require_idr=(r.kind == "video"), ll=ll, numbers=True,
                                    siblings=[o.url for o in rends if o is not r])

    with concurrent.futures.ThreadPoolExecutor(max(1, len(rends))) as ex:
        futs = {r.name: ex.submit(run, r) for r in rends}
        res.renditions = {n: f.result() for n, f in futs.items()}
    for n, rr in res.renditions.items():
        for msg in rr.errors:
            errors.add(f"{n}: {msg}")
    cross_check(mv, rends, res.renditions, errors, live=True, encoded=encoded,
                bandwidth_tolerance=bandwidth_tolerance)
    res.errors = errors.list()
    return res


# --- VOD ----------------------------------------------------------------------------------------------------------

def check_vod_presentation(path, decode=True, order="descending", bandwidth_tolerance=0.005,
                           bandwidth_overstate=0.10):
    """Check a ladder written to disk: index.m3u8 -> each media playlist (EXT-X-PLAYLIST-TYPE:VOD, EXT-X-ENDLIST),
    init + segments (box level, IDR starts), the multivariant and cross-rendition rules (BANDWIDTH is exact here:
    all segments exist), no stray files, and ffmpeg decodes every rendition without a message."""
    errors = Errors()
    res = PresentationResult(errors=[])
    try:
        with open(os.path.join(path, "index.m3u8")) as f:
            text = f.read()
        mv = m3u8.parse_multivariant(text)
    except (OSError, m3u8.PlaylistError) as ex:
        errors.add(f"index.m3u8: {ex}")
        res.errors = errors.list()
        return res
    bad = llcheck.number_problems(text)
    if bad:
        errors.add(f"index.m3u8: numbers with float noise: {bad[:3]}")
    res.multivariant = mv
    check_multivariant(mv, errors, order)
    rends = renditions(mv)
    res.kinds = {r.name: r.kind for r in rends}
    # I-frame playlists (byte ranges of the same segments) are checked by test_iframes.py.
    listed = {"index.m3u8"} | {f.get("URI") for f in mv.iframe_streams}
    for r in rends:
        rerr = Errors()
        res.renditions[r.name] = _check_vod_rendition(path, r, rerr, listed)
        for msg in rerr.list():
            errors.add(f"{r.name}: {msg}")
    types = {n: (rr.playlist.playlist_type if rr.playlist else None) for n, rr in res.renditions.items()}
    # "If any Media Playlists have an EXT-X-PLAYLIST-TYPE tag, all Media Playlists MUST have an
    # EXT-X-PLAYLIST-TYPE tag with the same value." (§6.2.4)
    if len(set(types.values())) > 1:
        errors.add(f"EXT-X-PLAYLIST-TYPE differs between renditions: {types}")
    cross_check(mv, rends, res.renditions, errors, live=False, encoded=True,
                bandwidth_tolerance=bandwidth_tolerance, bandwidth_overstate=bandwidth_overstate)
    present = set()
    for root, _, files in os.walk(path):
        present |= {os.path.relpath(os.path.join(root, f), path) for f in files}
    # manifest.mpd: the DASH manifest of the same segments, checked by hlsharness/dashcheck.py.
    extra = sorted(present - listed - {"manifest.mpd"})
    if extra:
        errors.add(f"files not referenced by any playlist: {extra[:5]}")
    if decode:
        for r in rends:
            ok, err = clients.decode_check(os.path.join(path, r.uri))
            if not ok:
                errors.add(f"{r.name}: ffmpeg does not decode it silently: {err.strip()[-300:]}")
    res.errors = errors.list()
    return res


def _check_vod_rendition(path, r, errors, listed):
    res = LiveCheckResult(errors=[], name=r.name, url=r.uri)
    base = posixpath.dirname(r.uri)

    def rel(uri):
        return posixpath.normpath(posixpath.join(base, uri))

    def read(uri):
        listed.add(rel(uri))
        try:
            with open(os.path.join(path, rel(uri)), "rb") as f:
                return f.read()
        except OSError as ex:
            errors.add(f"{uri}: {ex.strerror}")
            return None

    data = read(r.uri)
    if data is None:
        return res
    try:
        pl = m3u8.parse_media(data.decode())
    except (m3u8.PlaylistError, UnicodeDecodeError) as ex:
        errors.add(f"{r.uri}: {ex}")
        return res
    res.playlist = pl
    res.target_duration = pl.target_duration
    bad = llcheck.number_problems(data.decode())
    if bad:
        errors.add(f"numbers with float noise: {bad[:3]}")
    if pl.playlist_type != "VOD":
        errors.add(f"EXT-X-PLAYLIST-TYPE is {pl.playlist_type!r}, expected VOD")
    if not pl.endlist:
        errors.add("no EXT-X-ENDLIST")
    if pl.target_duration is None or not pl.segments:
        errors.add("no EXT-X-TARGETDURATION or no segments")
        return res
    v = SegmentValidator(errors, require_idr=(r.kind == "video"))
    init_uri = pl.segments[0].map_uri
    if init_uri is None:
        errors.add("no EXT-X-MAP")
        return res
    # A single-file rendition (package --single-file): init and segments are byte ranges of one file.
    try:
        ranges = singlefile.segment_ranges(pl)
    except ValueError as ex:
        errors.add(str(ex))
        return res
    files = {}

    def read_cached(uri):
        if uri not in files:
            files[uri] = read(uri)
        return files[uri]

    init = singlefile.cut(read_cached(init_uri), singlefile.map_range(pl.segments[0]))
    if init is not None:
        v.set_init(init)
        res.init = v.init
    for s, r in zip(pl.segments, ranges):
        if m3u8.rfc8216_rounded(s.duration) > pl.target_duration:
            errors.add(f"{s.uri}: EXTINF {s.duration} rounds above TARGETDURATION {pl.target_duration}")
        if s.map_uri != init_uri:
            listed.add(rel(s.map_uri))
        body = singlefile.cut(read_cached(s.uri), r)
        if body is None:
            continue
        timing = v.add_segment(s.seq, s.duration, body, s.uri if r is None else f"{s.uri} ({r[1]}@{r[0]})")
        res.segments_downloaded += 1
        if timing is not None:
            res.segments[s.seq] = SegmentRecord(s.seq, s.uri, s.duration, len(body), timing, s.pdt_computed)
    for p in pl.parts:
        if read(p.get("URI", "")) is None:
            errors.add(f"part {p['_msn']}.{p['_index']} listed but missing")
    if any(r is not None for r in ranges):
        for uri in sorted({s.uri for s in pl.segments}):
            segs = [(r[0], r[1], s.duration) for s, r in zip(pl.segments, ranges) if r is not None and s.uri == uri]
            if read_cached(uri) is not None:
                sidx = singlefile.check_file(read_cached(uri), uri, singlefile.map_range(pl.segments[0]), segs, errors, v.init)
                res.single_files = dict(res.single_files or {}, **{uri: sidx})
    res.media_seconds = v.media_seconds
    return res


__all__ = ["check_live_presentation", "check_delta_update", "check_vod_presentation", "check_multivariant",
           "cross_check", "peak_segment_bit_rate", "average_segment_bit_rate", "expected_skip", "renditions"]
