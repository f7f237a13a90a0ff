"""I-frame playlists (issue 24 §2; RFC 8216 §4.3.3.6 EXT-X-I-FRAMES-ONLY, §4.3.4.3 EXT-X-I-FRAME-STREAM-INF) from a live
`serve` (the test pattern, LL-HLS parts on) and from `package` (per-segment files and --single-file).

Every listed byte range is fetched and read here, independently of the origin (hlsharness/mp4.py's box walker): it
must be exactly one `moof` followed by its whole `mdat`, hold exactly one video sync sample (the first), and that
fragment's video `tfdt` must be the time the playlists list for it, both on the I-frame playlist's own timeline (the
sum of the EXTINFs before it) and on the media playlist's (where its segment starts). ffmpeg then reads the I-frame
playlist with no error. Each checker is shown to fail on a deliberately wrong range or playlist."""
import os
import struct
import subprocess
import time
from dataclasses import dataclass

import pytest

from hlsharness import http, livecheck, m3u8, mp4, procs
from hlsharness.testenv import need
from hlsharness.procs import package

# EXTINF is written truncated to microseconds: a sum of n of them falls short of the exact time by less than n µs.
MICRO = 1e-6


@dataclass
class IFrame:
    uri: str
    offset: int
    length: int
    duration: float
    discontinuity: bool
    pdt: float = None


def iframes_of(text):
    """The I-frame playlist's entries; PlaylistError if it is not one (no EXT-X-I-FRAMES-ONLY, an entry with no
    EXT-X-BYTERANGE offset, no EXT-X-MAP, a version below 5)."""
    pl = m3u8.parse_media(text)
    if "EXT-X-I-FRAMES-ONLY" not in pl.tags:
        raise m3u8.PlaylistError("no EXT-X-I-FRAMES-ONLY")
    # §4.3.3.6 needs version 4, and §4.3.2.5 an EXT-X-MAP in an I-frames-only playlist 5.
    if pl.version is None or pl.version < 5:
        raise m3u8.PlaylistError(f"EXT-X-VERSION {pl.version} < 5")
    out = []
    for s in pl.segments:
        if s.map_uri is None:
            raise m3u8.PlaylistError(f"{s.uri}: no EXT-X-MAP")
        n, at, o = (s.byterange or "").partition("@")
        if not at:
            raise m3u8.PlaylistError(f"{s.uri}: EXT-X-BYTERANGE {s.byterange!r} without an offset")
        out.append(IFrame(s.uri, int(o), int(n), s.duration, s.discontinuity, s.pdt))
    return pl, out


def check_range(data, init):
    """(errors, video tfdt in seconds) of one I-frame's bytes: one moof, then its mdat, nothing else; one video sync
    sample, the first."""
    try:
        top = list(mp4.boxes(data))
    except mp4.MP4Error as e:
        return [f"not whole boxes: {e}"], None
    types = [b.type for b in top]
    if types != [b"moof", b"mdat"]:
        return [f"boxes {types}, expected exactly moof then mdat"], None
    video = next((t for t in init.tracks if t.handler == "vide"), None)
    if video is None:
        return ["the init segment has no video track"], None
    try:
        runs = mp4.parse_fragment(data, init).track_runs(video.track_id)
    except mp4.MP4Error as e:
        return [f"fragment: {e}"], None
    if len(runs) != 1 or not runs[0].flags:
        return [f"{len(runs)} video runs"], None
    sync = [mp4.is_sync(f) for f in runs[0].flags]
    errors = []
    if not sync[0]:
        errors.append("the first video sample is not a sync sample")
    if sum(sync) != 1:
        errors.append(f"{sum(sync)} video sync samples, expected exactly one")
    return errors, runs[0].base_decode_time / video.timescale


def check_times(frames, times, media_starts=None):
    """The tfdt of each I-frame against its listed time: the first I-frame's plus the EXTINFs before it (restarted
    at a discontinuity); and, given `media_starts` (segment URI -> start on the media playlist's timeline, seconds
    from its first tfdt), the media playlist's place for its segment."""
    errors = []
    origin, listed, since = None, 0.0, 0
    for k, (f, t) in enumerate(zip(frames, times)):
        if origin is None or f.discontinuity:
            origin, listed, since = t, 0.0, 0
        if not (-MICRO * since - 1e-9 <= (t - origin) - listed <= MICRO * since + 1e-9):
            errors.append(f"I-frame {k} ({f.uri}): tfdt {t:.6f} s, listed at {origin + listed:.6f} s")
        listed += f.duration
        since += 1
    if media_starts:
        shared = [(f, t) for f, t in zip(frames, times) if f.uri in media_starts]
        if not shared:
            errors.append("no I-frame in a segment the media playlist lists")
        base = None
        for f, t in shared:
            start, n = media_starts[f.uri]
            base = t - start if base is None else base
            if abs((t - start) - base) > MICRO * (n + 1) + 1e-9:
                errors.append(f"{f.uri}: I-frame at {t:.6f} s, its segment starts at {base + start:.6f} s")
    return errors


def media_starts(text, resolve=lambda u: u):
    """Segment URI -> (start on the media playlist's timeline in seconds, EXTINFs summed)."""
    starts, t = {}, 0.0
    for i, s in enumerate(m3u8.parse_media(text).segments):
        starts[resolve(s.uri)] = (t, i)
        t += s.duration
    return starts


def check_iframe_playlist(text, read_range, init_of, media=None):
    """Every error of an I-frame playlist: its form, each range, each time. `read_range(uri, offset, length)`,
    `init_of(map uri)` -> parsed init segment; `media`: media_starts() of the rendition's media playlist."""
    try:
        pl, frames = iframes_of(text)
    except m3u8.PlaylistError as e:
        return [str(e)]
    if not frames:
        return ["no I-frame listed"]
    errors, times = [], []
    for k, (f, s) in enumerate(zip(frames, pl.segments)):
        data = read_range(f.uri, f.offset, f.length)
        if len(data) != f.length:
            errors.append(f"I-frame {k}: read {len(data)} bytes of {f.length}")
        errs, t = check_range(data, init_of(s.map_uri))
        errors += [f"I-frame {k} ({f.uri} {f.length}@{f.offset}): {e}" for e in errs]
        times.append(t)
    if not errors:
        errors += check_times(frames, times, media)
    return errors


def ffmpeg_reads(url, seconds=None, probe=True):
    """ffmpeg's stderr reading the playlist (empty: no error); `probe=False`: no stream-info analysis."""
    cmd = ["timeout", "60", "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-xerror", "-rw_timeout",
           "5000000", *([] if probe else ["-analyzeduration", "0", "-fpsprobesize", "0"]), "-i", url] + (["-t", str(seconds)] if seconds else []) + ["-map", "0", "-f", "null", "-"]
    p = subprocess.run(cmd, capture_output=True, timeout=90)
    return p.stderr.decode("utf-8", "replace").strip() + (f" (exit {p.returncode})" if p.returncode else "")


# --- from disk (`package`) -----------------------------------------------------------------------------------------


def disk_reader(directory):
    def read_range(uri, offset, length):
        with open(os.path.join(directory, uri), "rb") as f:
            f.seek(offset)
            return f.read(length)

    def init_of(uri, _cache={}):
        key = (directory, uri)
        if key not in _cache:
            # A single file's map is its start: the box walker stops at the moov.
            with open(os.path.join(directory, uri), "rb") as f:
                data = f.read()
            top = list(mp4.boxes(data))
            end = next(b.end for b in top if b.type == b"moov")
            _cache[key] = mp4.parse_init(data[:end])
        return _cache[key]
    return read_range, init_of


def the_iframe_stream(directory):
    mv = m3u8.parse_multivariant(open(os.path.join(directory, "index.m3u8")).read())
    assert len(mv.iframe_streams) == 1, mv.raw
    return mv, mv.iframe_streams[0]


@pytest.fixture(scope="module")
def packaged(origin_bin, media, tmp_path_factory):
    """vod.mp4 (6 s, B-frames, 2 s GOP) packaged as files and as one file."""
    need("ffmpeg", "ffprobe")
    root = tmp_path_factory.mktemp("iframes")
    return {"files": package(origin_bin, media["vod.mp4"], str(root / "files")),
            "single": package(origin_bin, media["vod.mp4"], str(root / "single"), "--single-file")}


@pytest.mark.parametrize("layout", ["files", "single"])
def test_package_writes_an_iframe_playlist_of_whole_keyframe_fragments(packaged, layout):
    out = packaged[layout]
    mv, stream = the_iframe_stream(out)
    assert stream["URI"] == "stream.iframes.m3u8"
    video = mv.variants[0].attrs
    assert stream["CODECS"] == video["CODECS"].split(",")[0] and stream["RESOLUTION"] == video["RESOLUTION"]
    assert 0 < int(stream["BANDWIDTH"]) <= int(video["BANDWIDTH"])
    text = open(os.path.join(out, stream["URI"])).read()
    media_text = open(os.path.join(out, mv.variants[0].uri)).read()
    media_pl = m3u8.parse_media(media_text)
    pl, frames = iframes_of(text)
    assert pl.playlist_type == "VOD" and pl.endlist and pl.media_sequence == media_pl.media_sequence
    # One I-frame per segment (each 2 s GOP is one segment), in the segments' own files.
    assert len(frames) == len(media_pl.segments) >= 3
    assert {f.uri for f in frames} == ({"stream.mp4"} if layout == "single" else {s.uri for s in media_pl.segments})
    # The I-frames last as long as the presentation.
    assert abs(sum(f.duration for f in frames) - media_pl.total_duration) < 1e-3
    read_range, init_of = disk_reader(out)
    starts = media_starts(media_text) if layout == "files" else None
    assert check_iframe_playlist(text, read_range, init_of, starts) == []
    assert ffmpeg_reads(os.path.join(out, stream["URI"])) == ""
    # The harness's VOD checks still pass: the I-frame playlist is a file the multivariant playlist names.
    assert livecheck.check_vod_dir(out).errors == []


# --- live (`serve`) ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def live(origin_bin):
    with procs.serving(origin_bin, ["--window", "6"], "iframes live") as s:
        for _ in range(100):
            r = http.get(s.url("/stream.iframes.m3u8"))
            if r.status == 200 and len(iframes_of(r.text)[1]) >= 3:
                break
        yield s


def http_reader(base):
    def read_range(uri, offset, length):
        r = http.get(http.join(base, uri), headers={"Range": f"bytes={offset}-{offset + length - 1}"})
        assert r.status == 206, (uri, r.status)
        return r.body

    def init_of(uri, _cache={}):
        url = http.join(base, uri)
        if url not in _cache:
            _cache[url] = mp4.parse_init(http.get(url).body)
        return _cache[url]
    return read_range, init_of


def test_live_iframe_playlist_slides_with_the_media_playlist(live):
    mv = m3u8.parse_multivariant(http.get(live.url("/index.m3u8")).text)
    assert [f["URI"] for f in mv.iframe_streams] == ["stream.iframes.m3u8"], mv.raw
    assert mv.iframe_streams[0]["CODECS"] == mv.variants[0].attrs["CODECS"].split(",")[0]
    base = live.url("/stream.iframes.m3u8")
    read_range, init_of = http_reader(base)
    checked = 0
    for _ in range(3):
        # The two playlists of one moment (retried when a segment was published between the reads).
        for _ in range(10):
            media_text = http.get(live.url("/stream.m3u8")).text
            text = http.get(base).text
            media_pl, (pl, frames) = m3u8.parse_media(media_text), iframes_of(text)
            if pl.media_sequence == media_pl.media_sequence and len(frames) == len(media_pl.segments):
                break
        # The same window: same numbering, one I-frame per segment, each in its segment, no ENDLIST.
        assert pl.media_sequence == media_pl.media_sequence, (text, media_text)
        assert [f.uri for f in frames] == [s.uri for s in media_pl.segments]
        assert not pl.endlist and pl.playlist_type is None
        # PROGRAM-DATE-TIME: the keyframe opens its segment, so their dates agree.
        assert [f.pdt for f in frames] == [s.pdt for s in media_pl.segments]
        assert check_iframe_playlist(text, read_range, init_of, media_starts(media_text)) == []
        checked += len(frames)
        # Then again once the window has moved on.
        for _ in range(40):
            if m3u8.parse_media(http.get(base).text).media_sequence > pl.media_sequence:
                break
            time.sleep(0.1)
    assert checked >= 9


def test_live_iframe_playlist_is_served_like_a_playlist(live):
    # HTTP/1.1 fast path and full path (a query takes the full path) give the same playlist, cached alike.
    plain = http.get(live.url("/stream.iframes.m3u8"))
    assert plain.status == 200 and plain.header("content-type") == "application/vnd.apple.mpegurl"
    assert http.get(live.url("/stream.iframes.m3u8?x=1")).text == plain.text
    # A name that is no rendition's is nobody's.
    assert http.get(live.url("/nope.iframes.m3u8")).status == 404


def test_ffmpeg_reads_the_live_iframe_playlist(live):
    # One picture per entry, one entry per second: FFmpeg's stream probing (several frames' worth of frame-rate
    # analysis) would wait for minutes of a live I-frame playlist before its first packet; a player that probes
    # nothing (as an I-frame client does) reads it at once. ffmpeg's -t counts the pictures' own 33 ms.
    assert ffmpeg_reads(live.url("/stream.iframes.m3u8"), seconds=0.1, probe=False) == ""


def mark_sync(data, init, index):
    """`data` (one moof+mdat) with video sample `index` flagged a sync sample (ISO/IEC 14496-12 §8.8.3.1:
    sample_depends_on 2, sample_is_non_sync_sample 0) in its trun entry."""
    out = bytearray(data)
    video = next(t for t in init.tracks if t.handler == "vide")
    moof = next(mp4.boxes(data))
    for traf in mp4.find_all(data, moof, "traf"):
        if struct.unpack_from(">I", data, mp4.find(data, traf, "tfhd").body + 4)[0] != video.track_id:
            continue
        trun = mp4.find(data, traf, "trun")
        tf = int.from_bytes(data[trun.body + 1:trun.body + 4], "big")
        assert tf & 0x400, "per-sample flags"
        p = trun.body + 8 + (4 if tf & 0x1 else 0) + (4 if tf & 0x4 else 0)
        q = p + index * 4 * bin(tf & 0xF00).count("1") + (4 if tf & 0x100 else 0) + (4 if tf & 0x200 else 0)
        flags = struct.unpack_from(">I", data, q)[0]
        struct.pack_into(">I", out, q, (flags & ~0x0301_0000) | 0x0200_0000)
    return bytes(out)


# --- the checkers fail on what they are for ------------------------------------------------------------------------

def test_checkers_catch_wrong_ranges_and_times(packaged, tmp_path):
    out = packaged["files"]
    _, stream = the_iframe_stream(out)
    text = open(os.path.join(out, stream["URI"])).read()
    read_range, init_of = disk_reader(out)
    _, frames = iframes_of(text)
    f = frames[1]
    init = init_of("init.mp4")
    good = read_range(f.uri, f.offset, f.length)
    assert check_range(good, init)[0] == []
    # Not at a moof (the styp included), cut short, running into the next object.
    assert check_range(read_range(f.uri, 0, f.offset + f.length), init)[0]
    assert check_range(good[:-1], init)[0]
    assert check_range(good + good, init)[0]
    # A second sync sample: the second video sample's flags made those of a sync sample.
    # The keyframe is a fragment of its own; the segment's next fragment (the rest of the GOP) with two of its
    # samples flagged sync is caught.
    size = os.path.getsize(os.path.join(out, f.uri))
    rest = read_range(f.uri, f.offset + f.length, size - f.offset - f.length)
    assert "2 video sync samples, expected exactly one" in check_range(mark_sync(mark_sync(rest, init, 0), init, 1), init)[0]
    # Whole playlists: a range shifted by 8 bytes, and an EXTINF a millisecond off.
    shifted = text.replace(f"{f.length}@{f.offset}", f"{f.length}@{f.offset + 8}")
    assert check_iframe_playlist(shifted, read_range, init_of)
    extinf = text.replace(f"#EXTINF:{m3u8.parse_media(text).segments[0].duration}", "#EXTINF:1.999", 1)
    assert extinf != text
    assert any("listed at" in e for e in check_iframe_playlist(extinf, read_range, init_of))
    # And ffmpeg fails on ranges that end inside the mdat (NOTES.md: FFmpeg 5.1 cannot decode those).
    cut = tmp_path / "cut"
    cut.mkdir()
    for name in os.listdir(out):
        os.symlink(os.path.join(out, name), cut / name)
    broken = text
    for g in frames:
        broken = broken.replace(f"{g.length}@{g.offset}", f"{g.length // 3}@{g.offset}")
    (cut / "broken.m3u8").write_text(broken)
    assert ffmpeg_reads(str(cut / "broken.m3u8")) != ""


# --- DASH trick mode -------------------------------------------------------------------------------------------------

def test_dash_trick_mode_set_lists_the_keyframes(origin_bin, media, tmp_path):
    """DASH-IF IOP 4.3 §3.2.9: for a ladder, a trick-mode AdaptationSet (EssentialProperty
    http://dashif.org/guidelines/trickmode, value = the main set's @id) whose Representations have
    codingDependency="false" and list, as SegmentList/SegmentURL@mediaRange (ISO/IEC 23009-1 §5.3.9.3), byte ranges of
    the main segments that each hold exactly one keyframe at a moof, at the time the SegmentTimeline gives. Parsed by the
    mpegdash module (an independent reader) and by ElementTree."""
    import xml.etree.ElementTree as ET
    from mpegdash.parser import MPEGDASHParser
    out = package(origin_bin, media["vod.mp4"], str(tmp_path / "ladder"), "--ladder", "240,180", "--dash-trick-mode")
    plain = package(origin_bin, media["vod.mp4"], str(tmp_path / "plain"), "--ladder", "240,180")
    assert "trickmode" not in open(os.path.join(plain, "manifest.mpd")).read(), "off unless asked"
    path = os.path.join(out, "manifest.mpd")
    parsed = MPEGDASHParser.parse(path)
    sets = parsed.periods[0].adaptation_sets
    trick = [a for a in sets if any(p.scheme_id_uri == "http://dashif.org/guidelines/trickmode"
                                    for p in (a.essential_properties or []))]
    assert len(trick) == 1, [a.id for a in sets]
    main_id = trick[0].essential_properties[0].value
    assert any(str(a.id) == main_id and a.content_type == "video" and a not in trick for a in sets)
    ns = {"d": "urn:mpeg:dash:schema:mpd:2011"}
    root = ET.parse(path).getroot()
    reps = [r for a in root.iter(f"{{{ns['d']}}}AdaptationSet") if a.find("d:EssentialProperty", ns) is not None
            for r in a.findall("d:Representation", ns)]
    assert sorted(r.get("id") for r in reps) == ["180p-trick", "240p-trick"]
    read_range, init_of = disk_reader(out)
    for rep in reps:
        assert rep.get("codingDependency") == "false" and int(rep.get("maxPlayoutRate")) >= 1
        seg_list = rep.find("d:SegmentList", ns)
        timescale = int(seg_list.get("timescale"))
        init = init_of(seg_list.find("d:Initialization", ns).get("sourceURL"))
        times, t = [], None
        for s in seg_list.find("d:SegmentTimeline", ns).findall("d:S", ns):
            t = int(s.get("t", t if t is not None else 0))
            for _ in range(int(s.get("r", "0")) + 1):
                times.append(t)
                t += int(s.get("d"))
        urls = seg_list.findall("d:SegmentURL", ns)
        assert len(urls) == len(times) >= 3
        for u, start in zip(urls, times):
            first, last = (int(x) for x in u.get("mediaRange").split("-"))
            data = read_range(u.get("media"), first, last - first + 1)
            errors, tfdt = check_range(data, init)
            assert errors == [], (u.get("media"), errors)
            assert tfdt == start / timescale or abs(tfdt - start / timescale) < 1e-6, (u.get("media"), tfdt, start)
