"""Strict checkers for what an HLS origin serves: the live media playlist over time, the multivariant playlist,
the init segment and every media segment (box-level), plus the VOD output of `hls-origin package`.

All checks collect human-readable error strings instead of raising, so one run reports every problem.
"""
import os
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from fractions import Fraction

from . import http, llcheck, m3u8, mp4

PLAYLIST_CONTENT_TYPES = {"application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl"}
INIT_CONTENT_TYPES = {"video/mp4", "audio/mp4", "application/mp4"}
SEGMENT_CONTENT_TYPES = {"video/mp4", "video/iso.segment", "audio/mp4", "application/mp4"}
# A live media playlist must not be cached for longer than this (seconds); segments at least this long.
LIVE_PLAYLIST_MAX_AGE = 1
SEGMENT_MIN_MAX_AGE = 60
EXTINF_TOLERANCE = 0.05      # |EXTINF - media duration of the segment's primary track| (s)
PDT_STABILITY = 0.1          # how far one segment's PROGRAM-DATE-TIME may move between reloads (s)
PDT_STEP_TOLERANCE = 0.5     # |PDT[i+1] - (PDT[i] + EXTINF[i])| (s)


def _mime(ct):
    return (ct or "").split(";")[0].strip().lower()


def _max_age(cc):
    m = re.search(r"max-age\s*=\s*(\d+)", cc or "")
    return int(m.group(1)) if m else None


def _num(uri):
    """The number in a segment name like seg12.m4s (None if the name has none)."""
    stem = os.path.splitext(os.path.basename(urllib.parse.urlsplit(uri).path))[0]
    m = re.search(r"(\d+)$", stem)
    return int(m.group(1)) if m else None


def codec_matches(advertised, derived):
    """Compare one CODECS entry with the one derived from the init segment (RFC 6381, hex case-insensitive)."""
    a, d = advertised.strip(), derived.strip()
    if a.lower() == d.lower():
        return True
    # MP3 may be written mp4a.6B or mp4a.40.34; MPEG-4 Part 2 as mp4v.20.<profile>
    if {a.lower(), d.lower()} <= {"mp4a.6b", "mp4a.40.34", "mp4a.69"}:
        return True
    if d.lower() == "mp4v.20" and a.lower().startswith("mp4v.20"):
        return True
    return False


class Errors:
    """An error list that folds repeats: messages that differ only in their numbers count as one."""

    def __init__(self):
        self._first = {}
        self._count = {}
        self._order = []
        self.lock = threading.Lock()

    def add(self, msg):
        key = re.sub(r"\d+(\.\d+)?", "#", msg)
        with self.lock:
            if key in self._count:
                self._count[key] += 1
            else:
                self._count[key] = 1
                self._first[key] = msg
                self._order.append(key)

    def list(self):
        with self.lock:
            return [self._first[k] if self._count[k] == 1 else f"{self._first[k]} (x{self._count[k]} similar)"
                    for k in self._order]

    def __bool__(self):
        return bool(self._order)


def check_common_headers(resp, kind, errors, live=True):
    """kind: 'multivariant' | 'media' | 'init' | 'segment'."""
    what = f"{kind} {urllib.parse.urlsplit(resp.url).path}"
    ct = _mime(resp.header("content-type"))
    allowed = PLAYLIST_CONTENT_TYPES if kind in ("multivariant", "media") else (
        INIT_CONTENT_TYPES if kind == "init" else SEGMENT_CONTENT_TYPES)
    if ct not in allowed:
        errors.add(f"{kind}: Content-Type {resp.header('content-type')!r} not in {sorted(allowed)}")
    acao = resp.header("access-control-allow-origin")
    if acao not in ("*", http.TEST_ORIGIN):
        errors.add(f"{kind}: Access-Control-Allow-Origin is {acao!r} (cross-origin players cannot read it)")
    cc = (resp.header("cache-control") or "").lower()
    if not cc:
        errors.add(f"{kind}: no Cache-Control header")
    elif kind == "media" and live:
        ma = _max_age(cc)
        if not ("no-cache" in cc or "no-store" in cc or (ma is not None and ma <= LIVE_PLAYLIST_MAX_AGE)):
            errors.add(f"{kind}: live playlist Cache-Control {cc!r} allows caching > {LIVE_PLAYLIST_MAX_AGE}s")
    elif kind == "segment":
        ma = _max_age(cc)
        if "no-store" in cc or "no-cache" in cc or ma is None or ma < SEGMENT_MIN_MAX_AGE:
            errors.add(f"{kind}: Cache-Control {cc!r}: immutable segments should be cacheable "
                       f"(max-age >= {SEGMENT_MIN_MAX_AGE})")
    cl = resp.header("content-length")
    if cl is None:
        errors.add(f"{what}: no Content-Length")
    elif int(cl) != len(resp.body):
        errors.add(f"{what}: Content-Length {cl} but {len(resp.body)} bytes received")


class SegmentValidator:
    """Box-level checks of an init segment and a sequence of media segments (live or VOD)."""

    def __init__(self, errors, encoded=False, require_idr=False):
        self.errors = errors
        # Encoded by the origin itself: audio and video must start each segment within one AAC frame
        # (copied sources keep their own A/V offsets, and FFmpeg's own output differs by up to ~24 ms).
        self.encoded = encoded
        # Every H.264 segment must start with an IDR picture (nal_unit_type 5), not just a sync-flagged sample:
        # a client switching renditions at a segment boundary can only start decoding there from an IDR.
        self.require_idr = require_idr
        self.init = None
        self.init_bytes = None
        self.prev = {}          # track_id -> (seq, end decode time)
        self.segments = 0
        self.media_seconds = 0.0
        self.segment_seconds = []  # primary-track duration of each downloaded segment
        self.samples = {}       # track_id -> count

    def set_init(self, data, advertised_codecs=None, resolution=None):
        try:
            self.init = mp4.parse_init(data)
            self.init_bytes = data
        except (mp4.MP4Error, IndexError, Exception) as e:  # noqa: BLE001 - report any parse failure
            self.errors.add(f"init segment does not parse: {e}")
            return
        if not self.init.has_mvex:
            self.errors.add("init segment has no mvex (not a fragmented MP4)")
        if advertised_codecs is not None:
            adv = [c.strip() for c in advertised_codecs.split(",") if c.strip()]
            derived = self.init.codecs
            unmatched = [a for a in adv if not any(codec_matches(a, d) for d in derived)]
            missing = [d for d in derived if not any(codec_matches(a, d) for a in adv)]
            if unmatched or missing or len(adv) != len(derived):
                self.errors.add(f"CODECS={advertised_codecs!r} but init segment says {','.join(derived)!r}")
        if resolution:
            v = self.video_track
            if v is None:
                self.errors.add(f"RESOLUTION={resolution} but no video track in init segment")
            elif resolution != f"{v.width}x{v.height}":
                self.errors.add(f"RESOLUTION={resolution} but avc sample entry is {v.width}x{v.height}")

    @property
    def video_track(self):
        if self.init is None:
            return None
        return next((t for t in self.init.tracks if t.handler == "vide"), None)

    @property
    def primary_track(self):
        if self.init is None:
            return None
        return self.video_track or (self.init.tracks[0] if self.init.tracks else None)

    def add_segment(self, seq, extinf, data, name):
        """Check one media segment; returns {handler: (first tfdt, duration, sample count)}, times as Fractions of
        seconds, for the cross-rendition checks (None when the segment cannot be parsed)."""
        self.segments += 1
        if self.init is None:
            self.errors.add(f"{name}: cannot check, no valid init segment")
            return None
        try:
            frag = mp4.parse_fragment(data, self.init)
        except (mp4.MP4Error, IndexError, Exception) as e:  # noqa: BLE001
            self.errors.add(f"{name}: does not parse as a fragment: {e}")
            return None
        timing = {}
        seen = set()
        for run in frag.runs:
            t = self.init.track(run.track_id)
            if t is None:
                self.errors.add(f"{name}: traf for unknown track {run.track_id}")
                continue
            seen.add(run.track_id)
        for t in self.init.tracks:
            runs = frag.track_runs(t.track_id)
            if not runs or not any(r.durations for r in runs):
                self.errors.add(f"{name}: no samples for track {t.track_id} ({t.handler})")
                continue
            start = runs[0].base_decode_time
            dur = sum(r.duration for r in runs)
            self.samples[t.track_id] = self.samples.get(t.track_id, 0) + sum(len(r.durations) for r in runs)
            # decode-time continuity with the previous segment of the same track
            if t.track_id in self.prev:
                pseq, pend = self.prev[t.track_id]
                if pseq == seq - 1 and pend != start:
                    self.errors.add(f"{name}: track {t.track_id} ({t.handler}) tfdt {start} but previous "
                                    f"segment ended at {pend} (gap/overlap {start - pend} ticks)")
            end = start
            for r in runs:
                if r.base_decode_time != end:
                    self.errors.add(f"{name}: track {t.track_id} run tfdt {r.base_decode_time} != {end}")
                end = r.base_decode_time + r.duration
            self.prev[t.track_id] = (seq, end)
            if any(d == 0 for r in runs for d in r.durations):
                self.errors.add(f"{name}: track {t.track_id} has zero-duration samples")
            if t.timescale:
                timing.setdefault(t.handler, (Fraction(start, t.timescale), Fraction(dur, t.timescale),
                                              sum(len(r.durations) for r in runs)))
            if t.handler == "vide" and not mp4.is_sync(runs[0].flags[0]):
                self.errors.add(f"{name}: does not start with a keyframe (first sample flags "
                                f"0x{runs[0].flags[0]:08x})")
            elif t.handler == "vide" and self.require_idr and t.sample_entry in ("avc1", "avc3"):
                self.check_idr(data, t, name)
            if t is self.primary_track and extinf is not None and t.timescale:
                secs = dur / t.timescale
                self.media_seconds += secs
                self.segment_seconds.append(secs)
                if abs(secs - extinf) > EXTINF_TOLERANCE:
                    self.errors.add(f"{name}: EXTINF {extinf:.6f} but {t.handler} samples last {secs:.6f}s")
        # Audio and video start together: their first tfdt differ by less than one audio frame (1024 samples).
        video = self.video_track
        audio = next((t for t in self.init.tracks if t.handler == "soun"), None)
        if self.encoded and video and audio and video.timescale and audio.timescale:
            vr, ar = frag.track_runs(video.track_id), frag.track_runs(audio.track_id)
            if vr and ar and seq > 0:
                gap = ar[0].base_decode_time / audio.timescale - vr[0].base_decode_time / video.timescale
                if abs(gap) > 1024 / audio.timescale + 1e-6:
                    self.errors.add(f"{name}: audio starts {gap * 1000:.1f} ms from video (more than one AAC frame)")
        return timing

    def check_idr(self, data, track, name):
        try:
            sample = mp4.first_sample_bytes(data, self.init, track.track_id)
            types = mp4.nal_unit_types(sample or b"", track.nal_length_size or 4)
        except (mp4.MP4Error, IndexError) as e:
            self.errors.add(f"{name}: first video sample unreadable: {e}")
            return
        if 5 not in types:
            self.errors.add(f"{name}: does not start with an IDR picture (first sample NAL types {types})")


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

    def summary(self):
        return (f"{self.name + ': ' if self.name else ''}polls={self.polls} changes={self.playlists_changed} "
                f"segs={self.segments_downloaded} TD={self.target_duration} "
                f"maxwait={self.max_wait_for_new_segment:.2f}s minwindow={self.min_full_window} "
                f"msn={self.first_msn}->{self.last_msn} endlist={self.endlist} codecs={self.codecs} "
                f"{self.ll.summary() + ' ' if self.ll else ''}errors={len(self.errors)}")


def fetch_multivariant(base_url, errors, live=True):
    """GET /index.m3u8; returns (media playlist URL, CODECS, RESOLUTION) or (None, None, None)."""
    url = http.join(base_url, "/index.m3u8")
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
    if urllib.parse.urlsplit(media).path != "/stream.m3u8":
        errors.add(f"variant URI {v.uri!r} does not resolve to /stream.m3u8")
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
        nums = [_num(s.uri) for s in pl.segments]
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
                timing = seg_check.add_segment(s.seq, s.duration, sr.body, s.uri)
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
    if init_name is None:
        errors.add("no EXT-X-MAP")
    else:
        data = read(init_name)
        if data is not None:
            v.set_init(data, codecs, mv.variants[0].attrs.get("RESOLUTION"))
    names = []
    for s in pl.segments:
        if pl.target_duration is not None and m3u8.rfc8216_rounded(s.duration) > pl.target_duration:
            errors.add(f"{s.uri}: EXTINF {s.duration} rounds above TARGETDURATION {pl.target_duration}")
        if s.map_uri != init_name:
            errors.add(f"{s.uri}: EXT-X-MAP {s.map_uri} != {init_name}")
        data = read(s.uri)
        names.append(s.uri)
        if data is not None:
            v.add_segment(s.seq, s.duration, data, s.uri)
    nums = [_num(n) for n in names]
    if None not in nums and nums != list(range(nums[0], nums[0] + len(nums))):
        errors.add(f"segment names not continuous: {names[:3]}...")
    listed = set(names) | {init_name, "index.m3u8", "stream.m3u8"}
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
        v.add_segment(s.seq, s.duration, sr.body, s.uri)
    snap.segments = len(pl.segments)
    snap.media_seconds = v.media_seconds
    snap.samples = dict(v.samples)
    snap.errors = errors.list()
    return snap


def wait_for_endlist(base_url, timeout, proc=None, interval=0.25):
    """Poll /stream.m3u8 until it carries EXT-X-ENDLIST. Returns the parsed playlist or None."""
    deadline = time.monotonic() + timeout
    url = http.join(base_url, "/stream.m3u8")
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
# module's API too.
def check_live_presentation(base_url, seconds, **kwargs):
    """See presentation.check_live_presentation."""
    from . import presentation  # noqa: PLC0415
    return presentation.check_live_presentation(base_url, seconds, **kwargs)


def check_delta_update(media_url, **kwargs):
    """See presentation.check_delta_update."""
    from . import presentation  # noqa: PLC0415
    return presentation.check_delta_update(media_url, **kwargs)


def check_vod_presentation(path, **kwargs):
    """See presentation.check_vod_presentation."""
    from . import presentation  # noqa: PLC0415
    return presentation.check_vod_presentation(path, **kwargs)
