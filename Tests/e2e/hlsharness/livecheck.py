"""Strict checkers for what an HLS origin serves: the live media playlist over time, the multivariant playlist,
the init segment and every media segment (box-level), plus the VOD output of `hls-origin package`.

All checks collect human-readable error strings instead of raising, so one run reports every problem.
"""
import os
import re
import time
import urllib.parse
from dataclasses import dataclass, field

from . import http, llcheck, m3u8, singlefile
from .deltacheck import check_delta_update  # noqa: F401 - API
from .segcheck import (EXTINF_TOLERANCE, INIT_CONTENT_TYPES, LIVE_PLAYLIST_MAX_AGE,  # noqa: F401 - API
                       PLAYLIST_CONTENT_TYPES, SEGMENT_CONTENT_TYPES, SEGMENT_MIN_MAX_AGE, Errors,
                       SegmentValidator, check_common_headers, codec_matches, num_in_name)

PDT_STABILITY = 0.1          # how far one segment's PROGRAM-DATE-TIME may move between reloads (s)
PDT_STEP_TOLERANCE = 0.5     # |PDT[i+1] - (PDT[i] + EXTINF[i])| (s)


@dataclass
class SegmentRecord:
    """What a checker learnt about one downloaded media segment (for the cross-rendition checks)."""
    seq: int
    uri: str
    extinf: float
    size: int
    timing: dict          # handler ('vide'/'soun') -> (first tfdt, duration: Fractions of seconds, samples)
    pdt: float = None     # EXT-X-PROGRAM-DATE-TIME (epoch seconds), computed


@dataclass
class LiveCheckResult:
    errors: list
    polls: int = 0
    playlists_changed: int = 0
    segments_downloaded: int = 0
    target_duration: int = None
    max_wait_for_new_segment: float = 0.0
    min_full_window: float = None
    endlist: bool = False
    codecs: str = None
    media_seconds: float = 0.0
    segment_seconds: list = field(default_factory=list)
    first_msn: int = None
    last_msn: int = None
    pdt_lag_last: float = None
    notes: list = field(default_factory=list)
    # filled by check_media_playlist for check_live_presentation
    name: str = None
    url: str = None
    init: object = None                                  # mp4.InitSegment of the first EXT-X-MAP
    segments: dict = field(default_factory=dict)         # seq -> SegmentRecord (downloaded segments)
    playlist: object = None                              # the last m3u8.MediaPlaylist
    ll: object = None                                    # llcheck.PlaylistLL (parts, reports, server control)
    single_files: dict = None                            # VOD single-file rendition: file -> parsed sidx

    def summary(self):
        return (f"{self.name + ': ' if self.name else ''}polls={self.polls} changes={self.playlists_changed} "
                f"segs={self.segments_downloaded} TD={self.target_duration} "
                f"maxwait={self.max_wait_for_new_segment:.2f}s minwindow={self.min_full_window} "
                f"msn={self.first_msn}->{self.last_msn} endlist={self.endlist} codecs={self.codecs} "
                f"{self.ll.summary() + ' ' if self.ll else ''}errors={len(self.errors)}")


def fetch_multivariant(base_url, errors, live=True):
    """GET /index.m3u8; returns (media playlist URL, CODECS, RESOLUTION) or (None, None, None)."""
    url = base_url.rstrip("/") + "/index.m3u8"   # a stream mounted under /NAME keeps its path
    r = http.get(url)
    if r.status != 200:
        errors.add(f"GET {url}: status {r.status} {r.error}")
        return None, None, None
    check_common_headers(r, "multivariant", errors, live)
    try:
        mv = m3u8.parse_multivariant(r.text)
    except m3u8.PlaylistError as e:
        errors.add(f"multivariant: {e}")
        return None, None, None
    if len(mv.variants) != 1:
        errors.add(f"multivariant has {len(mv.variants)} variants, expected 1")
    if not mv.variants:
        return None, None, None
    v = mv.variants[0]
    if "BANDWIDTH" not in v.attrs:
        errors.add("EXT-X-STREAM-INF without BANDWIDTH")
    codecs = v.attrs.get("CODECS")
    if not codecs:
        errors.add("EXT-X-STREAM-INF without CODECS")
    media = http.join(url, v.uri)
    expected = urllib.parse.urlsplit(base_url.rstrip("/")).path + "/stream.m3u8"
    if urllib.parse.urlsplit(media).path != expected:
        errors.add(f"variant URI {v.uri!r} does not resolve to {expected}")
    return media, codecs, v.attrs.get("RESOLUTION")


def check_live_playlist(base_url, duration_s, poll_interval=0.5, download=True, allow_endlist=False,
                        stop_event=None, encoded=False):
    """Poll base_url/stream.m3u8 (found through /index.m3u8, one variant) for duration_s seconds and check it
    strictly. For a multivariant presentation use presentation.check_live_presentation."""
    errors = Errors()
    media_url, codecs, resolution = fetch_multivariant(base_url, errors)
    if media_url is None:
        return LiveCheckResult(errors=errors.list(), codecs=codecs)
    return check_media_playlist(media_url, duration_s, codecs=codecs, resolution=resolution,
                                poll_interval=poll_interval, download=download, allow_endlist=allow_endlist,
                                stop_event=stop_event, encoded=encoded, errors=errors)


def check_media_playlist(media_url, duration_s, codecs=None, resolution=None, poll_interval=0.5, download=True,
                         allow_endlist=False, stop_event=None, encoded=False, errors=None, name=None,
                         require_idr=False, ll=False, siblings=(), numbers=False):
    """Poll one live media playlist for duration_s seconds and check it strictly: every snapshot, the rules
    across reloads, the init segment (against `codecs`/`resolution` when given) and every listed segment.

    ll=True adds the LL-HLS rules of llcheck.PlaylistLL (parts downloaded and checked, EXT-X-SERVER-CONTROL /
    EXT-X-PART-INF, and an EXT-X-RENDITION-REPORT for each URL in `siblings`); numbers=True checks how decimal
    numbers are written (llcheck.number_problems); require_idr=True: every H.264 segment starts with an IDR."""
    errors = errors if errors is not None else Errors()
    res = LiveCheckResult(errors=[], codecs=codecs, name=name, url=media_url)
    seg_check = SegmentValidator(errors, encoded=encoded, require_idr=require_idr)
    llc = llcheck.PlaylistLL(media_url, errors, siblings, poll_interval) if ll else None
    res.ll = llc
    uri_seq = {}        # absolute URI -> sequence number
    seq_uri = {}
    seq_pdt = {}
    downloaded = set()
    init_uri = None
    prev = None
    last_text = None
    ever_evicted = False
    t_start = time.monotonic()
    last_growth = None
    last_seq = None
    max_wait = 0.0
    stall_reported = False
    deadline = t_start + duration_s
    while True:
        now = time.monotonic()
        if now >= deadline or (stop_event is not None and stop_event.is_set()):
            break
        r = http.get(media_url)
        res.polls += 1
        if r.status != 200:
            errors.add(f"GET {media_url}: status {r.status} {r.error}")
            time.sleep(poll_interval)
            continue
        check_common_headers(r, "media", errors, live=True)
        try:
            pl = m3u8.parse_media(r.text)
        except m3u8.PlaylistError as e:
            errors.add(f"media playlist: {e}")
            time.sleep(poll_interval)
            continue
        res.playlist = pl
        changed = r.text != last_text
        if changed:
            res.playlists_changed += 1
            last_text = r.text
        # --- per-snapshot rules
        if pl.target_duration is None:
            errors.add("no EXT-X-TARGETDURATION")
            time.sleep(poll_interval)
            continue
        if res.target_duration is None:
            res.target_duration = pl.target_duration
        elif pl.target_duration != res.target_duration:
            errors.add(f"TARGETDURATION changed {res.target_duration} -> {pl.target_duration}")
        td = res.target_duration
        if pl.playlist_type is not None:
            errors.add(f"EXT-X-PLAYLIST-TYPE:{pl.playlist_type} in a live playlist")
        if not pl.has_media_sequence_tag:
            errors.add("live playlist without EXT-X-MEDIA-SEQUENCE")
        if pl.version is None:
            errors.add("no EXT-X-VERSION")
        elif pl.version < 6 and any(s.map_uri for s in pl.segments):
            errors.add(f"EXT-X-VERSION:{pl.version} < 6 with EXT-X-MAP in a live playlist")
        if pl.endlist:
            res.endlist = True
            if not allow_endlist:
                errors.add("EXT-X-ENDLIST appeared while the stream should be live")
        if numbers and changed:
            bad = llcheck.number_problems(r.text)
            if bad:
                errors.add(f"numbers with float noise (more than 6 decimals or 0.x00000y): {bad[:3]}")
        if llc is not None:
            llc.snapshot(pl)
            llc.check_reports(pl)   # right away: the reported playlists are fetched next to this one
        if not pl.segments:
            if time.monotonic() - t_start > 3 * td:
                errors.add("media playlist has no segments")
            if llc is not None and download and pl.parts:
                init_uri = _load_init(media_url, pl, init_uri, seg_check, errors, codecs, resolution, res, llc)
                llc.download_parts(pl)
            time.sleep(poll_interval)
            continue
        for s in pl.segments:
            if s.duration <= 0:
                errors.add(f"{s.uri}: EXTINF {s.duration} <= 0")
            if m3u8.rfc8216_rounded(s.duration) > td:
                errors.add(f"{s.uri}: EXTINF {s.duration} rounds above TARGETDURATION {td}")
        nums = [num_in_name(s.uri) for s in pl.segments]
        if None not in nums:
            for a, b in zip(nums, nums[1:]):
                if b != a + 1:
                    errors.add(f"segment URIs not continuous: ...{a} then {b}")
        # PDT
        if pl.segments[0].pdt is None:
            errors.add("first segment has no EXT-X-PROGRAM-DATE-TIME")
        else:
            for a, b in zip(pl.segments, pl.segments[1:]):
                if b.pdt_computed is None or a.pdt_computed is None:
                    continue
                # Contiguous segments: each PDT is the previous one plus its EXTINF. After EXT-X-DISCONTINUITY
                # (a publisher that came back after an outage) the date may move on by the outage: RFC 8216
                # §4.3.2.6 makes EXT-X-PROGRAM-DATE-TIME the date of "the first sample of the associated Media
                # Segment", whatever came before. Ours is the arrival time, so (our rule, not the RFC's) it never
                # goes back.
                if b.discontinuity:
                    if b.pdt_computed < a.pdt_computed + a.duration - PDT_STEP_TOLERANCE:
                        errors.add(f"PROGRAM-DATE-TIME goes back across the discontinuity at {b.uri}")
                    continue
                if b.pdt_computed <= a.pdt_computed:
                    errors.add(f"PROGRAM-DATE-TIME not increasing at {b.uri}")
                elif abs(b.pdt_computed - (a.pdt_computed + a.duration)) > PDT_STEP_TOLERANCE:
                    errors.add(f"PROGRAM-DATE-TIME step {b.pdt_computed - a.pdt_computed:.3f}s at {b.uri} but "
                               f"previous EXTINF {a.duration}")
            last = pl.segments[-1]
            if last.pdt_computed is not None:
                res.pdt_lag_last = time.time() - (last.pdt_computed + last.duration)
                if not -2.0 <= res.pdt_lag_last <= 10.0 + 2 * td:
                    errors.add(f"PROGRAM-DATE-TIME far from wall clock: last segment ends "
                               f"{res.pdt_lag_last:+.1f}s from now")
        # --- rules across reloads
        if res.first_msn is None:
            res.first_msn = pl.media_sequence
        if prev is not None:
            if pl.media_sequence < prev.media_sequence:
                errors.add(f"MEDIA-SEQUENCE decreased {prev.media_sequence} -> {pl.media_sequence}")
            if pl.media_sequence > prev.media_sequence:
                ever_evicted = True
                removed = pl.media_sequence - prev.media_sequence
                old_uris = [s.uri for s in prev.segments]
                if removed <= len(old_uris):
                    # segments still listed must be the ones right after the removed ones
                    if pl.segments and removed < len(old_uris) and pl.segments[0].uri != old_uris[removed]:
                        errors.add(f"MEDIA-SEQUENCE +{removed} but first segment is {pl.segments[0].uri}, "
                                   f"expected {old_uris[removed]}")
                elif prev.segments:
                    errors.add(f"MEDIA-SEQUENCE jumped by {removed} > {len(old_uris)} listed segments "
                               f"(a client would miss segments)")
        prev = pl
        for s in pl.segments:
            absu = http.join(media_url, s.uri)
            if absu in uri_seq and uri_seq[absu] != s.seq:
                errors.add(f"{s.uri}: sequence number changed {uri_seq[absu]} -> {s.seq}")
            if s.seq in seq_uri and seq_uri[s.seq] != absu:
                errors.add(f"sequence {s.seq} was {seq_uri[s.seq]}, now {absu}")
            uri_seq[absu] = s.seq
            seq_uri[s.seq] = absu
            if s.pdt_computed is not None:
                if s.seq in seq_pdt and abs(seq_pdt[s.seq] - s.pdt_computed) > PDT_STABILITY:
                    errors.add(f"{s.uri}: PROGRAM-DATE-TIME moved by {s.pdt_computed - seq_pdt[s.seq]:+.3f}s "
                               f"between reloads")
                seq_pdt.setdefault(s.seq, s.pdt_computed)
        if ever_evicted or pl.media_sequence > 0:
            w = pl.total_duration
            res.min_full_window = w if res.min_full_window is None else min(res.min_full_window, w)
            if w < 3 * td - 1e-6 and not pl.endlist:
                errors.add(f"window {w:.3f}s < 3 target durations ({3 * td}s)")
        newest = pl.segments[-1].seq
        now = time.monotonic()
        if last_seq is None or newest > last_seq:
            if last_growth is not None:
                max_wait = max(max_wait, now - last_growth)
            last_growth = now
            last_seq = newest
            stall_reported = False
        elif not pl.endlist:
            waited = now - last_growth
            max_wait = max(max_wait, waited)
            if waited > 1.5 * td + poll_interval and not stall_reported:
                errors.add(f"no new segment for {waited:.1f}s (> 1.5 x TARGETDURATION {td}s)")
                stall_reported = True
        res.last_msn = pl.media_sequence
        # --- downloads
        if download:
            init_uri = _load_init(media_url, pl, init_uri, seg_check, errors, codecs, resolution, res, llc)
            for s in pl.segments:
                absu = http.join(media_url, s.uri)
                if absu in downloaded:
                    continue
                downloaded.add(absu)
                sr = http.get(absu)
                if sr.status != 200:
                    errors.add(f"GET {s.uri} (listed): status {sr.status} {sr.error}")
                    continue
                check_common_headers(sr, "segment", errors)
                res.segments_downloaded += 1
                timing = seg_check.add_segment(s.seq, s.duration, sr.body, s.uri, discontinuity=s.discontinuity)
                if timing is not None:
                    res.segments[s.seq] = SegmentRecord(s.seq, absu, s.duration, len(sr.body), timing,
                                                        s.pdt_computed)
            if llc is not None:
                llc.download_parts(pl)
        spent = time.monotonic() - now
        time.sleep(max(0.0, poll_interval - spent))
    res.max_wait_for_new_segment = max_wait
    res.media_seconds = seg_check.media_seconds
    res.segment_seconds = seg_check.segment_seconds
    if res.polls and res.playlists_changed < 2 and duration_s >= 3 * (res.target_duration or 1):
        errors.add(f"playlist changed only {res.playlists_changed} time(s) in {duration_s}s")
    res.errors = errors.list()
    return res


def _load_init(media_url, pl, init_uri, seg_check, errors, codecs, resolution, res, llc):
    """Fetch and check the init segment of the first EXT-X-MAP once; report a changed EXT-X-MAP. Returns the
    absolute init URI in use."""
    first = pl.segments[0] if pl.segments else None
    first_map = first.map_uri if first else _part_map(pl)
    if first_map is None:
        errors.add("no EXT-X-MAP (fMP4 init segment) in media playlist")
        return init_uri
    absu = http.join(media_url, first_map)
    if init_uri is None:
        ir = http.get(absu)
        if ir.status != 200:
            errors.add(f"GET {absu}: status {ir.status} {ir.error}")
            return None
        check_common_headers(ir, "init", errors)
        seg_check.set_init(ir.body, codecs, resolution)
        res.init = seg_check.init
        if llc is not None:
            llc.init = seg_check.init
        return absu
    if absu != init_uri:
        errors.add(f"EXT-X-MAP changed to {first_map}")
    return init_uri


def _part_map(pl):
    """EXT-X-MAP URI of a playlist that lists only parts (no complete segment yet)."""
    m = re.search(r'#EXT-X-MAP:.*?URI="([^"]+)"', pl.raw)
    return m.group(1) if m else None


@dataclass
class VodCheckResult:
    errors: list
    segments: int = 0
    duration: float = 0.0
    media_seconds: float = 0.0
    codecs: str = None
    target_duration: int = None
    samples: dict = field(default_factory=dict)
    single_files: dict = None  # file name -> parsed sidx, for a single-file VOD


def check_vod_dir(path):
    """Check the files `hls-origin package` writes: index.m3u8 -> stream.m3u8 (VOD) -> init.mp4 + seg<N>.m4s."""
    errors = Errors()
    res = VodCheckResult(errors=[])

    def read(name):
        try:
            with open(os.path.join(path, name), "rb") as f:
                return f.read()
        except OSError as e:
            errors.add(f"{name}: {e}")
            return None

    top = read("index.m3u8")
    if top is None:
        res.errors = errors.list()
        return res
    try:
        mv = m3u8.parse_multivariant(top.decode())
    except m3u8.PlaylistError as e:
        errors.add(f"index.m3u8: {e}")
        res.errors = errors.list()
        return res
    if len(mv.variants) != 1:
        errors.add(f"index.m3u8 has {len(mv.variants)} variants")
        res.errors = errors.list()
        return res
    codecs = mv.variants[0].attrs.get("CODECS")
    res.codecs = codecs
    if mv.variants[0].uri != "stream.m3u8":
        errors.add(f"variant URI {mv.variants[0].uri!r} != 'stream.m3u8'")
    text = read(mv.variants[0].uri)
    if text is None:
        res.errors = errors.list()
        return res
    try:
        pl = m3u8.parse_media(text.decode())
    except m3u8.PlaylistError as e:
        errors.add(f"stream.m3u8: {e}")
        res.errors = errors.list()
        return res
    res.target_duration = pl.target_duration
    if pl.playlist_type != "VOD":
        errors.add(f"EXT-X-PLAYLIST-TYPE is {pl.playlist_type!r}, expected VOD")
    if not pl.endlist:
        errors.add("no EXT-X-ENDLIST")
    if pl.target_duration is None:
        errors.add("no EXT-X-TARGETDURATION")
    if not pl.segments:
        errors.add("no segments")
        res.errors = errors.list()
        return res
    v = SegmentValidator(errors)
    init_name = pl.segments[0].map_uri
    # A single-file VOD (package --single-file) addresses init and segments as byte ranges of one file.
    try:
        ranges = singlefile.segment_ranges(pl)
    except ValueError as e:
        errors.add(str(e))
        ranges = [None] * len(pl.segments)
    files = {}

    def read_cached(name):
        if name not in files:
            files[name] = read(name)
        return files[name]

    if init_name is None:
        errors.add("no EXT-X-MAP")
    else:
        data = singlefile.cut(read_cached(init_name), singlefile.map_range(pl.segments[0]))
        if data is not None:
            v.set_init(data, codecs, mv.variants[0].attrs.get("RESOLUTION"))
    names = []
    inits = {init_name}
    current_init = init_name
    for s, r in zip(pl.segments, ranges):
        if pl.target_duration is not None and m3u8.rfc8216_rounded(s.duration) > pl.target_duration:
            errors.add(f"{s.uri}: EXTINF {s.duration} rounds above TARGETDURATION {pl.target_duration}")
        if s.map_uri != current_init:
            # A new init segment (new codec parameters) comes with EXT-X-DISCONTINUITY: RFC 8216 §4.3.2.3, the tag
            # "MUST be present if there is a change in ... encoding parameters".
            if not s.discontinuity:
                errors.add(f"{s.uri}: EXT-X-MAP changes to {s.map_uri} without EXT-X-DISCONTINUITY")
            current_init = s.map_uri
            inits.add(current_init)
            if current_init is not None and singlefile.map_range(s) is None:
                data = read_cached(current_init)
                if data is not None:
                    v.set_init(data, None, None)
        data = singlefile.cut(read_cached(s.uri), r)
        names.append(s.uri if r is None else f"{s.uri}@{r[0]}")
        if data is not None:
            v.add_segment(s.seq, s.duration, data, s.uri if r is None else f"{s.uri} ({r[1]}@{r[0]})")
    if any(r is not None for r in ranges):
        res.single_files = {}
        for name in sorted({s.uri for s in pl.segments} | {init_name}):
            segs = [(r[0], r[1], s.duration) for s, r in zip(pl.segments, ranges) if r is not None and s.uri == name]
            if read_cached(name) is not None:
                res.single_files[name] = singlefile.check_file(
                    read_cached(name), name, singlefile.map_range(pl.segments[0]), segs, errors, v.init)
    names = [n for n in names if "@" not in n]
    nums = [num_in_name(n) for n in names]
    if nums and None not in nums and nums != list(range(nums[0], nums[0] + len(nums))):
        errors.add(f"segment names not continuous: {names[:3]}...")
    # manifest.mpd: the DASH manifest of the same segments, checked by hlsharness/dashcheck.py.
    listed = set(names) | set(files) | inits | {"index.m3u8", "stream.m3u8", "manifest.mpd"}
    listed |= {f.get("URI") for f in mv.iframe_streams}  # byte ranges of the same segments (test_iframes.py)
    extra = sorted(set(os.listdir(path)) - listed)
    if extra:
        errors.add(f"files not referenced by the playlist: {extra[:5]}")
    res.segments = len(pl.segments)
    res.duration = pl.total_duration
    res.media_seconds = v.media_seconds
    res.samples = dict(v.samples)
    res.errors = errors.list()
    return res


@dataclass
class StreamSnapshot:
    errors: list
    playlist: object = None
    init: object = None
    codecs: str = None
    segments: int = 0
    media_seconds: float = 0.0
    samples: dict = field(default_factory=dict)


def check_http_snapshot(base_url, live=False):
    """Fetch /index.m3u8, /stream.m3u8, the init segment and every listed segment once and check them at box
    level (used on a stream that has ended: EXT-X-ENDLIST, or for a one-off look at a live one)."""
    errors = Errors()
    snap = StreamSnapshot(errors=[])
    media_url, codecs, resolution = fetch_multivariant(base_url, errors, live)
    snap.codecs = codecs
    if media_url is None:
        snap.errors = errors.list()
        return snap
    r = http.get(media_url)
    if r.status != 200:
        errors.add(f"GET {media_url}: status {r.status} {r.error}")
        snap.errors = errors.list()
        return snap
    check_common_headers(r, "media", errors, live)
    try:
        pl = m3u8.parse_media(r.text)
    except m3u8.PlaylistError as e:
        errors.add(f"media playlist: {e}")
        snap.errors = errors.list()
        return snap
    snap.playlist = pl
    for s in pl.segments:
        if pl.target_duration is not None and m3u8.rfc8216_rounded(s.duration) > pl.target_duration:
            errors.add(f"{s.uri}: EXTINF {s.duration} rounds above TARGETDURATION {pl.target_duration}")
    v = SegmentValidator(errors)
    if pl.segments:
        if pl.segments[0].map_uri is None:
            errors.add("no EXT-X-MAP")
        else:
            ir = http.get(http.join(media_url, pl.segments[0].map_uri))
            if ir.status != 200:
                errors.add(f"GET init {ir.url}: status {ir.status} {ir.error}")
            else:
                check_common_headers(ir, "init", errors, live)
                v.set_init(ir.body, codecs, resolution)
                snap.init = v.init
    for s in pl.segments:
        sr = http.get(http.join(media_url, s.uri))
        if sr.status != 200:
            errors.add(f"GET {s.uri}: status {sr.status} {sr.error}")
            continue
        check_common_headers(sr, "segment", errors, live)
        v.add_segment(s.seq, s.duration, sr.body, s.uri, discontinuity=s.discontinuity)
    snap.segments = len(pl.segments)
    snap.media_seconds = v.media_seconds
    snap.samples = dict(v.samples)
    snap.errors = errors.list()
    return snap


def wait_for_endlist(base_url, timeout, proc=None, interval=0.25):
    """Poll /stream.m3u8 until it carries EXT-X-ENDLIST. Returns the parsed playlist or None."""
    deadline = time.monotonic() + timeout
    url = base_url.rstrip("/") + "/stream.m3u8"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return None
        r = http.get(url)
        if r.status == 200:
            try:
                pl = m3u8.parse_media(r.text)
                if pl.endlist:
                    return pl
            except m3u8.PlaylistError:
                pass
        time.sleep(interval)
    return None


# The multivariant (ladder) checks live in presentation.py (which imports this module); they are part of this
# module's API too, like check_delta_update (deltacheck.py).
def check_live_presentation(base_url, seconds, **kwargs):
    """See presentation.check_live_presentation."""
    from . import presentation  # noqa: PLC0415
    return presentation.check_live_presentation(base_url, seconds, **kwargs)


def check_vod_presentation(path, **kwargs):
    """See presentation.check_vod_presentation."""
    from . import presentation  # noqa: PLC0415
    return presentation.check_vod_presentation(path, **kwargs)
