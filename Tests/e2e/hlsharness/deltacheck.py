"""Playlist Delta Updates (`_HLS_skip`, draft-pantos-hls-rfc8216bis §6.2.5.1) checked against the full playlist."""
import time
import urllib.parse
from dataclasses import dataclass

from . import http, m3u8
from .segcheck import Errors, check_common_headers


@dataclass
class DeltaResult:
    errors: list
    attempts: int = 0
    skipped: int = None
    expected: tuple = None   # (lowest, highest) acceptable SKIPPED-SEGMENTS
    full_segments: int = 0
    delta_segments: int = 0


def with_query(url, query):
    u = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(u._replace(query=(u.query + "&" if u.query else "") + query))


def expected_skip(pl, can_skip_until):
    """§6.2.5.1: "The Playlist Delta Update is a version of the Playlist in which Media Segments that are further
    from the end of the last (Parent) Media Segment in the Playlist than the Skip Boundary (Section 4.4.3.8), as well
    as their associated tags, are replaced by an EXT-X-SKIP tag". A segment lying wholly beyond the boundary must
    be skipped; one straddling it, or ending exactly on it (its nearest point is not *further* than the boundary),
    may go either way. Returns (lowest, highest) acceptable SKIPPED-SEGMENTS."""
    end = sum(s.duration for s in pl.segments)
    boundary = end - can_skip_until
    t, lo, hi = 0.0, 0, 0
    for s in pl.segments:
        if t + s.duration < boundary - 1e-6:
            lo += 1
        if t < boundary - 1e-6:
            hi += 1
        t += s.duration
    return lo, hi


def check_delta_update(media_url, attempts=6):
    """Fetch the full playlist and `?_HLS_skip=YES` back to back (again if the playlist moved in between, judged by
    MEDIA-SEQUENCE and the last segment) and check the delta against the full playlist; then `_HLS_skip=v2` (a
    delta) and values the spec does not define, `NO` among them (400)."""
    errors = Errors()
    res = DeltaResult(errors=[])
    e = errors.add
    full = delta = None
    for _ in range(attempts):
        res.attempts += 1
        f1, d, f2 = http.get(media_url), http.get(with_query(media_url, "_HLS_skip=YES")), http.get(media_url)
        if any(x.status != 200 for x in (f1, d, f2)):
            e(f"full/delta/full status {f1.status}/{d.status}/{f2.status} {d.error}")
            break
        try:
            full, delta, full2 = m3u8.parse_media(f1.text), m3u8.parse_media(d.text), m3u8.parse_media(f2.text)
        except m3u8.PlaylistError as ex:
            e(f"playlist does not parse: {ex}")
            full = delta = None
            break
        check_common_headers(d, "media", errors, live=True)

        def state(pl):
            return pl.media_sequence, pl.segments[-1].uri if pl.segments else None
        if state(full) == state(full2) == state(delta) and full.segments:
            break
        full = delta = None
        time.sleep(0.15)
    else:
        e(f"the playlist changed between the full and the delta request {attempts} times in a row")
    if full is None or delta is None:
        res.errors = errors.list()
        return res
    res.full_segments, res.delta_segments = len(full.segments), len(delta.segments)
    sc = full.server_control or {}
    if "CAN-SKIP-UNTIL" not in sc:
        e("the full playlist does not advertise EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL")
        res.errors = errors.list()
        return res
    csu = float(sc["CAN-SKIP-UNTIL"])
    # "The Skip Boundary MUST be at least six times the Target Duration." (§4.4.3.8)
    if full.target_duration and csu < 6 * full.target_duration - 1e-9:
        e(f"CAN-SKIP-UNTIL {csu} < 6 x TARGETDURATION {full.target_duration}")
    lo, hi = expected_skip(full, csu)
    res.expected = (lo, hi)
    n = delta.skipped_segments
    res.skipped = n
    # "When a Server receives a request for a Playlist containing the CAN-SKIP-UNTIL attribute but no
    # EXT-X-ENDLIST tag, and the requested URI contains an _HLS_skip directive whose value is YES or v2, it MUST
    # respond with a Playlist Delta Update." (§6.2.5.1) With nothing old enough to skip, no EXT-X-SKIP is fine.
    if n is None and lo > 0:
        e(f"_HLS_skip=YES answered without EXT-X-SKIP although {lo} segment(s) lie beyond the Skip Boundary")
    n = n or 0
    if not lo <= n <= hi:
        e(f"SKIPPED-SEGMENTS={n} but {lo if lo == hi else f'{lo}..{hi}'} of the full playlist's "
          f"{len(full.segments)} segments lie beyond the Skip Boundary ({csu}s before the end)")
    # "A Playlist MUST indicate an EXT-X-VERSION of 9 or higher if it contains: The EXT-X-SKIP tag." (§8)
    if delta.skipped_segments is not None and (delta.version or 0) < 9:
        e(f"delta update with EXT-X-SKIP has EXT-X-VERSION {delta.version} (< 9)")
    _compare_delta(full, delta, n, e)
    # v2 is the other value §6.2.5.1 defines.
    r = http.get(with_query(media_url, "_HLS_skip=v2"))
    if r.status != 200:
        e(f"_HLS_skip=v2: status {r.status} (a value §6.2.5.1 defines)")
    else:
        try:
            v2 = m3u8.parse_media(r.text)
            if lo > 0 and v2.skipped_segments is None:
                e("_HLS_skip=v2 answered without EXT-X-SKIP")
        except m3u8.PlaylistError as ex:
            e(f"_HLS_skip=v2: {ex}")
    # §6.2.5.1 defines YES and v2 only; any other value is a bad request (400), NO and garbage alike.
    for bad in ("NO", "maybe", "yes"):
        r = http.get(with_query(media_url, "_HLS_skip=" + bad))
        if r.status != 400:
            e(f"_HLS_skip={bad}: status {r.status}, expected 400")
    res.errors = errors.list()
    return res


def _compare_delta(full, delta, n, e):
    """"All tags that were not skipped MUST remain in the Playlist Delta Update." (§6.2.5.1) EXT-X-SKIP "does not
    change the value of the EXT-X-DISCONTINUITY-SEQUENCE tag" (§4.4.5.2)."""
    if delta.media_sequence != full.media_sequence:
        e(f"delta MEDIA-SEQUENCE {delta.media_sequence} != full {full.media_sequence}")
    if delta.discontinuity_sequence != full.discontinuity_sequence:
        e("delta changes EXT-X-DISCONTINUITY-SEQUENCE")
    tail = full.segments[n:]
    got = [(s.seq, s.uri, s.duration, s.map_uri) for s in delta.segments]
    want = [(s.seq, s.uri, s.duration, s.map_uri) for s in tail]
    if got != want:
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        e(f"delta lists {len(got)} segments, the full playlist's tail after {n} has {len(want)}; first difference "
          f"at #{first}: {got[first] if first < len(got) else None} vs {want[first] if first < len(want) else None}")
    for tag in ("target_duration", "server_control", "part_inf"):
        if getattr(delta, tag) != getattr(full, tag):
            e(f"delta {tag} {getattr(delta, tag)} != full {getattr(full, tag)}")
    last_full = full.segments[-1].seq if full.segments else None
    fparts = [(p["_msn"], p["_index"], p.get("URI"), p.get("DURATION")) for p in full.parts
              if last_full is not None and p["_msn"] <= last_full and p["_msn"] >= full.media_sequence + n]
    dparts = [(p["_msn"], p["_index"], p.get("URI"), p.get("DURATION")) for p in delta.parts
              if last_full is not None and p["_msn"] <= last_full]
    if fparts != dparts:
        e(f"delta EXT-X-PART lines of complete segments differ from the full playlist's ({len(dparts)} vs "
          f"{len(fparts)})")
    if {r.get("URI") for r in delta.rendition_reports} != {r.get("URI") for r in full.rendition_reports}:
        e("delta EXT-X-RENDITION-REPORT set differs from the full playlist's")
