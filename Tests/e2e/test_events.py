"""Timed events (issue 22; docs/events.md) against the real binary: two origins for the module, started together
(about 17 s in all).

- The fixture: an MPEG-TS made by ffmpeg with three real SCTE-35 cues added on a stream-type-0x86 PID (a splice_insert
  out of network at 6.5 s, off the 1-s keyframes, with a 4-s break_duration, its splice_insert back in at 10.5 s, and a
  time_signal Program Start at 13 s), all sections encoded by threefive; proved first by threefive's own TS reader (and ffprobe's `scte_35` stream).
- The copied origin reads it as a file: the break is one EXT-X-DATERANGE whose SCTE35-OUT and SCTE35-IN decode
  (threefive) to the injected sections, byte for byte, with DURATION 4; its START-DATE is the splice's time on the
  EXT-X-PROGRAM-DATE-TIME timeline (a segment's PDT plus the splice's distance from that segment's tfdt) within one
  frame; the MPD's EventStream places it at the same media time and its Binary decodes to the same section; the
  recording lists the break when it starts and again when it ends. The
  splice falls on the next copied keyframe and the log says it was 0.5 s late; --cue-tags legacy and --interstitial.
- The ladder origin (two encoded rungs): the segment that starts at a splice begins with an IDR in both rungs, at the
  same tfdt, after a short segment (the cut is off the grid).
- A break posted to the ladder 1.2 s ahead starts a segment with an IDR in both rungs at its START-DATE.
- ID3 posted to the ladder: an emsg (https://aomedia.org/emsg/ID3) in the same next segment of both rungs and the audio,
  its payload an ID3 tag mutagen reads.
- The events API (POST /events, behind --api-token): a splice out appears in the next playlists and the MPD, its
  section a splice_insert threefive decodes; bad input (not JSON, a cue in the past, a duplicate id, a body over
  64 KB, no token, not JSON's content type) is 4xx and the stream goes on.
"""
import base64
import json
import os
import re
import struct
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from hlsharness import m3u8, mp4, procs, scte35
from hlsharness import http as h
from hlsharness.testenv import need, need_python

TOKEN = "events-api-secret"
AD = "https://ads.example/break/index.m3u8"
FPS = 30
SPLICE_AT = 6.5     # seconds after the first video frame: off the 1-s keyframe grid
BREAK = 4.0
SIGNAL_AT = 13.0    # a time_signal, Program Start (0x10): not a break
MPD_NS = {"mpd": "urn:mpeg:dash:schema:mpd:2011", "scte": "http://www.scte.org/schemas/35/2016"}


@pytest.fixture(scope="module")
def cue_fixture(tmp_path_factory):
    """(path, first video PTS, earliest PTS, [out section, in section]) of a 20-s 640x360 TS with the two cues."""
    need("ffmpeg", "ffprobe")
    need_python("threefive")
    d = tmp_path_factory.mktemp("cues")
    base = str(d / "base.ts")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc=size=640x360:rate={FPS}",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "20",
                    "-c:v", "libx264", "-preset", "ultrafast", "-bf", "0", "-g", str(FPS), "-keyint_min", str(FPS),
                    "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-f", "mpegts", base],
                   check=True, timeout=60)
    probe = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,start_pts",
                                       "-of", "json", base], capture_output=True, check=True, timeout=20).stdout)
    video_pts = next(int(s["start_pts"]) for s in probe["streams"] if s["codec_type"] == "video")
    earliest = min(int(s["start_pts"]) for s in probe["streams"])
    splice = video_pts + int(SPLICE_AT * scte35.TICKS)
    back = splice + int(BREAK * scte35.TICKS)
    out_section = scte35.splice_insert(101, splice / scte35.TICKS, True, BREAK)
    in_section = scte35.splice_insert(101, back / scte35.TICKS, False)
    signal = video_pts + int(SIGNAL_AT * scte35.TICKS)
    signal_section = scte35.time_signal(0xABCD, signal / scte35.TICKS, 0x10)
    path = str(d / "cues.ts")
    with open(base, "rb") as f:
        data = scte35.inject(f.read(), [(splice, out_section), (back, in_section), (signal, signal_section)])
    with open(path, "wb") as f:
        f.write(data)
    return path, video_pts, earliest, [out_section, in_section, signal_section]


@pytest.fixture(scope="module")
def origins(origin_bin, cue_fixture, tmp_path_factory):
    """Both origins of the module, started together (each waits for the same cues): the fixture copied (its
    keyframes every second), and encoded as a two-rung ladder."""
    record = str(tmp_path_factory.mktemp("record"))
    copy = procs.OriginServer(origin_bin, [cue_fixture[0], "--loop", "--api-token", TOKEN, "--window", "10",
                                           "--cue-tags", "legacy", "--interstitial", AD, "--record", record])
    copy.record = record
    ladder = procs.OriginServer(origin_bin, [cue_fixture[0], "--ladder", "240,180", "--window", "12", "--loop",
                                             "--api-token", TOKEN])
    for s in (copy, ladder):
        s.start()
    try:
        for s in (copy, ladder):
            s.wait_ready(20)
        yield copy, ladder
    finally:
        for s, label in ((copy, "copy"), (ladder, "ladder")):
            rc = s.stop()
            print(f"\n--- {label} origin exit {rc}; stderr tail:\n{s.stderr()[-1500:]}")


@pytest.fixture(scope="module")
def cue_origin(origins):
    return origins[0]


@pytest.fixture(scope="module")
def ladder_origin(origins):
    return origins[1]


def test_fixture_carries_the_cues(cue_fixture):
    """threefive's own MPEG-TS reader finds both sections, as injected; ffprobe sees the scte_35 data stream."""
    import threefive
    path, video_pts, _, sections = cue_fixture
    found = []
    threefive.Stream(path).decode(func=found.append)
    assert [bytes.fromhex(c.hex()[2:]) for c in found] == sections
    assert [getattr(c.command, "out_of_network_indicator", None) for c in found] == [True, False, None]
    assert found[2].command.name == "Time Signal" and found[2].descriptors[0].segmentation_type_id == 0x10
    assert abs(found[0].command.pts_time - (video_pts / scte35.TICKS + SPLICE_AT)) < 1e-5
    assert found[0].command.break_duration == BREAK
    codecs = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path],
                            capture_output=True, text=True, timeout=20).stdout.split()
    assert "scte_35" in codecs


def wait_for(url, pattern, timeout):
    """The body of url once it matches pattern (regex), else AssertionError with the last body."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = h.get(url).text
        if re.search(pattern, text):
            return text
        time.sleep(0.25)
    raise AssertionError(f"{pattern!r} not in {url} within {timeout} s:\n{text[-3000:]}")


def dateranges(text):
    return {a["ID"]: a for a in (m3u8.parse_attrs(ln.split(":", 1)[1]) for ln in text.splitlines()
                                 if ln.startswith("#EXT-X-DATERANGE:"))}


def pdt_seconds(s):
    d = m3u8.parse_pdt(s)
    return d if isinstance(d, float) else d.timestamp()


def test_input_cues_become_one_daterange(cue_origin, cue_fixture):
    _, video_pts, earliest, (out_section, in_section, _) = cue_fixture
    text = wait_for(cue_origin.url("/stream.m3u8"), r'ID="splice-101"[^\n]*SCTE35-IN=', timeout=20)
    d = dateranges(text)["splice-101"]
    assert bytes.fromhex(d["SCTE35-OUT"][2:]) == out_section
    assert bytes.fromhex(d["SCTE35-IN"][2:]) == in_section
    decoded = scte35.decode(d["SCTE35-OUT"])
    assert decoded["command"]["name"] == "Splice Insert" and decoded["command"]["out_of_network_indicator"] is True
    assert scte35.decode(d["SCTE35-IN"])["command"]["out_of_network_indicator"] is False
    assert float(d["PLANNED-DURATION"]) == BREAK and float(d["DURATION"]) == BREAK
    assert "#EXT-X-PROGRAM-DATE-TIME:" in text  # §4.4.5.1: required with a daterange
    # START-DATE on the PDT timeline: a listed segment's date plus the splice's distance from its tfdt (the origin's
    # timeline starts at 0 at the input's earliest timestamp).
    splice_out_time = video_pts + int(SPLICE_AT * scte35.TICKS) - earliest
    playlist = m3u8.parse_media(text)
    seg = playlist.segments[0]
    init = mp4.parse_init(h.get(cue_origin.url("/init.mp4")).body)
    frag = mp4.parse_fragment(h.get(cue_origin.url("/" + seg.uri)).body, init)
    video_track = next(t.track_id for t in init.tracks if t.handler == "vide")
    tfdt = next(r.base_decode_time for r in frag.runs if r.track_id == video_track)
    expected = seg.pdt + (splice_out_time - tfdt) / scte35.TICKS
    assert abs(pdt_seconds(d["START-DATE"]) - expected) <= 1 / FPS, (d["START-DATE"], expected)
    # The MPD: the same media time, the same section.
    mpd = ET.fromstring(h.get(cue_origin.url("/manifest.mpd")).body)
    streams = mpd.findall("mpd:Period/mpd:EventStream", MPD_NS)
    assert [s.get("schemeIdUri") for s in streams] == ["urn:scte:scte35:2014:xml+bin"]
    timescale = int(streams[0].get("timescale"))
    event = streams[0].find("mpd:Event", MPD_NS)
    assert int(event.get("presentationTime")) * scte35.TICKS // timescale == splice_out_time
    assert int(event.get("duration")) == int(BREAK * timescale)
    binary = base64.b64decode(event.find("scte:Signal/scte:Binary", MPD_NS).text)
    assert binary == out_section
    # The recording lists the break as it started (PLANNED-DURATION, SCTE35-OUT) and again, same ID and START-DATE,
    # once it ended (DURATION, SCTE35-IN): the last tag is the live one.
    with open(os.path.join(cue_origin.record, "stream.m3u8")) as f:
        recorded = [m3u8.parse_attrs(ln.split(":", 1)[1]) for ln in f.read().splitlines()
                    if ln.startswith("#EXT-X-DATERANGE:ID=\"splice-101\"")]
    assert len(recorded) == 2 and "DURATION" not in recorded[0] and recorded[1] == d, recorded


def test_legacy_cue_tags_and_the_interstitial(cue_origin):
    """--cue-tags legacy: EXT-X-CUE-OUT on the first segment of the break, EXT-X-CUE-OUT-CONT on the next ones,
    EXT-X-CUE-IN on the first one after it; --interstitial: an Apple interstitial daterange at the break's start."""
    text = wait_for(cue_origin.url("/stream.m3u8"), r"#EXT-X-CUE-IN", timeout=25)
    cues = [ln for ln in text.splitlines() if ln.startswith("#EXT-X-CUE")]
    assert cues[0] == f"#EXT-X-CUE-OUT:DURATION={BREAK}", cues
    assert all(c.startswith("#EXT-X-CUE-OUT-CONT:ElapsedTime=") and c.endswith(f",Duration={BREAK}") for c in cues[1:-1]), cues
    assert cues[-1] == "#EXT-X-CUE-IN" and len(cues) >= 4, cues
    ranges = dateranges(text)
    i = ranges["splice-101.interstitial"]
    assert i["CLASS"] == "com.apple.hls.interstitial" and i["X-ASSET-URI"] == AD and float(i["X-RESUME-OFFSET"]) == BREAK
    assert i["START-DATE"] == ranges["splice-101"]["START-DATE"]
    # Delta updates: _HLS_skip=YES keeps every daterange; v2 (offered by CAN-SKIP-DATERANGES=YES) says which were
    # removed lately (version 10) and keeps every range that starts in the segments it lists.
    assert "CAN-SKIP-DATERANGES=YES" in text
    yes = h.get(cue_origin.url("/stream.m3u8?_HLS_skip=YES")).text
    assert set(dateranges(yes)) >= set(ranges) - {"api-break-1"}
    v2 = h.get(cue_origin.url("/stream.m3u8?_HLS_skip=v2")).text
    assert re.search(r'#EXT-X-SKIP:SKIPPED-SEGMENTS=\d+,RECENTLY-REMOVED-DATERANGES="[^"]*"\n', v2), v2[:800]
    assert "#EXT-X-VERSION:10\n" in v2
    first = m3u8.parse_media(v2).segments[0].pdt
    assert all(pdt_seconds(d["START-DATE"]) < first or d["ID"] in dateranges(v2) for d in dateranges(yes).values())


def test_copied_input_cuts_at_its_next_keyframe_and_says_how_far(cue_origin):
    """The copied video's keyframes are a second apart: the splice (half a second off them) starts a segment at the
    next keyframe, and the log says it fell 0.5 s late; EXT-X-TARGETDURATION stays 1."""
    wait_for(cue_origin.url("/stream.m3u8"), r'ID="splice-101"[^\n]*SCTE35-IN=', timeout=20)
    assert re.search(r"splice at [\d.]+ s: the segment starts at the first keyframe after it, 0\.5 s later",
                     cue_origin.stderr()), cue_origin.stderr()[-2000:]
    assert "#EXT-X-TARGETDURATION:1\n" in h.get(cue_origin.url("/stream.m3u8")).text


def spliced_segments(s, splices, off_grid=True):
    """How many of the splice dates (PDT seconds) start a segment in both rungs with an IDR at the same tfdt (`off_grid`:
    after a short segment, the cut being off the 1-s grid); asserts on every one listed in both rungs."""
    checked = 0
    for at in splices:
        starts = {}
        for rung in ("240p", "180p"):
            playlist_text = h.get(s.url(f"/{rung}.m3u8")).text
            assert "#EXT-X-TARGETDURATION:1\n" in playlist_text
            playlist = m3u8.parse_media(playlist_text)
            index = next((i for i, g in enumerate(playlist.segments) if abs(g.pdt - at) < 0.0015), None)
            if index is None or index == 0:
                break
            seg = playlist.segments[index]
            if off_grid:
                assert playlist.segments[index - 1].duration < 0.9, "the splice is off the grid: a short segment before it"
            init = mp4.parse_init(h.get(s.url(f"/{rung}/init.mp4")).body)
            data = h.get(s.url("/" + seg.uri)).body
            track = init.tracks[0].track_id
            run = next(r for r in mp4.parse_fragment(data, init).runs if r.track_id == track)
            assert mp4.is_sync(run.flags[0]), f"{rung} {seg.uri} does not start with a sync sample"
            assert 5 in mp4.nal_unit_types(mp4.first_sample_bytes(data, init, track)), f"{rung} {seg.uri}: no IDR"
            starts[rung] = (seg.seq, run.base_decode_time)
        else:
            assert len(set(starts.values())) == 1, starts
            checked += 1
    return checked


def test_ladder_rungs_start_a_segment_with_an_idr_at_the_splice(ladder_origin):
    """Encoded, every rung has an IDR on the splice's frame and a segment starting there, at the same tfdt in every
    rung (off the 1-s grid: the segment before it is shorter); TARGETDURATION never changes."""
    s = ladder_origin
    text = wait_for(s.url("/240p.m3u8"), r'ID="splice-101"[^\n]*SCTE35-IN=', timeout=25)
    d = dateranges(text)["splice-101"]
    splices = [pdt_seconds(d["START-DATE"]), pdt_seconds(d["START-DATE"]) + float(d["DURATION"])]
    assert spliced_segments(s, splices) >= 1, f"no splice's segment listed in both rungs:\n{text}"


def test_posted_splice_on_the_ladder_is_frame_accurate(ladder_origin):
    """A break posted 1.2 s ahead on the ladder: its START-DATE starts a segment with an IDR in both rungs."""
    s = ladder_origin
    status, answer = post_event(s, {"type": "splice_out", "id": "api-ladder", "duration": 2, "delay": 1.2})
    assert status == 201, answer
    text = wait_for(s.url("/240p.m3u8"), r'ID="api-ladder"', timeout=6)
    at = pdt_seconds(dateranges(text)["api-ladder"]["START-DATE"])
    deadline = time.monotonic() + 5
    # (Where the edge was is anywhere on the grid: the segment before may be of any length up to a second.)
    while not spliced_segments(s, [at], off_grid=False):
        assert time.monotonic() < deadline, h.get(s.url("/240p.m3u8")).text
        time.sleep(0.3)


def post_event(origin, body, token=TOKEN, content_type="application/json"):
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", origin.port, timeout=5)
    try:
        conn.request("POST", "/events", body=data, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode("utf-8", errors="replace")
    finally:
        conn.close()


def test_posted_event_appears_in_the_next_playlist_and_the_mpd(cue_origin):
    status, answer = post_event(cue_origin, {"type": "splice_out", "id": "api-break-1", "duration": 5})
    assert status == 201, answer
    assert json.loads(answer) == {"id": "api-break-1", "type": "splice_out"}
    posted = time.monotonic()
    text = wait_for(cue_origin.url("/stream.m3u8"), r'ID="api-break-1"', timeout=5)
    assert time.monotonic() - posted < 3, "listed with the next segment or the one after"
    d = dateranges(text)["api-break-1"]
    decoded = scte35.decode(d["SCTE35-OUT"])
    assert decoded["command"]["name"] == "Splice Insert"
    assert decoded["command"]["out_of_network_indicator"] is True and decoded["command"]["break_duration"] == 5.0
    assert float(d["PLANNED-DURATION"]) == 5.0
    mpd = ET.fromstring(h.get(cue_origin.url("/manifest.mpd")).body)
    binaries = [base64.b64decode(b.text) for b in mpd.findall(
        "mpd:Period/mpd:EventStream/mpd:Event/scte:Signal/scte:Binary", MPD_NS)]
    assert bytes.fromhex(d["SCTE35-OUT"][2:]) in binaries
    status, answer = post_event(cue_origin, {"type": "splice_in", "id": "api-break-1"})
    assert status == 201, answer
    text = wait_for(cue_origin.url("/stream.m3u8"), r'ID="api-break-1"[^\n]*SCTE35-IN=', timeout=5)
    back = dateranges(text)["api-break-1"]
    assert scte35.decode(back["SCTE35-IN"])["command"]["out_of_network_indicator"] is False
    assert 0 < float(back["DURATION"]) < 5, "the break ended when the splice in came"


def emsgs(data):
    """The emsg boxes (version 1) in front of a segment's first moof: (scheme, value, timescale, time, id, data)."""
    out = []
    for b in mp4.boxes(data):
        if b.type == b"moof":
            break
        if b.type != b"emsg":
            continue
        p = b.start + b.header
        assert data[p] == 1, "emsg version 1"
        timescale, time_, _duration, id_ = struct.unpack_from(">IQII", data, p + 4)
        rest = data[p + 24:b.start + b.size]
        scheme, value, payload = rest.split(b"\0", 2)
        out.append((scheme.decode(), value.decode(), timescale, time_, id_, payload))
    return out


def test_posted_id3_is_an_emsg_in_the_next_segment_of_every_rendition(ladder_origin):
    """{"type": "id3", "text": ...} is an emsg (scheme https://aomedia.org/emsg/ID3) in the next segment of both rungs
    and the audio rendition, the same in each, its payload an ID3 tag whose TIT2 mutagen reads back."""
    need_python("mutagen")
    import io
    from mutagen.id3 import ID3
    s = ladder_origin
    renditions = ("240p", "180p", "audio")
    last = {r: m3u8.parse_media(h.get(s.url(f"/{r}.m3u8")).text).segments[-1].seq for r in renditions}
    status, answer = post_event(s, {"type": "id3", "id": "song-1", "text": "Song title — live"})
    assert status == 201, answer
    found = {}
    deadline = time.monotonic() + 8
    while len(found) < len(renditions) and time.monotonic() < deadline:
        for r in renditions:
            if r in found:
                continue
            for seg in m3u8.parse_media(h.get(s.url(f"/{r}.m3u8")).text).segments:
                if seg.seq > last[r]:
                    messages = [m for m in emsgs(h.get(s.url("/" + seg.uri)).body)
                                if m[0] == "https://aomedia.org/emsg/ID3"]
                    if messages:
                        found[r] = (seg.seq, messages)
                        break
        time.sleep(0.3)
    assert set(found) == set(renditions), found
    assert len({seq for seq, _ in found.values()}) == 1, "the same segment in every rendition"
    # The segment in progress has begun (its first part carries the styp): the next one to start carries the box; one
    # more if a segment ended between reading the playlists and posting.
    assert all(seq <= last["240p"] + 3 for seq, _ in found.values()), "the next segment to start"
    for r, (_, messages) in found.items():
        assert len(messages) == 1
        scheme, value, timescale, _, _, payload = messages[0]
        tag = ID3(io.BytesIO(payload))
        assert str(tag["TIT2"]) == "Song title — live", r
    assert len({m[0][2:5] for _, m in found.values()}) == 1, "the same timescale, time and id in every rendition"
    # The MPD declares the scheme in every AdaptationSet from then on (dash.js dispatches only declared schemes).
    mpd = ET.fromstring(h.get(s.url("/manifest.mpd")).body)
    sets = mpd.findall("mpd:Period/mpd:AdaptationSet", MPD_NS)
    assert sets and all(a.find("mpd:InbandEventStream", MPD_NS).get("schemeIdUri") == "https://aomedia.org/emsg/ID3"
                        for a in sets)


def test_bad_events_are_4xx_and_the_stream_goes_on(cue_origin):
    before = m3u8.parse_media(h.get(cue_origin.url("/stream.m3u8")).text).media_sequence
    assert post_event(cue_origin, b"{not json")[0] == 400
    assert post_event(cue_origin, {"type": "splice_sideways"})[0] == 400
    assert post_event(cue_origin, {"type": "splice_out", "delay": -10})[0] == 422
    assert post_event(cue_origin, {"type": "splice_out", "start_date": "2020-01-01T00:00:00Z"})[0] == 422
    assert post_event(cue_origin, {"type": "time_signal", "id": "dup", "segmentation_type_id": 16})[0] == 201
    assert post_event(cue_origin, {"type": "time_signal", "id": "dup", "segmentation_type_id": 16})[0] == 409
    assert post_event(cue_origin, {"type": "splice_out", "pad": "x" * 70_000})[0] == 413
    assert post_event(cue_origin, {"type": "splice_out"}, token=None)[0] == 401
    assert post_event(cue_origin, {"type": "splice_out"}, token="wrong")[0] == 401
    assert post_event(cue_origin, b"type=splice_out", content_type="application/x-www-form-urlencoded")[0] == 415
    wait_for(cue_origin.url("/stream.m3u8"), r'ID="dup"', timeout=5)
    deadline = time.monotonic() + 5
    while m3u8.parse_media(h.get(cue_origin.url("/stream.m3u8")).text).media_sequence <= before + 1:
        assert time.monotonic() < deadline, "the stream stopped"
        time.sleep(0.3)
    assert cue_origin.proc.poll() is None


def test_time_signal_is_a_command_range(cue_origin, cue_fixture):
    """The time_signal (segmentation type 0x10, not a break) is a daterange of its own with SCTE35-CMD, no duration."""
    text = wait_for(cue_origin.url("/stream.m3u8"), r'ID="seg-43981-16"', timeout=12)
    d = dateranges(text)["seg-43981-16"]
    assert bytes.fromhex(d["SCTE35-CMD"][2:]) == cue_fixture[3][2]
    assert "DURATION" not in d and "SCTE35-OUT" not in d
    decoded = scte35.decode(d["SCTE35-CMD"])
    assert decoded["command"]["name"] == "Time Signal" and decoded["descriptors"][0]["segmentation_type_id"] == 16


def test_package_keeps_the_events(origin_bin, cue_fixture, tmp_path):
    """`package` of the fixture: its VOD playlist lists the break (out, in, DURATION) and the time signal; its static
    MPD has the EventStream; the copied cut still falls on the next keyframe (and says so)."""
    out = str(tmp_path / "vod")
    p = subprocess.run([origin_bin, "package", cue_fixture[0], "-o", out], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    with open(os.path.join(out, "stream.m3u8")) as f:
        ranges = dateranges(f.read())
    assert set(ranges) == {"splice-101", "seg-43981-16"}
    assert float(ranges["splice-101"]["DURATION"]) == BREAK
    assert bytes.fromhex(ranges["splice-101"]["SCTE35-IN"][2:]) == cue_fixture[3][1]
    mpd = ET.parse(os.path.join(out, "manifest.mpd")).getroot()
    assert mpd.get("type") == "static"
    events = mpd.findall("mpd:Period/mpd:EventStream/mpd:Event", MPD_NS)
    assert len(events) == 2
    assert b"0.5 s later" in p.stderr


def test_package_with_inband_events(origin_bin, cue_fixture, tmp_path):
    """`package --events inband`: every section is an emsg (urn:scte:scte35:2013:bin) in the segments, its message_data
    the injected section byte for byte (threefive decodes it), at the splice's media time, the out with the break's
    duration, ahead of or in the segment the splice starts; the MPD declares the scheme (InbandEventStream) and has no
    EventStream; the HLS playlist still lists the dateranges."""
    out = str(tmp_path / "vod")
    p = subprocess.run([origin_bin, "package", cue_fixture[0], "-o", out, "--events", "inband"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    found = []
    with open(os.path.join(out, "stream.m3u8")) as f:
        segments = m3u8.parse_media(f.read()).segments
    for seg in segments:
        with open(os.path.join(out, seg.uri), "rb") as f:
            data = f.read()
        found += [(seg.uri, m) for m in emsgs(data) if m[0] == "urn:scte:scte35:2013:bin"]
    sections = cue_fixture[3]
    assert [m[5] for _, m in found] == sections, [(s, m[5].hex()) for s, m in found]
    assert scte35.decode("0x" + found[0][1][5].hex())["command"]["out_of_network_indicator"] is True
    (_, out_msg), (_, in_msg) = found[0], found[1]
    assert out_msg[2] == in_msg[2], "one timescale"
    assert abs((in_msg[3] - out_msg[3]) / out_msg[2] - BREAK) < 0.002, "the splice times, BREAK apart"
    assert out_msg[4] != in_msg[4], "an out and its in are two messages"
    with open(os.path.join(out, "stream.m3u8")) as f:
        assert set(dateranges(f.read())) == {"splice-101", "seg-43981-16"}
    mpd = ET.parse(os.path.join(out, "manifest.mpd")).getroot()
    assert not mpd.findall("mpd:Period/mpd:EventStream", MPD_NS)
    sets = mpd.findall("mpd:Period/mpd:AdaptationSet", MPD_NS)
    assert sets and all("urn:scte:scte35:2013:bin" in [e.get("schemeIdUri") for e in a.findall("mpd:InbandEventStream", MPD_NS)]
                        for a in sets)
