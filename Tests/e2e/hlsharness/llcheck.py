"""LL-HLS rules for one live media playlist, applied by livecheck.check_media_playlist(ll=True) on every reload:
EXT-X-SERVER-CONTROL / EXT-X-PART-INF, every EXT-X-PART (downloaded and checked at box level), preload hints,
EXT-X-RENDITION-REPORT (checked against the reported rendition fetched right after), and how numbers are written.

Rules quote draft-pantos-hls-rfc8216bis (HTTP Live Streaming 2nd Edition) unless marked as a harness rule.
"""
import re
import time
from dataclasses import dataclass
from fractions import Fraction

from . import http, m3u8, mp4
from .segcheck import check_common_headers

PART_DURATION_TOLERANCE = 0.01  # |DURATION - media duration of the part's primary track| (s)
REPORT_MAX_LAG_PARTS = 4        # a rendition report may trail the reported playlist by this many parts
# "numbers written without float noise" (harness rule): at most 6 decimals anywhere, and no 1.000001 / 0.999999
# artefacts of binary floating point (right after the point, five or more zeros then another digit, or five or
# more nines) in media durations (EXTINF, part DURATION, FRAME-RATE): a tick of any usual timescale is coarser.
# EXT-X-SERVER-CONTROL and EXT-X-PART-INF are exempt from the second rule: PART-TARGET is rounded up to the
# microsecond so that no part exceeds it, and PART-HOLD-BACK = 3 x PART-TARGET then reads like 1.000002.
_NUMBER = re.compile(r"(?<![\w.])\d+\.(\d+)(?![\w.])")
_NOISE = re.compile(r"^(0{5,}[1-9]|9{5,})")
_ROUNDED_UP = ("#EXT-X-SERVER-CONTROL", "#EXT-X-PART-INF")


def number_problems(text):
    """Decimal numbers in playlist tags (EXTINF and attribute values; not dates, URIs or quoted strings) that
    carry float noise."""
    out = []
    for ln in text.splitlines():
        if not ln.startswith("#EXT") or ":" not in ln or ln.startswith(("#EXT-X-PROGRAM-DATE-TIME",
                                                                         "#EXT-X-DATERANGE")):
            continue
        body = re.sub(r'"[^"]*"', '""', ln.split(":", 1)[1])
        for m in _NUMBER.finditer(body):
            if len(m.group(1)) > 6 or (_NOISE.search(m.group(1)) and not ln.startswith(_ROUNDED_UP)):
                out.append(f"{m.group(0)} in {ln[:70]}")
    return out


def _f(attrs, key):
    try:
        return float(attrs[key]) if attrs and key in attrs else None
    except ValueError:
        return None


@dataclass
class PartRecord:
    msn: int
    index: int
    uri: str
    duration: float       # DURATION attribute
    independent: bool
    timing: dict          # handler -> (first tfdt, duration) as Fractions of seconds


class PlaylistLL:
    """LL-HLS state of one media playlist across reloads. `siblings`: absolute URLs of the other renditions'
    media playlists, each of which must be reported by an EXT-X-RENDITION-REPORT."""

    def __init__(self, media_url, errors, siblings=(), poll_interval=0.5):
        self.url = media_url
        self.errors = errors
        self.siblings = set(siblings)
        self.poll_interval = poll_interval
        self.init = None
        self.server_control = None   # first EXT-X-SERVER-CONTROL seen
        self.part_target = None
        self.parts = {}              # (msn, index) -> PartRecord (downloaded parts)
        self.part_counts = {}        # msn -> number of parts of that complete segment
        self.fetched = set()         # part URIs requested
        self.last_new_part = None    # (monotonic time, key) of the newest part seen
        self.hint = None             # (key of the last part when the hint was seen, hinted URI)
        self.reports_checked = 0
        self.verified = set()        # sibling part/segment URIs that answered 200

    def summary(self):
        return f"parts={len(self.parts)} reports={self.reports_checked} PART-TARGET={self.part_target}"

    # --- every reload ------------------------------------------------------------------------------------------
    def snapshot(self, pl):
        e = self.errors.add
        td = pl.target_duration or 1
        sc, pt = pl.server_control, pl.part_target
        # "PART-TARGET ... This attribute is REQUIRED" / "EXT-X-PART-INF ... is REQUIRED if a Playlist contains
        # one or more EXT-X-PART tags" (§4.4.3.7); an LL-HLS stream is expected here, so it is always required.
        if pt is None:
            e("no EXT-X-PART-INF:PART-TARGET (LL-HLS expected)")
            return
        if sc is None:
            e("no EXT-X-SERVER-CONTROL (LL-HLS expected)")
            return
        # NOTES.md (mediamtx#6237): Apple's player stops with -12642 when PART-HOLD-BACK or PART-TARGET changes
        # between reloads; harness rule: the whole EXT-X-SERVER-CONTROL and PART-TARGET stay constant.
        if self.part_target is None:
            self.part_target, self.server_control = pt, dict(sc)
        else:
            if pt != self.part_target:
                e(f"PART-TARGET changed {self.part_target} -> {pt} between reloads")
            if sc != self.server_control:
                e(f"EXT-X-SERVER-CONTROL changed {self.server_control} -> {sc} between reloads")
        phb, hb, csu = _f(sc, "PART-HOLD-BACK"), _f(sc, "HOLD-BACK"), _f(sc, "CAN-SKIP-UNTIL")
        # "PART-HOLD-BACK is REQUIRED if the Playlist contains the EXT-X-PART-INF tag." "Its value MUST be at
        # least twice the Part Target Duration. Its value SHOULD be at least three times the Part Target
        # Duration." (§4.4.3.8) The SHOULD is enforced.
        if phb is None:
            e("EXT-X-SERVER-CONTROL without PART-HOLD-BACK")
        elif phb < 3 * pt - 1e-9:
            e(f"PART-HOLD-BACK {phb} < 3 x PART-TARGET {pt}")
        # HOLD-BACK: "Its value MUST be at least three times the Target Duration." (§4.4.3.8)
        if hb is not None and hb < 3 * td - 1e-9:
            e(f"HOLD-BACK {hb} < 3 x TARGETDURATION {td}")
        # CAN-SKIP-UNTIL: "The Skip Boundary MUST be at least six times the Target Duration." (§4.4.3.8)
        if csu is not None and csu < 6 * td - 1e-9:
            e(f"CAN-SKIP-UNTIL {csu} < 6 x TARGETDURATION {td}")
        if sc.get("CAN-BLOCK-RELOAD") != "YES":
            e("EXT-X-SERVER-CONTROL without CAN-BLOCK-RELOAD=YES")
        self._check_part_tags(pl, pt)
        self._check_hints(pl)

    def _check_part_tags(self, pl, pt):
        e = self.errors.add
        if not pl.parts:
            e("LL-HLS playlist without EXT-X-PART")
            return
        last_msn = pl.parts[-1]["_msn"]
        by_msn = {}
        for p in pl.parts:
            by_msn.setdefault(p["_msn"], []).append(p)
        complete = {s.seq for s in pl.segments}
        for msn, parts in by_msn.items():
            if msn in complete:   # all parts of a complete segment are listed before its EXTINF
                self.part_counts[msn] = len(parts)
        for msn, parts in by_msn.items():
            for p in parts:
                d = _f(p, "DURATION")
                if d is None or "URI" not in p:
                    e(f"EXT-X-PART without DURATION/URI: {p}")
                    continue
                # "The duration of a Partial Segment MUST be less than or equal to the Part Target Duration."
                if d > pt + 1e-9:
                    e(f"part {msn}.{p['_index']} DURATION {d} > PART-TARGET {pt}")
                # "The duration of each Partial Segment MUST be at least 85% of the Part Target Duration, with
                # the exception of Partial Segments with the INDEPENDENT=YES or GAP=YES attribute, ... and the
                # final Partial Segment of any Parent Segment." (§4.4.4.9) The last listed part of the segment in
                # progress may still turn out to be its final one.
                final = p is parts[-1]
                if d < 0.85 * pt - 1e-9 and not final and p.get("INDEPENDENT") != "YES" and p.get("GAP") != "YES":
                    e(f"part {msn}.{p['_index']} DURATION {d} < 85% of PART-TARGET {pt}")
        # harness rule: a new part at least every few Part Target Durations ("the Server MUST add a new Partial
        # Segment to the Playlist within one Part Target Duration after it added the previous" (§6.2.1); polling
        # cannot time it exactly, so the bound is loose)
        key = (last_msn, pl.parts[-1]["_index"])
        now = time.monotonic()
        if self.last_new_part is None or key > self.last_new_part[1]:
            self.last_new_part = (now, key)
        elif not pl.endlist and now - self.last_new_part[0] > 4 * pt + self.poll_interval + 0.5:
            e(f"no new part for {now - self.last_new_part[0]:.1f}s (PART-TARGET {pt})")
            self.last_new_part = (now, key)

    def _check_hints(self, pl):
        e = self.errors.add
        types = [h.get("TYPE") for h in pl.preload_hints]
        # "A Playlist containing an EXT-X-ENDLIST tag MUST NOT contain an EXT-X-PRELOAD-HINT tag." (§4.4.5.3)
        if pl.endlist and types:
            e("EXT-X-PRELOAD-HINT in a playlist with EXT-X-ENDLIST")
        # "The Server SHOULD NOT add more than one EXT-X-PRELOAD-HINT tag with the same TYPE" (§6.2.6)
        if len(types) != len(set(types)):
            e(f"more than one EXT-X-PRELOAD-HINT of one TYPE: {types}")
        parts = pl.parts
        # The hinted URI "MUST match the URI that will be subsequently added to the Playlist as a non-hinted
        # resource (for example, the URI of an EXT-X-PART tag)" (§4.4.5.3): the part after the one that was last
        # when the hint was seen carries the hinted URI.
        if self.hint is not None and parts:
            after, uri = self.hint
            keys = [(p["_msn"], p["_index"]) for p in parts]
            if after in keys[:-1]:
                nxt = parts[keys.index(after) + 1]
                if http.join(self.url, nxt["URI"]) != http.join(self.url, uri):
                    e(f"EXT-X-PRELOAD-HINT URI {uri} but the next part is {nxt['URI']}")
                self.hint = None
            elif after not in keys:   # scrolled out of the listing between two reloads: cannot tell
                self.hint = None
        hint = next((h for h in pl.preload_hints if h.get("TYPE") == "PART"), None)
        if hint is not None and parts and self.hint is None:
            if any(p.get("URI") == hint.get("URI") for p in parts):
                e(f"EXT-X-PRELOAD-HINT {hint.get('URI')} names a part already listed")
            self.hint = ((parts[-1]["_msn"], parts[-1]["_index"]), hint.get("URI"))

    # --- parts --------------------------------------------------------------------------------------------------
    def download_parts(self, pl):
        """GET every listed part once; check it at box level and record when each track starts in it."""
        if self.init is None:
            return
        for p in pl.parts:
            if "URI" not in p:
                continue
            uri = http.join(self.url, p["URI"])
            if uri in self.fetched:
                continue
            self.fetched.add(uri)
            name = f"part {p['_msn']}.{p['_index']} ({p['URI']})"
            r = http.get(uri)
            if r.status != 200:
                self.errors.add(f"GET {name}: status {r.status} {r.error}")
                continue
            check_common_headers(r, "segment", self.errors)
            rec = self._check_part(p, r.body, name, uri)
            if rec is not None:
                self.parts[(rec.msn, rec.index)] = rec

    def _check_part(self, p, data, name, uri):
        e = self.errors.add
        try:
            frag = mp4.parse_fragment(data, self.init)
        except (mp4.MP4Error, IndexError, Exception) as ex:  # noqa: BLE001
            e(f"{name}: does not parse as a fragment: {ex}")
            return None
        timing = {}
        for t in self.init.tracks:
            runs = frag.track_runs(t.track_id)
            if not runs or not t.timescale:
                e(f"{name}: no samples for track {t.track_id} ({t.handler})")
                continue
            timing[t.handler] = (Fraction(runs[0].base_decode_time, t.timescale),
                                 Fraction(sum(r.duration for r in runs), t.timescale))
            # "INDEPENDENT ... YES if the Partial Segment contains an independent frame" (§4.4.4.9); an
            # independent part used as a switching point starts with it (harness rule).
            if t.handler == "vide" and p.get("INDEPENDENT") == "YES" and not mp4.is_sync(runs[0].flags[0]):
                e(f"{name}: INDEPENDENT=YES but the first video sample is not a sync sample")
            if t.handler == "vide" and p["_index"] == 0 and not mp4.is_sync(runs[0].flags[0]):
                e(f"{name}: first part of a segment does not start with a keyframe")
        primary = next((h for h in ("vide", "soun") if h in timing), None)
        if primary is None:
            return None
        d = float(p.get("DURATION", "nan"))
        media = float(timing[primary][1])
        if not abs(media - d) <= PART_DURATION_TOLERANCE:
            e(f"{name}: DURATION {d} but the {primary} samples last {media:.6f}s")
        rec = PartRecord(p["_msn"], p["_index"], uri, d, p.get("INDEPENDENT") == "YES", timing)
        # decode-time continuity with the part before it
        prev = self.parts.get((rec.msn, rec.index - 1)) if rec.index else None
        if rec.index == 0 and rec.msn - 1 in self.part_counts:
            prev = self.parts.get((rec.msn - 1, self.part_counts[rec.msn - 1] - 1))
        if prev is not None:
            for h, (start, _) in timing.items():
                if h in prev.timing and prev.timing[h][0] + prev.timing[h][1] != start:
                    gap = float(start - prev.timing[h][0] - prev.timing[h][1])
                    e(f"{name}: {h} starts {gap * 1000:+.3f} ms from the end of part {prev.msn}.{prev.index}")
        return rec

    # --- rendition reports --------------------------------------------------------------------------------------
    def check_reports(self, pl):
        """Every other rendition is reported (§4.4.5.4) and each report names a part/segment that the reported
        playlist, fetched right after, lists and serves (GET 200), and that is at most REPORT_MAX_LAG_PARTS old."""
        if not self.siblings:
            return
        e = self.errors.add
        seen = set()
        for rep in pl.rendition_reports:
            if "URI" not in rep:
                e(f"EXT-X-RENDITION-REPORT without URI: {rep}")
                continue
            # "URI ... It MUST be relative to the URI of the Media Playlist containing the EXT-X-RENDITION-REPORT
            # tag." (§4.4.5.4)
            if "://" in rep["URI"] or rep["URI"].startswith("/"):
                e(f"EXT-X-RENDITION-REPORT URI {rep['URI']!r} is not relative")
            uri = http.join(self.url, rep["URI"])
            if uri not in self.siblings:
                e(f"EXT-X-RENDITION-REPORT for {rep['URI']}, which is not another rendition of the presentation")
                continue
            seen.add(uri)
            self._check_report(rep, uri)
        for uri in sorted(self.siblings - seen):
            e(f"no EXT-X-RENDITION-REPORT for {uri.rsplit('/', 1)[-1]}")

    def _check_report(self, rep, uri):
        e = self.errors.add
        name = rep["URI"]
        try:
            msn = int(rep["LAST-MSN"])
            part = int(rep["LAST-PART"]) if "LAST-PART" in rep else None
        except (KeyError, ValueError):
            e(f"EXT-X-RENDITION-REPORT {name}: LAST-MSN/LAST-PART missing or not integers: {rep}")
            return
        r = http.get(uri)
        if r.status != 200:
            e(f"GET {uri} (reported): status {r.status} {r.error}")
            return
        try:
            other = m3u8.parse_media(r.text)
        except m3u8.PlaylistError as ex:
            e(f"{uri}: {ex}")
            return
        self.reports_checked += 1
        # "LAST-MSN ... If the Rendition contains Partial Segments then this value is the Media Sequence Number of
        # the last Partial Segment. LAST-PART ... is REQUIRED if the Rendition contains a Partial Segment."
        if other.parts and part is None:
            e(f"EXT-X-RENDITION-REPORT {name} without LAST-PART although {name} has parts")
            return
        if part is not None:
            keys = [(p["_msn"], p["_index"]) for p in other.parts]
            target = next((p for p in other.parts if (p["_msn"], p["_index"]) == (msn, part)), None)
            later = sum(1 for k in keys if k > (msn, part))
            what = f"part {msn}.{part}"
        else:
            keys = [s.seq for s in other.segments]
            target = next((s for s in other.segments if s.seq == msn), None)
            later = sum(1 for k in keys if k > msn)
            what = f"segment {msn}"
        if target is None:
            e(f"EXT-X-RENDITION-REPORT {name} LAST-MSN={msn} LAST-PART={part}: {name} (fetched right after) does "
              f"not list {what}; its last is {keys[-1] if keys else None}")
            return
        if later > REPORT_MAX_LAG_PARTS:
            e(f"EXT-X-RENDITION-REPORT {name} names {what}, {later} parts/segments behind {name} itself")
        target_uri = http.join(uri, target["URI"] if isinstance(target, dict) else target.uri)
        if target_uri in self.verified:
            return
        tr = http.get(target_uri)
        if tr.status != 200:
            e(f"EXT-X-RENDITION-REPORT {name} names {what} but GET {target_uri}: status {tr.status} {tr.error}")
        else:
            self.verified.add(target_uri)
