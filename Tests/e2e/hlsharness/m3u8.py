"""Strict-enough M3U8 parsing (RFC 8216) for tests: media and multivariant playlists."""
import datetime as _dt
import re
from dataclasses import dataclass, field

_ATTR_RE = re.compile(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)')


class PlaylistError(ValueError):
    pass


def parse_attrs(s):
    out = {}
    for k, v in _ATTR_RE.findall(s):
        out[k] = v[1:-1] if v.startswith('"') else v
    return out


def parse_pdt(s):
    s = s.strip()
    # Python 3.11 fromisoformat handles 'Z' and offsets like +0000? normalise to +HH:MM
    s = re.sub(r"Z$", "+00:00", s)
    s = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", s)
    try:
        d = _dt.datetime.fromisoformat(s)
    except ValueError as e:
        raise PlaylistError(f"bad PROGRAM-DATE-TIME {s!r}: {e}") from None
    if d.tzinfo is None:
        raise PlaylistError(f"PROGRAM-DATE-TIME without time zone: {s!r}")
    return d.timestamp()


@dataclass
class Segment:
    uri: str
    duration: float
    seq: int
    pdt: float = None          # epoch seconds from an explicit tag on this segment
    pdt_computed: float = None  # from the last tag + preceding EXTINFs
    discontinuity: bool = False
    map_uri: str = None
    map_byterange: str = None  # BYTERANGE of the EXT-X-MAP in force ("n@o")
    byterange: str = None      # EXT-X-BYTERANGE value ("n[@o]")
    gap: bool = False


@dataclass
class MediaPlaylist:
    version: int = None
    target_duration: int = None
    media_sequence: int = 0
    has_media_sequence_tag: bool = False
    discontinuity_sequence: int = 0
    playlist_type: str = None
    endlist: bool = False
    independent_segments: bool = False
    segments: list = field(default_factory=list)
    # EXT-X-PART attribute dicts in order, each with "_msn" (its Parent Segment's Media Sequence Number) and
    # "_index" (its Part Index within that segment) added; parts after the last EXTINF belong to the next segment.
    parts: list = field(default_factory=list)
    server_control: dict = None   # EXT-X-SERVER-CONTROL attributes (strings), None without the tag
    part_inf: dict = None         # EXT-X-PART-INF attributes
    skipped_segments: int = None  # EXT-X-SKIP:SKIPPED-SEGMENTS (a Playlist Delta Update)
    rendition_reports: list = field(default_factory=list)  # EXT-X-RENDITION-REPORT attribute dicts
    preload_hints: list = field(default_factory=list)      # EXT-X-PRELOAD-HINT attribute dicts
    tags: list = field(default_factory=list)  # every tag name in order
    raw: str = ""

    @property
    def part_target(self):
        return float(self.part_inf["PART-TARGET"]) if self.part_inf and "PART-TARGET" in self.part_inf else None

    def parts_of(self, msn):
        return [p for p in self.parts if p["_msn"] == msn]

    @property
    def total_duration(self):
        return sum(s.duration for s in self.segments)


@dataclass
class Variant:
    uri: str
    attrs: dict


@dataclass
class MultivariantPlaylist:
    variants: list = field(default_factory=list)
    media: list = field(default_factory=list)
    iframe_streams: list = field(default_factory=list)  # EXT-X-I-FRAME-STREAM-INF attribute dicts (URI among them)
    independent_segments: bool = False
    raw: str = ""


def _lines(text):
    if not text.startswith("#EXTM3U"):
        raise PlaylistError("playlist does not start with #EXTM3U")
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def parse_media(text):
    pl = MediaPlaylist(raw=text)
    lines = _lines(text)
    dur = None
    title = None
    pending_pdt = None
    disc = False
    byterange = None
    gap = False
    cur_map = None
    cur_map_range = None
    last_pdt = None
    seq = None
    for ln in lines[1:]:
        if ln.startswith("#"):
            name, _, value = ln[1:].partition(":")
            pl.tags.append(name)
            if name == "EXT-X-VERSION":
                pl.version = int(value)
            elif name == "EXT-X-TARGETDURATION":
                pl.target_duration = int(value)
            elif name == "EXT-X-MEDIA-SEQUENCE":
                pl.media_sequence = int(value)
                pl.has_media_sequence_tag = True
            elif name == "EXT-X-DISCONTINUITY-SEQUENCE":
                pl.discontinuity_sequence = int(value)
            elif name == "EXT-X-SKIP":
                if pl.skipped_segments is not None:
                    raise PlaylistError("EXT-X-SKIP appears more than once")
                if pl.segments or pl.parts:
                    raise PlaylistError("EXT-X-SKIP after the first Media Segment")
                try:
                    pl.skipped_segments = int(parse_attrs(value)["SKIPPED-SEGMENTS"])
                except (KeyError, ValueError):
                    raise PlaylistError(f"bad EXT-X-SKIP {value!r}") from None
            elif name == "EXT-X-SERVER-CONTROL":
                pl.server_control = parse_attrs(value)
            elif name == "EXT-X-PART-INF":
                pl.part_inf = parse_attrs(value)
            elif name == "EXT-X-RENDITION-REPORT":
                pl.rendition_reports.append(parse_attrs(value))
            elif name == "EXT-X-PRELOAD-HINT":
                pl.preload_hints.append(parse_attrs(value))
            elif name == "EXT-X-PLAYLIST-TYPE":
                pl.playlist_type = value
            elif name == "EXT-X-ENDLIST":
                pl.endlist = True
            elif name == "EXT-X-INDEPENDENT-SEGMENTS":
                pl.independent_segments = True
            elif name == "EXTINF":
                d, _, title = value.partition(",")
                try:
                    dur = float(d)
                except ValueError:
                    raise PlaylistError(f"bad EXTINF {value!r}") from None
            elif name == "EXT-X-PROGRAM-DATE-TIME":
                pending_pdt = parse_pdt(value)
            elif name == "EXT-X-DISCONTINUITY":
                disc = True
            elif name == "EXT-X-BYTERANGE":
                byterange = value
            elif name == "EXT-X-GAP":
                gap = True
            elif name == "EXT-X-MAP":
                cur_map = parse_attrs(value).get("URI")
                cur_map_range = parse_attrs(value).get("BYTERANGE")
            elif name == "EXT-X-PART":
                part = parse_attrs(value)
                msn = (pl.media_sequence + (pl.skipped_segments or 0)) if seq is None else seq
                part["_msn"] = msn
                part["_index"] = sum(1 for p in pl.parts if p["_msn"] == msn)
                pl.parts.append(part)
            continue
        # URI line
        if dur is None:
            raise PlaylistError(f"URI {ln!r} without EXTINF")
        if seq is None:
            seq = pl.media_sequence + (pl.skipped_segments or 0)
        if pending_pdt is not None:
            last_pdt = pending_pdt
        seg = Segment(uri=ln, duration=dur, seq=seq, pdt=pending_pdt, discontinuity=disc, map_uri=cur_map,
                      map_byterange=cur_map_range, byterange=byterange, gap=gap)
        seg.pdt_computed = last_pdt
        if last_pdt is not None:
            last_pdt += dur
        pl.segments.append(seg)
        seq += 1
        dur = None
        pending_pdt = None
        disc = False
        byterange = None
        gap = False
    if dur is not None:
        raise PlaylistError("EXTINF without URI at end of playlist")
    return pl


def parse_multivariant(text):
    mv = MultivariantPlaylist(raw=text)
    lines = _lines(text)
    pending = None
    for ln in lines[1:]:
        if ln.startswith("#EXT-X-STREAM-INF:"):
            pending = parse_attrs(ln.split(":", 1)[1])
        elif ln.startswith("#EXT-X-MEDIA:"):
            mv.media.append(parse_attrs(ln.split(":", 1)[1]))
        elif ln.startswith("#EXT-X-I-FRAME-STREAM-INF:"):
            mv.iframe_streams.append(parse_attrs(ln.split(":", 1)[1]))
        elif ln == "#EXT-X-INDEPENDENT-SEGMENTS":
            mv.independent_segments = True
        elif ln.startswith("#EXTINF") or ln.startswith("#EXT-X-TARGETDURATION"):
            raise PlaylistError("multivariant playlist contains media playlist tags")
        elif not ln.startswith("#"):
            if pending is None:
                raise PlaylistError(f"URI {ln!r} without EXT-X-STREAM-INF")
            mv.variants.append(Variant(ln, pending))
            pending = None
    return mv


def rfc8216_rounded(d):
    """EXTINF rounded to the nearest integer, as RFC 8216 compares it with EXT-X-TARGETDURATION."""
    return int(d + 0.5)
