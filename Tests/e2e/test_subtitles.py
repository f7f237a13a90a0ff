"""Issue 21 §2: subtitles from sidecar files (`--subtitles LANG=PATH`) as HLS WebVTT subtitle renditions.

Fixtures (proved first): a 6-s H.264/AAC clip (ffprobe lists its streams), an English SubRip file and a French WebVTT
file (webvtt-py reads each cue back: text and times). Then, with independent readers:
- `package`: `m3u8` parses the multivariant playlist (one `EXT-X-MEDIA:TYPE=SUBTITLES` per language in group "subs",
  `SUBTITLES="subs"` on the variant) and every subtitle playlist (the video's media sequence and EXTINF durations, no
  EXT-X-MAP); webvtt-py parses every WebVTT segment, which holds exactly the cues that show in it (a cue spanning a
  boundary in both segments, a segment without a cue the header alone), at the input's times plus the shift the
  video got (measured from both files with ffprobe); FFmpeg's HLS demuxer (`-strict experimental`) reads the
  subtitle rendition back from the multivariant playlist: the texts, at the same times relative to the video.
- a live LL-HLS `serve`: the same over HTTP (`text/vtt`), a blocking reload (`_HLS_msn`) of the subtitle playlist
  answers when that segment exists, at the video's sequence numbers.
- a malformed cue is skipped with a warning; a file that is not WebVTT is one error line at startup.
Every checker is shown failing on wrong input.
"""
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

import m3u8
import pytest
import webvtt

from hlsharness import dashcheck
from hlsharness import http as h
from hlsharness import mp4
from hlsharness import procs
from hlsharness import singlefile
from hlsharness.procs import package, serving

TOKEN = "subtitle-api-secret"
EN = [(0.5, 1.8, "Hello world"), (1.9, 4.2, "A cue across\ntwo segments"), (5.0, 5.9, "Last one")]
FR = [(0.5, 1.8, "Bonjour"), (3.0, 4.0, "Au revoir")]
MS = 0.0015  # WebVTT times are milliseconds: rounding on both sides


def srt(cues):
    def ts(t):
        ms = round(t * 1000)
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"
    return "".join(f"{i + 1}\n{ts(s)} --> {ts(e)}\n{text}\n\n" for i, (s, e, text) in enumerate(cues))


def vtt(cues):
    def ts(t):
        ms = round(t * 1000)
        return f"{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
    return "WEBVTT\n\n" + "".join(f"c{i}\n{ts(s)} --> {ts(e)} line:10%\n{text}\n\n" for i, (s, e, text) in enumerate(cues))


def read_cues(caps):
    """(start, end, text) of each cue webvtt-py read."""
    return [(seconds(c.start), seconds(c.end), c.text) for c in caps]


def seconds(ts):
    hms, ms = ts.split(".")
    parts = [int(p) for p in hms.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    return parts[0] * 3600 + parts[1] * 60 + parts[2] + int(ms) / 1000


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("subs")
    clip = str(d / "clip.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=48000", "-t", "6", "-c:v", "libx264", "-g", "30",
                    "-pix_fmt", "yuv420p", "-c:a", "aac", clip], check=True)
    en, fr = str(d / "en.srt"), str(d / "fr.vtt")
    open(en, "w").write(srt(EN))
    open(fr, "w").write(vtt(FR))
    # Proved by independent readers before anything trusts them.
    streams = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", clip],
                             capture_output=True, text=True, check=True).stdout.split()
    assert streams == ["h264", "aac"], streams
    assert read_cues(webvtt.from_srt(en)) == EN
    assert read_cues(webvtt.read(fr)) == FR
    # The same cues as text tracks of the input: mov_text in MP4; ASS and SubRip (forced) in Matroska.
    movtext, mkv = str(d / "movtext.mp4"), str(d / "subs.mkv")
    mux = ["ffmpeg", "-v", "error", "-y", "-i", clip, "-i", en, "-i", fr, "-map", "0", "-map", "1", "-map", "2",
           "-c:v", "copy", "-c:a", "copy", "-metadata:s:s:0", "language=eng", "-metadata:s:s:1", "language=fra"]
    subprocess.run(mux + ["-c:s", "mov_text", movtext], check=True)
    subprocess.run(mux + ["-c:s:0", "ass", "-c:s:1", "subrip", "-disposition:s:1", "forced", mkv], check=True)
    for path, codecs in ((movtext, "mov_text,mov_text"), (mkv, "ass,subrip")):
        got = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "s", "-show_entries",
                              "stream=codec_name:stream_tags=language", "-of", "csv=p=0", path],
                             capture_output=True, text=True, check=True).stdout.split()
        assert got == [f"{c},{l}" for c, l in zip(codecs.split(","), ("eng", "fra"))], got
    return {"dir": d, "clip": clip, "en": en, "fr": fr, "movtext": movtext, "mkv": mkv}


def first_video_pts(url_or_path):
    """The smallest video presentation time (s) of the first packets, read by ffprobe."""
    out = subprocess.run(["ffprobe", "-v", "error", "-strict", "experimental", "-select_streams", "v:0",
                          "-read_intervals", "%+#10", "-show_entries", "packet=pts_time", "-of", "csv=p=0",
                          url_or_path], capture_output=True, text=True, timeout=30).stdout.split()
    return min(float(x) for x in out)


def segment_problems(segments, cues, shift):
    """Each (start, end, cues read) segment against `cues` shifted by `shift`: exactly those that show in it."""
    problems = []
    for start, end, got in segments:
        want = [(s + shift, e + shift, t) for s, e, t in cues if s + shift < end and e + shift > start]
        if len(got) != len(want) or any(g[2] != w[2] or abs(g[0] - w[0]) > MS or abs(g[1] - w[1]) > MS
                                        for g, w in zip(got, want)):
            problems.append(f"[{start:.3f}, {end:.3f}): {got} != {want}")
    return problems


def subtitle_segments(playlist_text, fetch):
    """The parsed playlist, (uri, duration, cues) per segment (each segment parsed by webvtt-py) and each segment's
    first two lines."""
    p = m3u8.loads(playlist_text)
    assert p.segment_map in (None, []) and "#EXT-X-MAP" not in playlist_text, playlist_text
    out, headers = [], []
    for seg in p.segments:
        text = fetch(seg.uri)
        headers.append(text.split("\n")[:2])
        out.append((seg.uri, seg.duration, read_cues(webvtt.from_string(text))))
    return p, out, headers


def on_timeline(segs, start0):
    t, out = start0, []
    for _, d, cues in segs:
        out.append((t, t + d, cues))
        t += d
    return out


def test_package_writes_a_subtitle_rendition_per_language(origin_bin, files, tmp_path):
    out = package(origin_bin, files["clip"], tmp_path / "out", "--subtitles", f"en={files['en']}",
                  "--subtitles", f"fr={files['fr']}")
    master = m3u8.load(os.path.join(out, "index.m3u8"))
    subs = [m for m in master.media if m.type == "SUBTITLES"]
    assert [(m.group_id, m.language, m.name, m.default, m.autoselect, m.uri) for m in subs] == [
        ("subs", "en", "English", "NO", "YES", "subs-en.m3u8"), ("subs", "fr", "Français", "NO", "YES", "subs-fr.m3u8")]
    assert master.playlists and all(v.stream_info.subtitles == "subs" for v in master.playlists)
    video = m3u8.load(os.path.join(out, master.playlists[0].uri))
    # The video's first tfdt: the subtitle timeline is the video's.
    shift = first_video_pts(os.path.join(out, "index.m3u8")) - first_video_pts(files["clip"])
    assert 0 <= shift < 0.2, shift
    init = mp4.parse_init(open(os.path.join(out, video.segment_map[0].uri), "rb").read())
    run = mp4.parse_fragment(open(os.path.join(out, video.segments[0].uri), "rb").read(), init).runs[0]
    start0 = run.base_decode_time / init.track(run.track_id).timescale
    for lang, cues in (("en", EN), ("fr", FR)):
        text = open(os.path.join(out, f"subs-{lang}.m3u8")).read()
        p, segs, headers = subtitle_segments(text, lambda uri: open(os.path.join(out, uri)).read())
        assert p.media_sequence == video.media_sequence and p.is_endlist
        assert [s[1] for s in segs] == [s.duration for s in video.segments]
        assert all(hd == ["WEBVTT", "X-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000"] for hd in headers), headers
        timeline = on_timeline(segs, start0)
        assert segment_problems(timeline, cues, shift) == []
        if lang == "en":
            # The spanning cue is in segments 1, 2, 3 and 4 ([1, 5) s); segment 4's [4, 5) holds it and nothing else.
            assert [len(c) for _, _, c in timeline] == [1, 2, 1, 1, 1, 1]
        # The checker fails: a cue missing from a segment, or moved by 2 ms.
        i = max(range(len(timeline)), key=lambda k: len(timeline[k][2]))
        dropped = timeline[:i] + [(timeline[i][0], timeline[i][1], timeline[i][2][:-1])] + timeline[i + 1:]
        assert segment_problems(dropped, cues, shift) != []
        assert segment_problems(timeline, [(s + 0.002, e, t) for s, e, t in cues], shift) != []
    # FFmpeg's HLS demuxer reads the English rendition from the multivariant playlist: the texts, at the input's times
    # relative to the video (its own subtitle support is experimental in 5.1).
    got = ffmpeg_cues(os.path.join(out, "index.m3u8"))
    assert [t for _, _, t in got] == [t for _, _, t in EN], got
    assert all(abs(g[0] - (c[0] + shift)) <= MS and abs(g[1] - (c[1] + shift)) <= MS for g, c in zip(got, EN)), got


def vod_cues(directory, lang):
    """(start, end, text) of every cue of `directory`'s subtitle rendition `lang`, each once, in order (webvtt-py reads
    each segment; a cue spanning segments is in each of them, RFC 8216 §3.5), in seconds after the video's first
    `tfdt` (what the viewer sees: the cue against the pictures)."""
    video = m3u8.load(os.path.join(directory, "stream.m3u8"))
    init = mp4.parse_init(open(os.path.join(directory, video.segment_map[0].uri), "rb").read())
    run = mp4.parse_fragment(open(os.path.join(directory, video.segments[0].uri), "rb").read(), init).runs[0]
    start0 = run.base_decode_time / init.track(run.track_id).timescale
    text = open(os.path.join(directory, f"subs-{lang}.m3u8")).read()
    _, segs, _ = subtitle_segments(text, lambda uri: open(os.path.join(directory, uri)).read())
    return sorted({(round(s - start0, 3), round(e - start0, 3), t) for _, _, cues in segs for s, e, t in cues})


def same_cues(got, want):
    return len(got) == len(want) and all(g[2] == w[2] and abs(g[0] - w[0]) <= MS and abs(g[1] - w[1]) <= MS
                                         for g, w in zip(got, want))


def test_package_url_keeps_every_media_selection(origin_bin, files, tmp_path):
    """Issue 21 §4: `package URL` of a multivariant presentation on a web server is the offline copy an app's download
    makes: both audio languages (the default one still the default: the demuxer lists the French first), both
    subtitle languages with the same cues at the same times (libavformat 5.1's HLS demuxer does not read subtitle
    renditions; the origin fetches them), and it plays from disk (FFmpeg reads every rendition)."""
    from test_audio_languages import make_fixture, track_packets
    src = str(tmp_path / "en_fr.mp4")
    make_fixture(src)  # proven by ffprobe in there: two AAC tracks tagged eng and fra
    served = package(origin_bin, src, tmp_path / "served", "--subtitles", f"en={files['en']}",
                     "--subtitles", f"fr={files['fr']}")
    with procs.StaticServer(served) as web:
        copy = package(origin_bin, web.base_url + "/index.m3u8", tmp_path / "copy")
    master = m3u8.load(os.path.join(copy, "index.m3u8"))
    audio = [(m.language, m.default, m.uri is None) for m in master.media if m.type == "AUDIO"]
    assert audio == [("en", "YES", True), ("fr", "NO", False)], audio
    subs = [(m.language, m.name, m.uri) for m in master.media if m.type == "SUBTITLES"]
    assert subs == [("en", "English", "subs-en.m3u8"), ("fr", "Français", "subs-fr.m3u8")], subs
    assert all(v.stream_info.subtitles == "subs" and v.stream_info.audio == "audio" for v in master.playlists)
    for lang in ("en", "fr"):
        want = vod_cues(served, lang)
        assert len(want) == 2 and same_cues(vod_cues(copy, lang), want), (lang, vod_cues(copy, lang), want)
        # The checker fails on a cue moved by 2 ms or lost.
        assert not same_cues([(s + 0.002, e, t) for s, e, t in want], want) and not same_cues(want[1:], want)
    # Plays from disk: FFmpeg reads every rendition with no error, and the French audio is the served one's, packet
    # for packet.
    p = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", os.path.join(copy, "index.m3u8"), "-map", "0",
                        "-f", "null", "-"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    french = [m.uri for m in master.media if m.type == "AUDIO" and m.language == "fr"][0]
    copied, original = track_packets(os.path.join(copy, french), 0), track_packets(os.path.join(served, french), 0)
    assert len(copied) > 100 and copied == original


@pytest.mark.parametrize("source", ["movtext", "mkv"])
def test_text_tracks_of_the_input(origin_bin, files, tmp_path, source):
    out = package(origin_bin, files[source], tmp_path / "out")
    master = m3u8.load(os.path.join(out, "index.m3u8"))
    subs = [(m.language, m.name, m.forced) for m in master.media if m.type == "SUBTITLES"]
    assert subs == [("en", "English", None), ("fr", "Français", "YES" if source == "mkv" else None)], subs
    video = m3u8.load(os.path.join(out, master.playlists[0].uri))
    shift = first_video_pts(os.path.join(out, "index.m3u8")) - first_video_pts(files[source])
    for i, (lang, texts) in enumerate((("en", EN), ("fr", FR))):
        # The cues' times in the input as ffprobe reads its packets (the Matroska muxer moved them with the video).
        packets = subprocess.run(["ffprobe", "-v", "error", "-select_streams", f"s:{i}", "-show_entries",
                                  "packet=pts_time,duration_time,size", "-of", "csv=p=0", files[source]],
                                 capture_output=True, text=True, check=True).stdout.split()
        # mov_text fills the gaps between cues with empty samples (a 2-byte length of 0).
        times = [tuple(float(x) for x in line.split(",")[:2]) for line in packets if int(line.split(",")[2]) > 2]
        cues = [(pts, pts + d, t) for (pts, d), (_, _, t) in zip(times, texts)]
        assert len(cues) == len(texts)
        p, segs, _ = subtitle_segments(open(os.path.join(out, f"subs-{lang}.m3u8")).read(),
                                       lambda uri: open(os.path.join(out, uri)).read())
        assert [s[1] for s in segs] == [s.duration for s in video.segments]
        assert segment_problems(on_timeline(segs, 0.0), cues, shift) == [], (lang, segs, shift)


def wvtt_cues(init_data, segments):
    """The cues of a wvtt track (ISO/IEC 14496-30 §7), read with the harness's box walker: the sample entry and each
    sample checked against the standard, then a cue per text and span, samples joined where a cue continues.
    Returns (cues, problems)."""
    problems = []
    init = mp4.parse_init(init_data)
    (track,) = init.tracks
    moov = next(b for b in mp4.boxes(init_data) if b.type == b"moov")
    hdlr = mp4.find(init_data, moov, "trak/mdia/hdlr")
    # §7.3: "WebVTT tracks use the 'text' handler type" with the NullMediaHeaderBox.
    if init_data[hdlr.body + 8:hdlr.body + 12] != b"text" or mp4.find(init_data, moov, "trak/mdia/minf/nmhd") is None:
        problems.append("handler is not 'text' with an nmhd")
    stsd = mp4.find(init_data, moov, "trak/mdia/minf/stbl/stsd")
    entry = next(mp4.boxes(init_data, stsd.body + 8, stsd.end))
    # §7.5: WVTTSampleEntry extends PlainTextSampleEntry('wvtt') { WebVTTConfigurationBox config; … }
    if entry.type != b"wvtt":
        problems.append(f"sample entry {entry.type!r}")
    inner = {b.type: init_data[b.body:b.end] for b in mp4.boxes(init_data, entry.body + 8, entry.end)}
    if not inner.get(b"vttC", b"").startswith(b"WEBVTT"):
        problems.append(f"vttC {inner.get(b'vttC')!r}: not a WebVTT header")
    spans = []
    for data in segments:
        frag = mp4.parse_fragment(data, init)
        (run,) = frag.runs
        mdat = next(b for b in mp4.boxes(data) if b.type == b"mdat")
        t, pos = run.base_decode_time, mdat.body
        for d, size in zip(run.durations, run.sizes):
            sample = list(mp4.boxes(data, pos, pos + size))
            kinds = [b.type for b in sample]
            # §7.4: a sample is either exactly one VTTEmptyCueBox ('vtte') or one or more VTTCueBox ('vttc').
            if kinds != [b"vtte"] and (not kinds or any(k != b"vttc" for k in kinds)):
                problems.append(f"sample at {t}: boxes {kinds}")
            texts = []
            for b in sample:
                if b.type == b"vttc":
                    parts = {c.type: data[c.body:c.end].decode() for c in mp4.boxes(data, b.body, b.end)}
                    # §7.4: VTTCueBox { … CuePayloadBox payload; } — required.
                    if b"payl" not in parts:
                        problems.append(f"vttc at {t} without payl")
                    texts.append(parts.get(b"payl", ""))
            spans.append((t, t + d, texts))
            t, pos = t + d, pos + size
    cues, open_ = [], {}
    for a, b, texts in spans:
        for text in list(open_):
            if text not in texts:
                cues.append((open_.pop(text) / track.timescale, a / track.timescale, text))
        for text in texts:
            open_.setdefault(text, a)
    end = spans[-1][1] if spans else 0
    cues += [(s0 / track.timescale, end / track.timescale, text) for text, s0 in open_.items()]
    return sorted(cues), problems


def test_dash_text_adaptation_sets(origin_bin, files, tmp_path):
    out = package(origin_bin, files["clip"], tmp_path / "dash", "--ladder", "source", "--subtitles",
                  f"en={files['en']}", "--subtitles", f"fr={files['fr']}")
    errors = []
    mpd = dashcheck.check_static_dir(out, errors)  # mpegdash parses it; every timeline is its files exactly
    assert errors == [], errors
    root = ET.parse(os.path.join(out, "manifest.mpd")).getroot()
    ns = {"d": "urn:mpeg:dash:schema:mpd:2011"}
    sets = root.findall("d:Period/d:AdaptationSet", ns)
    text = [a for a in sets if a.get("contentType") == "text"]
    assert [(a.get("mimeType"), a.get("lang"), a.find("d:Role", ns).get("value"),
             a.find("d:Representation", ns).get("codecs")) for a in text] == [
        ("application/mp4", "en", "subtitle", "wvtt"), ("application/mp4", "fr", "subtitle", "wvtt")]
    timelines = {r.id: [(t, d) for _, t, d in r.segments] for r in mpd.representations}
    video = next(r.id for r in mpd.representations if r.height)
    for rid in ("subs-en-wvtt", "subs-fr-wvtt"):
        assert timelines[rid] == timelines[video], (rid, timelines)
    # FFmpeg's DASH demuxer reads the whole presentation silently (its mov demuxer does not decode wvtt: a data stream).
    p = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", "manifest.mpd", "-map", "0", "-f", "null", "-"],
                       cwd=out, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    shift = first_video_pts(os.path.join(out, "index.m3u8")) - first_video_pts(files["clip"])
    for rid, cues in (("subs-en-wvtt", EN), ("subs-fr-wvtt", FR)):
        rep = next(r for r in mpd.representations if r.id == rid)
        init = open(os.path.join(out, rep.initialization), "rb").read()
        segs = [open(os.path.join(out, rep.url(n)), "rb").read() for n, _, _ in rep.segments]
        got, problems = wvtt_cues(init, segs)
        assert problems == [], problems
        want = [(s0 + shift, e + shift, t) for s0, e, t in cues]
        assert len(got) == len(want) and all(g[2] == w[2] and abs(g[0] - w[0]) <= MS and abs(g[1] - w[1]) <= MS
                                             for g, w in zip(got, want)), (got, want)
    # The reader fails on a sample that is neither vtte nor vttc.
    bad = bytearray(segs[0])
    i = bytes(bad).rfind(b"vtt")
    bad[i:i + 4] = b"xxxx"
    assert wvtt_cues(init, [bytes(bad)])[1] != []


def ffmpeg_cues(url):
    """The first subtitle stream as FFmpeg reads it (`-copyts`: the playlist's own timeline), as SRT, parsed."""
    p = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-strict", "experimental", "-copyts", "-i", url,
                        "-map", "0:s:0", "-c:s", "srt", "-f", "srt", "-"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return read_cues(webvtt.from_buffer(__import__("io").StringIO(p.stdout), format="srt"))


@pytest.fixture(scope="module")
def live(origin_bin, files):
    rec = str(files["dir"] / "rec")
    with serving(origin_bin, [files["clip"], "--loop", "--part-duration", "0.5", "--subtitles", f"en={files['en']}",
                              "--subtitles", "de", "--record", rec, "--api-token", TOKEN], label="live subtitles") as s:
        s.recording = rec
        yield s


def test_live_ll_hls_subtitle_playlist(live):
    master = m3u8.loads(h.get(live.url("/index.m3u8")).text)
    en = next(m for m in master.media if m.type == "SUBTITLES" and m.language == "en")
    assert en.uri == "subs-en.m3u8" and all(v.stream_info.subtitles == "subs" for v in master.playlists)
    sub = m3u8.loads(h.get(live.url("/subs-en.m3u8")).text)
    vid_text = h.get(live.url("/" + master.playlists[0].uri)).text
    vid = m3u8.loads(vid_text)
    # LL-HLS rendition reports name the subtitle renditions the multivariant lists, not their DASH wvtt form.
    reports = re.findall(r'#EXT-X-RENDITION-REPORT:URI="([^"]+)"', vid_text)
    assert "subs-en.m3u8" in reports and not any("wvtt" in u for u in reports), reports
    assert sub.segments and "#EXT-X-PART" not in sub.dumps() and sub.server_control.can_block_reload == "YES"
    # The same sequence numbers as the video (read a moment apart: the video may have one more segment).
    last_sub = sub.media_sequence + len(sub.segments) - 1
    last_vid = vid.media_sequence + len(vid.segments) - 1
    assert last_vid - 1 <= last_sub <= last_vid, (last_sub, last_vid)
    # A blocking reload of the next segment answers once it exists, and lists it.
    t0 = time.monotonic()
    r = h.get(live.url(f"/subs-en.m3u8?_HLS_msn={last_sub + 1}"), timeout=10)
    waited = time.monotonic() - t0
    assert r.status == 200, r.status
    p = m3u8.loads(r.text)
    assert p.media_sequence + len(p.segments) - 1 >= last_sub + 1 and waited < 5, waited
    seg = h.get(live.url("/" + p.segments[-1].uri))
    assert seg.status == 200 and seg.header("content-type").startswith("text/vtt"), seg.header("content-type")
    webvtt.from_string(seg.text)  # parses
    # The live MPD's text set: its segments are whole (no availabilityTimeOffset), on the video's timeline.
    mpd = dashcheck.MPD(h.get(live.url("/manifest.mpd")).text)
    reps = {r.id: r for r in mpd.representations}
    text = reps["subs-en-wvtt"]
    assert text.template is not None and text.template.get("availabilityTimeOffset") is None, text.template.attrib
    video = next(r for r in mpd.representations if r.height)
    common = {t for _, t, _ in text.segments} & {t for _, t, _ in video.segments}
    assert len(common) >= 2, (text.segments, video.segments)
    errors = []
    assert dashcheck.check_live(live.base_url + "/", mpd, errors) > 0 and errors == [], errors


def post_cue(live, body, token=TOKEN, path="/subtitles"):
    req = urllib.request.Request(live.url(path), data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_live_cue_api(live):
    """POST /subtitles (behind --api-token, like /events): a cue for the German rendition, which has no file, is in the
    next segments of its playlist, at the live edge plus its delay; refusals name their field."""
    master = m3u8.loads(h.get(live.url("/index.m3u8")).text)
    assert [m.language for m in master.media if m.type == "SUBTITLES"] == ["en", "de"]
    vid = m3u8.loads(h.get(live.url("/stream.m3u8")).text)
    edge = vid.media_sequence + len(vid.segments)  # the segment in progress
    status, body = post_cue(live, {"language": "de", "text": "Guten Tag", "duration": 1.5, "delay": 1})
    assert (status, body) == (201, {"language": "de"}), (status, body)
    found, deadline = [], time.monotonic() + 8
    while not found and time.monotonic() < deadline:
        p = m3u8.loads(h.get(live.url("/subs-de.m3u8")).text)
        for seg in p.segments:
            n = int(re.search(r"seg(\d+)\.vtt", seg.uri).group(1))
            cues = read_cues(webvtt.from_string(h.get(live.url("/" + seg.uri)).text))
            found += [(n, c) for c in cues if c[2] == "Guten Tag"]
        time.sleep(0.3)
    assert found, "the posted cue never appeared"
    n, (start, end, _) = found[0]
    assert n >= edge - 1 and abs((end - start) - 1.5) <= MS, found
    # Refusals: no token 401, a language without a rendition 422, a bad duration 400 naming it.
    assert post_cue(live, {"text": "x", "duration": 1}, token="wrong")[0] == 401
    status, body = post_cue(live, {"language": "it", "text": "x", "duration": 1})
    assert status == 422 and body.get("field") == "language", body
    status, body = post_cue(live, {"text": "x", "duration": -1})
    assert status == 400 and body.get("field") == "duration", body


def test_a_looped_input_plays_its_sidecar_again(live):
    """`--loop`: the sidecar's cues come again on the next pass, on its timestamps (the 6-s clip's length later; the
    video's own shift, a B-frame delay, under 0.2 s), spaced as in the file."""
    deadline, cues = time.monotonic() + 12, []
    while time.monotonic() < deadline:
        p = m3u8.loads(h.get(live.url("/subs-en.m3u8")).text)
        cues = sorted({c for seg in p.segments for c in read_cues(webvtt.from_string(h.get(live.url("/" + seg.uri)).text))})
        if any(c[0] > 6 + EN[1][0] for c in cues):
            break
        time.sleep(0.5)
    second = [c for c in cues if 6 <= c[0] < 12]
    hello = [c for c in second if c[2] == EN[0][2]]
    across = [c for c in second if c[2] == EN[1][2]]
    assert hello and across, f"no second pass of the sidecar: {cues}"
    assert 0 <= hello[0][0] - (6 + EN[0][0]) < 0.2, hello
    assert abs((across[0][0] - hello[0][0]) - (EN[1][0] - EN[0][0])) <= MS, (hello, across)


def test_the_recording_keeps_the_subtitle_rendition(live):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        path = os.path.join(live.recording, "subs-en.m3u8")
        if os.path.exists(path) and len(m3u8.load(path).segments) >= 3:
            break
        time.sleep(0.2)
    sub, vid = m3u8.load(path), m3u8.load(os.path.join(live.recording, "stream.m3u8"))
    assert sub.playlist_type == "event" and "#EXT-X-MAP" not in open(path).read()
    n = min(len(sub.segments), len(vid.segments))
    assert n >= 3 and [s.duration for s in sub.segments[:n]] == [s.duration for s in vid.segments[:n]]
    for seg in sub.segments:
        webvtt.read(os.path.join(live.recording, seg.uri))
    master = m3u8.load(os.path.join(live.recording, "index.m3u8"))
    assert [m.uri for m in master.media if m.type == "SUBTITLES"] == ["subs-en.m3u8", "subs-de.m3u8"]


def cue_offsets(server, text, stream=""):
    """For each cue `text` in `server`'s English subtitle playlist (of `stream`, a named stream, or the root one): its
    start minus the start (tfdt) of the video segment it starts in, both on the server's own timeline (its WebVTT
    segments' X-TIMESTAMP-MAP maps LOCAL 0 to tfdt 0), as `("start", offset)`; and as `("end", offset)` the same for
    its end, where a later segment has begun. A cue that was already showing when the stream began starts at 0.000,
    the stream's first instant (a WebVTT time cannot be earlier): only its end says where it is."""
    base = f"/{stream}/" if stream else "/"
    vid = m3u8.loads(h.get(server.url(base + "stream.m3u8")).text)
    init = mp4.parse_init(h.get(server.url(base + vid.segment_map[0].uri)).body)
    video = next(t for t in init.tracks if t.handler == "vide")
    starts = []
    for seg in (seg for seg in vid.segments if seg.uri):   # (the segment in progress: its parts only, no URI)
        frag = mp4.parse_fragment(h.get(server.url(base + seg.uri)).body, init)
        run = next(r for r in frag.runs if r.track_id == video.track_id)
        starts.append(run.base_decode_time / video.timescale)
    sub = m3u8.loads(h.get(server.url(base + "subs-en.m3u8")).text)
    cues = {c for seg in sub.segments for c in read_cues(webvtt.from_string(h.get(server.url(base + seg.uri)).text))}

    def offset(t):
        return round(t - max(b for b in starts if b <= t + MS), 3)
    out = []
    for c in (c for c in cues if c[2] == text and starts):
        if c[0] > MS and starts[0] <= c[0] + MS:
            out.append(("start", offset(c[0])))
        if starts[0] <= c[1] + MS and c[1] < starts[-1]:
            out.append(("end", offset(c[1])))
    return sorted(out)


def test_serve_url_follows_the_subtitle_renditions(origin_bin, live):
    """Issue 21: `serve URL` of a live HLS presentation (this module's live origin, pulled) keeps its subtitle
    renditions. libavformat's HLS demuxer does not read them: each is followed while the stream runs, its new WebVTT
    segments fetched and their cues placed on the input's clock by each segment's X-TIMESTAMP-MAP. The cues keep their
    place against the video: each starts as far into its video segment as it does upstream (the pull copies the
    video, so its segments start on the same keyframes). A stream added at run time (the control API) is followed too."""
    def followed(s, stream):
        master = m3u8.loads(h.get(s.url(f"/{stream}/index.m3u8")).text)
        assert [m.language for m in master.media if m.type == "SUBTITLES"] == ["en", "de"], master.dumps()
        assert all(v.stream_info.subtitles == "subs" for v in master.playlists), master.dumps()
        deadline, got = time.monotonic() + 25, {}
        while time.monotonic() < deadline:
            got = {t: cue_offsets(s, t, stream) for _, _, t in EN}
            if all(got.values()):
                break
            time.sleep(1)
        # The origin's own offsets (the same in each turn of its loop), gathered over reads until each kind (start,
        # end) the pulled stream shows is among them: one read may miss a cue whose end is in the segment in progress.
        want = {t: set() for _, _, t in EN}
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            for _, _, t in EN:
                want[t] |= set(cue_offsets(live, t))
            if all({k for k, _ in got[t]} <= {k for k, _ in want[t]} for _, _, t in EN):
                break
            time.sleep(0.5)
        print(f"{stream}:", got, "origin:", want)
        for _, _, t in EN:
            assert got[t], f"{t!r} never reached {stream}'s subtitle rendition: {got}"
            near = {(k, round(x + d, 3)) for k, x in want[t] for d in (-0.001, 0, 0.001)}
            assert set(got[t]) <= near, (t, got, want)

    source = live.url("/index.m3u8")
    with serving(origin_bin, [f"pulled={source}", "--api-token", TOKEN], label="pulled subtitles",
                 ready="/pulled/index.m3u8") as s:
        followed(s, "pulled")
        req = urllib.request.Request(s.url("/api/v1/streams"), data=json.dumps({"name": "added", "input": source}).encode(),
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status in (200, 201), r.status
        followed(s, "added")
        errors = s.stderr()
        assert "retrying" not in errors, errors[-2000:]


def sidx_segments(data, index_range):
    """The media segments of a single-file rendition, cut by its `sidx` (ISO/IEC 14496-12 §8.16.3: each reference's
    size, from the first byte after the sidx plus first_offset)."""
    box = next(b for b in mp4.boxes(data) if b.type == b"sidx")
    assert (box.start, box.end) == index_range, (box.start, box.end, index_range)
    sidx = singlefile.parse_sidx(data, box)
    pos, out = box.end + sidx["first_offset"], []
    for ref in sidx["refs"]:
        out.append(data[pos:pos + ref["size"]])
        pos += ref["size"]
    assert pos == len(data), (pos, len(data))
    return out


def test_single_file_keeps_the_subtitle_renditions(origin_bin, files, tmp_path):
    """`package --single-file` of the Matroska input with English (ASS) and French (SubRip, forced) text tracks: the
    media is one CMAF file per rendition, each subtitle language a WebVTT rendition of its own files on the video's
    segments (HLS) and one `wvtt` CMAF file indexed by its `sidx` (DASH): the same cues at the same times as the
    segmented package's."""
    single = package(origin_bin, files["mkv"], tmp_path / "sf", "--single-file")
    plain = package(origin_bin, files["mkv"], tmp_path / "plain")
    master = m3u8.load(os.path.join(single, "index.m3u8"))
    assert [(m.language, m.forced, m.uri) for m in master.media if m.type == "SUBTITLES"] == [
        ("en", None, "subs-en.m3u8"), ("fr", "YES", "subs-fr.m3u8")], master.dumps()
    video = m3u8.load(os.path.join(single, "stream.m3u8"))
    assert {seg.uri for seg in video.segments} == {"stream.mp4"} and video.segments[0].byterange
    for lang in ("en", "fr"):
        text = open(os.path.join(single, f"subs-{lang}.m3u8")).read()
        _, segs, _ = subtitle_segments(text, lambda uri: open(os.path.join(single, uri)).read())
        assert [d for _, d, _ in segs] == [seg.duration for seg in video.segments]
        _, want, _ = subtitle_segments(open(os.path.join(plain, f"subs-{lang}.m3u8")).read(),
                                       lambda uri: open(os.path.join(plain, uri)).read())
        assert [c for _, _, c in segs] == [c for _, _, c in want] and any(c for _, _, c in segs)
    # DASH: mpegdash parses the MPD (SegmentBase: one file per Representation), GStreamer's dashdemux plays it to the
    # end (FFmpeg 5.1's DASH demuxer misreads a muxed Representation, subtitles or not: docs/subtitles.md),
    # and each wvtt file's cues are the segmented ones'.
    from mpegdash.parser import MPEGDASHParser
    parsed = MPEGDASHParser.parse(os.path.join(single, "manifest.mpd"))
    assert [r.base_urls[0].base_url_value for a in parsed.periods[0].adaptation_sets for r in a.representations] == [
        "stream.mp4", "subs-en-wvtt.mp4", "subs-fr-wvtt.mp4"]
    p = subprocess.run(["gst-launch-1.0", "playbin", f"uri=file://{os.path.abspath(single)}/manifest.mpd",
                        "video-sink=fakesink", "audio-sink=fakesink", "text-sink=fakesink"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "Got EOS" in p.stdout and "ERROR" not in p.stdout + p.stderr, p.stdout + p.stderr
    ns = {"d": "urn:mpeg:dash:schema:mpd:2011"}
    root = ET.parse(os.path.join(single, "manifest.mpd")).getroot()
    text_sets = [a for a in root.findall("d:Period/d:AdaptationSet", ns) if a.get("contentType") == "text"]
    assert [a.get("lang") for a in text_sets] == ["en", "fr"]
    plain_mpd = dashcheck.check_static_dir(plain, [])
    for a in text_sets:
        rep = a.find("d:Representation", ns)
        base = rep.find("d:SegmentBase", ns)
        data = open(os.path.join(single, rep.find("d:BaseURL", ns).text), "rb").read()
        lo, hi = (int(x) for x in base.find("d:Initialization", ns).get("range").split("-"))
        ilo, ihi = (int(x) for x in base.get("indexRange").split("-"))
        got, problems = wvtt_cues(data[lo:hi + 1], sidx_segments(data, (ilo, ihi + 1)))
        assert problems == [], problems
        prep = next(r for r in plain_mpd.representations if r.id == rep.get("id"))
        want, _ = wvtt_cues(open(os.path.join(plain, prep.initialization), "rb").read(),
                            [open(os.path.join(plain, prep.url(n)), "rb").read() for n, _, _ in prep.segments])
        assert got == want and got, (got, want)


def test_malformed_files(origin_bin, files, tmp_path):
    bad = tmp_path / "bad.srt"
    bad.write_text("1\n00:00:01,000 -> 00:00:02,000\nno arrow\n\n2\n00:00:02,000 --> 00:00:03,000\nfine\n")
    p = subprocess.run([origin_bin, "package", files["clip"], "-o", str(tmp_path / "o1"), "--subtitles", f"en={bad}"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "line 1: no cue timing" in p.stderr, p.stderr
    seg = open(tmp_path / "o1" / "subs-en" / "seg2.vtt").read()
    assert "fine" in seg and "no arrow" not in seg
    notvtt = tmp_path / "not.vtt"
    notvtt.write_text("1\n00:00:01.000 --> 00:00:02.000\nno header\n")
    p = subprocess.run([origin_bin, "package", files["clip"], "-o", str(tmp_path / "o2"), "--subtitles", f"en={notvtt}"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    lines = [l for l in p.stderr.splitlines() if "not.vtt" in l]
    assert len(lines) == 1 and "not a WebVTT file" in lines[0], p.stderr
    p = subprocess.run([origin_bin, "package", files["clip"], "-o", str(tmp_path / "o3"), "--subtitles", "en=x.txt"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "--subtitles" in p.stderr and "neither a .vtt nor a .srt" in p.stderr, p.stderr
