"""An independent MPEG-DASH checker: parses an MPD with ElementTree (and the PyPI `mpegdash` parser), expands each
SegmentTemplate/SegmentTimeline, downloads the segments and compares them with what the MPD says, and with the
HLS playlists of the same presentation. Each check quotes the rule it enforces.
"""
import datetime
import re
import xml.etree.ElementTree as ET

from . import http, m3u8, mp4

NS = {"d": "urn:mpeg:dash:schema:mpd:2011"}


def parse_datetime(s):
    """xs:dateTime with 'Z' -> milliseconds since 1970."""
    dt = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    return round(dt.timestamp() * 1000)


def parse_duration(s):
    """xs:duration of the form PT[nH][nM][n.nS] -> seconds (float)."""
    m = re.fullmatch(r"P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", s)
    if not m:
        raise ValueError(f"bad xs:duration {s!r}")
    d, h, mi, sec = m.groups()
    return int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + float(sec or 0)


class Representation:
    def __init__(self, rep, aset):
        self.id = rep.get("id")
        self.bandwidth = int(rep.get("bandwidth"))
        self.codecs = rep.get("codecs")
        self.width = rep.get("width")
        self.height = rep.get("height")
        self.content_type = aset.get("contentType")
        t = rep.find("d:SegmentTemplate", NS)
        self.template = t
        self.base = rep.find("d:SegmentBase", NS)
        self.segments = []  # (number, t, d)
        if t is not None:
            self.timescale = int(t.get("timescale"))
            self.media = t.get("media")
            self.initialization = t.get("initialization")
            self.start_number = int(t.get("startNumber", "1"))
            self.pto = int(t.get("presentationTimeOffset", "0"))
            self.ato = float(t.get("availabilityTimeOffset", "0"))
            self.atc = t.get("availabilityTimeComplete")
            # ISO/IEC 23009-1 §5.3.9.6: S@t absent -> previous end; S@r -> r more segments of the same duration.
            number, cursor = self.start_number, None
            for s in t.find("d:SegmentTimeline", NS).findall("d:S", NS):
                if s.get("t") is not None:
                    cursor = int(s.get("t"))
                if cursor is None:
                    cursor = 0
                d = int(s.get("d"))
                for _ in range(int(s.get("r", "0")) + 1):
                    self.segments.append((number, cursor, d))
                    number += 1
                    cursor += d

    def url(self, number):
        return self.media.replace("$Number$", str(number))


class MPD:
    def __init__(self, text):
        self.text = text
        self.root = ET.fromstring(text)
        if self.root.tag != "{urn:mpeg:dash:schema:mpd:2011}MPD":
            raise ValueError(f"root element is {self.root.tag}")
        self.type = self.root.get("type", "static")
        self.profiles = self.root.get("profiles", "").split(",")
        ast = self.root.get("availabilityStartTime")
        self.ast_ms = parse_datetime(ast) if ast else None
        self.periods = self.root.findall("d:Period", NS)
        self.representations = []
        # DASH-IF IOP §3.2.9 trick-mode sets (keyframes of the main sets' segments, addressed by SegmentList byte
        # ranges) are kept apart: the template checks below are for the main representations.
        self.trick_representations = []
        for p in self.periods:
            for a in p.findall("d:AdaptationSet", NS):
                trick = any(e.get("schemeIdUri") == TRICK_MODE for e in a.findall("d:EssentialProperty", NS))
                for r in a.findall("d:Representation", NS):
                    (self.trick_representations if trick else self.representations).append(Representation(r, a))
        self.utc_timing = [(u.get("schemeIdUri"), u.get("value")) for u in self.root.findall("d:UTCTiming", NS)]

    def attr(self, name):
        return self.root.get(name)


TRICK_MODE = "http://dashif.org/guidelines/trickmode"


def parse_with_mpegdash(text):
    """The PyPI `mpegdash` parser (a second, independent reading)."""
    from mpegdash.parser import MPEGDASHParser
    return MPEGDASHParser.parse(text)


def fragment_times(data, init_data):
    """(tfdt, duration) of the first track run of a segment (the rendition's reference track)."""
    init = mp4.parse_init(init_data)
    frag = mp4.parse_fragment(data, init)
    track = frag.runs[0].track_id
    runs = frag.track_runs(track)
    return runs[0].base_decode_time, sum(r.duration for r in runs)


def check_live(base, mpd, errors, hls_playlists=None, skip_last=True):
    """Checks of a dynamic MPD against its segments and (optionally) the HLS media playlists of the same
    renditions. `base` is the directory URL of the MPD; `hls_playlists` maps representation id -> playlist URL.
    Returns the number of segments compared."""
    compared = 0
    if mpd.type != "dynamic":
        errors.append(f"type is {mpd.type}, want dynamic")
    for a in ("availabilityStartTime", "publishTime", "minimumUpdatePeriod", "timeShiftBufferDepth",
              "suggestedPresentationDelay", "minBufferTime"):
        if mpd.attr(a) is None:
            errors.append(f"MPD@{a} missing (ISO/IEC 23009-1 Table 3: present for type dynamic)")
    if "urn:mpeg:dash:profile:isoff-live:2011" not in mpd.profiles:
        errors.append(f"profiles {mpd.profiles} lack isoff-live")
    for rep in mpd.representations:
        if rep.template is None:
            errors.append(f"{rep.id}: no SegmentTemplate")
            continue
        init = http.get(http.join(base, rep.initialization))
        if init.status != 200:
            errors.append(f"{rep.id}: init {rep.initialization} -> {init.status}")
            continue
        pdts = {}
        if hls_playlists and rep.id in hls_playlists:
            r = http.get(hls_playlists[rep.id])
            pl = m3u8.parse_media(r.text) if r.status == 200 else None
            if pl is not None:
                for seg in pl.segments:
                    n = int(re.search(r"seg(\d+)\.m4s$", seg.uri).group(1))
                    if seg.pdt is not None:
                        pdts[n] = seg.pdt * 1000
                    if seg.uri != rep.url(n):
                        errors.append(f"{rep.id}: HLS segment {n} is {seg.uri}, the MPD's $Number$ URL {rep.url(n)}")
        listed = rep.segments[:-1] if skip_last and rep.atc == "false" else rep.segments
        for number, t, d in listed:
            r = http.get(http.join(base, rep.url(number)))
            if r.status == 404 and number == rep.segments[0][0]:
                continue  # the oldest may have just left the window
            if r.status != 200:
                errors.append(f"{rep.id}: segment {number} -> {r.status}")
                continue
            tfdt, dur = fragment_times(r.body, init.body)
            # §5.3.9.6.3: S@t is the MPD start time of the segment, in @timescale: the segment's earliest
            # presentation time (tfdt here; presentationTimeOffset 0). S@d is its duration.
            if tfdt - rep.pto != t:
                errors.append(f"{rep.id}: segment {number} tfdt {tfdt} != S@t {t}")
            if dur != d:
                errors.append(f"{rep.id}: segment {number} lasts {dur} ticks, S@d says {d}")
            # AST + (t − PTO)/timescale is the wall clock of the segment's start, the same instant as its HLS
            # EXT-X-PROGRAM-DATE-TIME (RFC 8216 §4.3.2.6) — within 1 ms.
            if number in pdts and mpd.ast_ms is not None:
                wall = mpd.ast_ms + (t - rep.pto) * 1000 / rep.timescale
                if abs(wall - pdts[number]) > 1.0:
                    errors.append(f"{rep.id}: segment {number} AST+t = {wall:.1f} ms, PDT {pdts[number]} ms")
            compared += 1
    return compared


def check_static_dir(path, errors):
    """A static MPD written next to its segments (package, a recording): parses (ElementTree and mpegdash), type
    static, and each Representation's timeline is its segment files exactly — S@t the tfdt, S@d the duration,
    no gap (§5.3.9.6), every listed file present and every segment file listed. Returns the MPD."""
    import os
    with open(os.path.join(path, "manifest.mpd")) as f:
        text = f.read()
    parse_with_mpegdash(text)
    mpd = MPD(text)
    if mpd.type != "static" or mpd.ast_ms is not None:
        errors.append(f"type {mpd.type}, AST {mpd.ast_ms}: want a static MPD without availabilityStartTime")
    for rep in mpd.representations:
        if rep.template is None:
            errors.append(f"{rep.id}: no SegmentTemplate")
            continue
        with open(os.path.join(path, rep.initialization), "rb") as f:
            init = f.read()
        end = None
        for number, t, d in rep.segments:
            name = os.path.join(path, rep.url(number))
            if not os.path.exists(name):
                errors.append(f"{rep.id}: segment {number} listed, {rep.url(number)} missing")
                continue
            with open(name, "rb") as f:
                tfdt, dur = fragment_times(f.read(), init)
            if (tfdt, dur) != (t, d):
                errors.append(f"{rep.id} segment {number}: tfdt/duration {tfdt}/{dur}, MPD {t}/{d}")
            if end is not None and t != end:
                errors.append(f"{rep.id}: gap before segment {number}")
            end = t + d
        directory = os.path.dirname(os.path.join(path, rep.url(0)))
        on_disk = sorted(f for f in os.listdir(directory) if re.fullmatch(r"seg\d+\.m4s", f))
        listed = sorted(os.path.basename(rep.url(n)) for n, _, _ in rep.segments)
        if on_disk != listed:
            errors.append(f"{rep.id}: {len(on_disk)} segment files, {len(listed)} in the MPD")
    return mpd
