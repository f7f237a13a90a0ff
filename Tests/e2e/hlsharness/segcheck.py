"""Box-level and HTTP-header checks shared by the live, VOD and presentation checkers: Content-Type, CORS,
Cache-Control and Content-Length of every response, and SegmentValidator for an init segment plus its media
segments (codecs, tfdt continuity, keyframe/IDR starts, EXTINF against the media)."""
import os
import re
import threading
import urllib.parse
from fractions import Fraction

from . import http, mp4

PLAYLIST_CONTENT_TYPES = {"application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl"}
INIT_CONTENT_TYPES = {"video/mp4", "audio/mp4", "application/mp4"}
SEGMENT_CONTENT_TYPES = {"video/mp4", "video/iso.segment", "audio/mp4", "application/mp4"}
# A live media playlist must not be cached for longer than this (seconds); segments at least this long.
LIVE_PLAYLIST_MAX_AGE = 1
SEGMENT_MIN_MAX_AGE = 60
EXTINF_TOLERANCE = 0.05      # |EXTINF - media duration of the segment's primary track| (s)


def _mime(ct):
    return (ct or "").split(";")[0].strip().lower()


def _max_age(cc):
    m = re.search(r"max-age\s*=\s*(\d+)", cc or "")
    return int(m.group(1)) if m else None


def num_in_name(uri):
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

    def add_segment(self, seq, extinf, data, name, discontinuity=False):
        """Check one media segment; returns {handler: (first tfdt, duration, sample count)}, times as Fractions of
        seconds, for the cross-rendition checks (None when the segment cannot be parsed). `discontinuity`: the
        playlist puts EXT-X-DISCONTINUITY before it."""
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
                pseq, pend, pscale = self.prev[t.track_id]
                if pscale != t.timescale and t.timescale and pscale:
                    # A new init segment with another timescale (a new audio sample rate): compare times.
                    gap = Fraction(start, t.timescale) - Fraction(pend, pscale)
                    if pseq == seq - 1 and abs(gap) >= Fraction(1, t.timescale) + Fraction(1, pscale):
                        self.errors.add(f"{name}: track {t.track_id} ({t.handler}) starts {float(gap) * 1000:.3f} ms "
                                        f"from where the previous segment ended")
                elif pseq == seq - 1 and pend != start and discontinuity and t.handler != "vide" \
                        and 0 < start - pend <= t.timescale // 2:
                    # RFC 8216 §4.3.2.3 lets timestamps change at EXT-X-DISCONTINUITY; ours continue the video
                    # exactly (players that ignore the tag play through), while another track may start up to 0.5 s
                    # after its own previous end: a publisher cut off mid-stream leaves its audio tail short, and
                    # closing that gap would move the audio against the video. An overlap is still an error.
                    pass
                elif pseq == seq - 1 and pend != start:
                    self.errors.add(f"{name}: track {t.track_id} ({t.handler}) tfdt {start} but previous "
                                    f"segment ended at {pend} (gap/overlap {start - pend} ticks)")
            end = start
            for r in runs:
                if r.base_decode_time != end:
                    self.errors.add(f"{name}: track {t.track_id} run tfdt {r.base_decode_time} != {end}")
                end = r.base_decode_time + r.duration
            self.prev[t.track_id] = (seq, end, t.timescale)
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
