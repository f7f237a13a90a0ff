"""H.265 and AV1 copied untouched (issue 24 §1): `package --transcode never` of files made with libx265 and SVT-AV1.

Every fixture is first proven with ffprobe (codec, tag, colour). The output is then checked against independent
readers: the parameter sets FFmpeg's own hevc_mp4toannexb filter extracts from the input equal the arrays of our
`hvcC`; ffmpeg decodes every rendition to the end with the input's frame count; the strict VOD checker passes; the
colour boxes and VIDEO-RANGE match what ffprobe says of the input. The rules checked:
- ISO/IEC 14496-15 §8.4.1: `hvc1` keeps every parameter set in `hvcC` (array_completeness 1) and none in the samples.
- ISO/IEC 14496-15 Annex E.3 / RFC 6381: CODECS `hvc1.<profile>.<compat, reversed hex>.<L|H><level>[.<byte>…]`.
- RFC 8216bis §4.4.6.2: VIDEO-RANGE PQ for transfer 16 (SMPTE ST 2084), HLG for 18 (ARIB STD-B67).
- ISO/IEC 14496-12 §12.1.5: `colr` nclx carries the primaries, transfer and matrix code points.
"""
import os
import re
import struct
import subprocess

import pytest

from hlsharness import clients, m3u8
from hlsharness import media as media_mod
from hlsharness import mp4
from hlsharness.livecheck import check_vod_dir
from hlsharness.testenv import need

# ffprobe's names -> H.273 code points
PRIMARIES = {"bt709": 1, "bt2020": 9}
TRANSFER = {"bt709": 1, "smpte2084": 16, "arib-std-b67": 18}
MATRIX = {"bt709": 1, "bt2020nc": 9}


@pytest.fixture(scope="module")
def made():
    need("ffmpeg", "ffprobe")
    return {n: media_mod.make(n) for n in ("hevc.mp4", "hevc_pq.mp4", "hevc_hlg.mp4", "hevc_video.ts", "av1.mp4")}


def _video(path):
    return clients.ffprobe_json(path, "-select_streams", "v", "-show_streams")["streams"][0]


def _frames(path):
    """Video frames ffmpeg decodes (count_frames over the whole input or playlist)."""
    s = clients.ffprobe_json(path, "-select_streams", "v", "-count_frames", "-show_entries",
                             "stream=nb_read_frames", timeout=120)["streams"][0]
    return int(s["nb_read_frames"])


def _package(origin_bin, src, out, *extra):
    p = subprocess.run([origin_bin, "package", src, "-o", str(out), "--quiet", *extra], capture_output=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return str(out)


def _box(data, fourcc):
    """The body of the first box `fourcc` anywhere in data (found by its type; the init segments here are small)."""
    i = data.find(fourcc)
    assert i >= 4, f"no {fourcc!r} box"
    size = struct.unpack(">I", data[i - 4:i])[0]
    return data[i + 4:i - 4 + size]


def _hvcc_arrays(hvcc):
    """ISO/IEC 14496-15 §8.3.3.1.2: NAL unit type -> (array_completeness, [NAL units])."""
    arrays, i = {}, 23
    for _ in range(hvcc[22]):
        kind, count = hvcc[i] & 0x3F, struct.unpack(">H", hvcc[i + 1:i + 3])[0]
        complete = hvcc[i] >> 7
        i += 3
        units = []
        for _ in range(count):
            n = struct.unpack(">H", hvcc[i:i + 2])[0]
            units.append(hvcc[i + 2:i + 2 + n])
            i += 2 + n
        arrays[kind] = (complete, units)
    return arrays


def _annexb_nals(data):
    return [u for u in re.split(b"\x00\x00\x01", data) if u]


def _input_parameter_sets(path):
    """VPS/SPS/PPS of the first access unit, extracted by FFmpeg's hevc_mp4toannexb bitstream filter."""
    p = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-bsf:v", "hevc_mp4toannexb",
                        "-frames:v", "1", "-f", "hevc", "-"], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    sets = {}
    for nal in _annexb_nals(p.stdout):
        nal = nal.rstrip(b"\x00")
        if not nal:
            continue
        kind = (nal[0] >> 1) & 0x3F
        if kind in (32, 33, 34):
            sets.setdefault(kind, []).append(nal)
    return sets


def _variant(out):
    mv = m3u8.parse_multivariant(open(os.path.join(out, "index.m3u8")).read())
    assert len(mv.variants) == 1
    return mv.variants[0]


def test_fixtures_are_what_they_claim(made):
    """Proven before use: each input carries the codec, tag and colour description its tests rely on."""
    v = _video(made["hevc.mp4"])
    assert (v["codec_name"], v["codec_tag_string"], v["profile"]) == ("hevc", "hvc1", "Main")
    pq = _video(made["hevc_pq.mp4"])
    assert (pq["profile"], pq["color_transfer"], pq["color_primaries"]) == ("Main 10", "smpte2084", "bt2020")
    side = clients.ffprobe_json(made["hevc_pq.mp4"], "-select_streams", "v", "-read_intervals", "%+#1",
                                "-show_frames")["frames"][0].get("side_data_list", [])
    assert {"Mastering display metadata", "Content light level metadata"} <= {s["side_data_type"] for s in side}
    assert _video(made["hevc_hlg.mp4"])["color_transfer"] == "arib-std-b67"
    ts = _video(made["hevc_video.ts"])
    assert ts["codec_name"] == "hevc" and clients.probe_streams(made["hevc_video.ts"])["format"]["format_name"] == "mpegts"
    assert _video(made["av1.mp4"])["codec_name"] == "av1"
    assert clients.ffprobe_json(made["av1.mp4"], "-select_streams", "a", "-show_streams")["streams"][0]["codec_name"] == "opus"


def test_codecs_checker_reads_records_as_the_spec_says():
    """The harness's own CODECS reader (mp4.hevc_codec_suffix), which the VOD checker compares with the playlist,
    on Apple's authoring example (Main 10, level 4.1: hvc1.2.4.L123.B0) and a High-tier, profile-space-1 record."""
    record = bytes([1, 2, 0x20, 0, 0, 0, 0xB0, 0, 0, 0, 0, 0, 123]) + bytes(10)
    assert mp4.hevc_codec_suffix(record) == "2.4.L123.B0"
    high = bytes([1, 1 << 6 | 1 << 5 | 1, 0x60, 0, 0, 0, 0x90, 0x23, 0, 0, 0, 0, 93]) + bytes(10)
    assert mp4.hevc_codec_suffix(high) == "A1.6.H93.90.23"
    with pytest.raises(mp4.MP4Error):
        mp4.hevc_codec_suffix(bytes([0]) + record[1:])


def test_hevc_copied_with_its_parameter_sets_and_every_frame(origin_bin, made, tmp_path):
    src = made["hevc.mp4"]
    out = _package(origin_bin, src, tmp_path / "out", "--transcode", "never")
    init = open(os.path.join(out, "init.mp4"), "rb").read()
    parsed = mp4.parse_init(init)
    assert [t.sample_entry for t in parsed.tracks] == ["hvc1", "mp4a"]
    arrays = _hvcc_arrays(_box(init, b"hvcC"))
    expected = _input_parameter_sets(src)
    for kind in (32, 33, 34):
        complete, units = arrays[kind]
        assert complete == 1, f"array {kind} not complete (hvc1 requires it)"
        assert [u.rstrip(b"\x00") for u in units] == expected[kind], f"NAL type {kind} differs from the input's"
    variant = _variant(out)
    codecs = variant.attrs["CODECS"].split(",")
    assert codecs[0] == "hvc1.1.6.L63.90", codecs   # Main, level 2.1 ... read from x265's SPS: see the unit tests
    assert codecs[1] == "mp4a.40.2"
    res = check_vod_dir(out)
    assert not res.errors, "\n".join(res.errors[:10])
    assert _frames(os.path.join(out, "index.m3u8")) == _frames(src)
    r = clients.ffmpeg_read(os.path.join(out, "index.m3u8"), 30)
    assert r.ok, r


def test_hevc_from_mpegts_moves_in_band_parameter_sets_into_hvcc(origin_bin, made, tmp_path):
    """Annex-B input with VPS/SPS/PPS only in-band: the record is built from them and no segment keeps one."""
    src = made["hevc_video.ts"]
    out = _package(origin_bin, src, tmp_path / "out", "--transcode", "never")
    init = open(os.path.join(out, "init.mp4"), "rb").read()
    arrays = _hvcc_arrays(_box(init, b"hvcC"))
    expected = _input_parameter_sets(src)
    assert {k: [u.rstrip(b"\x00") for u in arrays[k][1]] for k in (32, 33, 34)} == expected
    pl = m3u8.parse_media(open(os.path.join(out, "stream.m3u8")).read())
    kinds = set()
    for seg in pl.segments:
        mdat = _box(open(os.path.join(out, seg.uri), "rb").read(), b"mdat")
        i = 0
        while i < len(mdat):   # a video-only mdat is its samples' 4-byte length-prefixed NAL units end to end
            n = struct.unpack(">I", mdat[i:i + 4])[0]
            assert n > 0 and i + 4 + n <= len(mdat), f"{seg.uri}: NAL length {n} at {i} overruns the mdat"
            kinds.add((mdat[i + 4] >> 1) & 0x3F)
            i += 4 + n
    assert not kinds & {32, 33, 34, 35}, f"parameter sets or AUDs left in the samples: {sorted(kinds)}"
    assert kinds & set(range(16, 24)), "no IRAP picture found: the NAL scan read nothing meaningful"
    assert _frames(os.path.join(out, "index.m3u8")) == _frames(src)


@pytest.mark.parametrize("name,video_range", [("hevc_pq.mp4", "PQ"), ("hevc_hlg.mp4", "HLG")])
def test_hdr_colour_and_video_range_follow_the_input(origin_bin, made, tmp_path, name, video_range):
    src = made[name]
    probe = _video(src)
    out = _package(origin_bin, src, tmp_path / "out", "--transcode", "never")
    variant = _variant(out)
    assert variant.attrs.get("VIDEO-RANGE") == video_range
    assert variant.attrs["CODECS"].startswith("hvc1.2.4.")     # Main 10
    init = open(os.path.join(out, "init.mp4"), "rb").read()
    colr = _box(init, b"colr")
    assert colr[:4] == b"nclx"
    primaries, transfer, matrix = struct.unpack(">HHH", colr[4:10])
    assert (primaries, transfer, matrix) == (PRIMARIES[probe["color_primaries"]], TRANSFER[probe["color_transfer"]],
                                             MATRIX[probe["color_space"]])
    if video_range == "PQ":
        # The SEI's values as ffprobe decodes them from the input, in the box's G, B, R order (chromaticity units of
        # 0.00002, luminance of 0.0001 cd/m2): mdcv and clli match them.
        side = {s["side_data_type"]: s for s in clients.ffprobe_json(
            src, "-select_streams", "v", "-read_intervals", "%+#1", "-show_frames")["frames"][0]["side_data_list"]}
        m = side["Mastering display metadata"]

        def units(q, scale):
            num, den = (int(x) for x in q.split("/"))
            return round(num * scale / den)
        want = b"".join(struct.pack(">HH", units(m[f"{c}_x"], 50000), units(m[f"{c}_y"], 50000))
                        for c in ("green", "blue", "red"))
        want += struct.pack(">HH", units(m["white_point_x"], 50000), units(m["white_point_y"], 50000))
        want += struct.pack(">II", units(m["max_luminance"], 10000), units(m["min_luminance"], 10000))
        assert _box(init, b"mdcv") == want
        c = side["Content light level metadata"]
        assert _box(init, b"clli") == struct.pack(">HH", c["max_content"], c["max_average"])
        assert clients.ffprobe_json(os.path.join(out, "index.m3u8"), "-select_streams", "v", "-show_streams")[
            "streams"][0]["color_transfer"] == "smpte2084"
    assert _frames(os.path.join(out, "index.m3u8")) == _frames(src)


def test_av1_copied(origin_bin, made, tmp_path):
    src = made["av1.mp4"]
    out = _package(origin_bin, src, tmp_path / "out", "--transcode", "never")
    init = open(os.path.join(out, "init.mp4"), "rb").read()
    assert [t.sample_entry for t in mp4.parse_init(init).tracks] == ["av01", "Opus"]
    av1c = _box(init, b"av1C")
    profile, level = av1c[1] >> 5, av1c[1] & 0x1F
    codecs = _variant(out).attrs["CODECS"].split(",")
    assert codecs[0] == f"av01.{profile}.{level:02d}M.08", codecs
    res = check_vod_dir(out)
    assert not res.errors, "\n".join(res.errors[:10])
    assert _frames(os.path.join(out, "index.m3u8")) == _frames(src)


def test_hevc_stream_whose_parameter_sets_come_late(origin_bin, made, tmp_path):
    """An MPEG-TS cut in the middle of its first GOP: nothing before the first VPS/SPS/PPS can be decoded; the
    output starts there and holds every frame from the first keyframe on, never a crash or a broken record."""
    data = open(made["hevc_video.ts"], "rb").read()
    cut = tmp_path / "late.ts"
    start = (len(data) // 3) // 188 * 188   # a third in: inside the first 1-s GOP (3 s, 3 GOPs)
    cut.write_bytes(data[start:])
    out = _package(origin_bin, str(cut), tmp_path / "out", "--transcode", "never")
    res = check_vod_dir(out)
    assert not res.errors, "\n".join(res.errors[:10])
    frames = _frames(os.path.join(out, "index.m3u8"))
    assert 30 <= frames <= 60, frames   # the last two GOPs (maybe less a few frames at the cut's end)


def test_live_hdr_is_signalled_in_hls_and_dash(start_origin, made):
    """Served live: VIDEO-RANGE in the multivariant playlist, and the DASH Representation carries DASH-IF IOP 4.3
    §6.2.5's HDR10 descriptors (EssentialProperty urn:mpeg:mpegB:cicp:{ColourPrimaries 9, TransferCharacteristics
    16, MatrixCoefficients 9}); ffmpeg reads it."""
    import xml.etree.ElementTree as ET
    from hlsharness import http
    s = start_origin(made["hevc_pq.mp4"], "--loop", "--transcode", "never")
    mv = m3u8.parse_multivariant(http.get(s.url("/index.m3u8")).text)
    assert mv.variants[0].attrs.get("VIDEO-RANGE") == "PQ", mv.raw
    mpd = http.get(s.url("/manifest.mpd"))
    assert mpd.status == 200
    ns = {"d": "urn:mpeg:dash:schema:mpd:2011"}
    rep = ET.fromstring(mpd.text).find(".//d:Representation", ns)
    props = {p.get("schemeIdUri").rsplit(":", 1)[-1]: p.get("value") for p in rep.findall("d:EssentialProperty", ns)}
    assert props == {"ColourPrimaries": "9", "TransferCharacteristics": "16", "MatrixCoefficients": "9"}, mpd.text
    assert rep.get("codecs").startswith("hvc1.2.4."), mpd.text
    r = clients.ffmpeg_read(s.url("/index.m3u8"), 3)
    assert r.ok, r


def test_av1_sequence_header_change_is_a_new_init(origin_bin, tmp_path):
    """Two AV1 OBU streams of different sizes end to end (a new sequence header mid-stream): one
    EXT-X-DISCONTINUITY and a second init segment whose sample entry has the new size; every frame kept."""
    need("ffmpeg", "ffprobe")
    parts = []
    for size in ("320x240", "480x270"):
        p = tmp_path / f"{size}.obu"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=30", "-t", "2",
                        "-c:v", "libsvtav1", "-preset", "12", "-g", "30", "-f", "obu", str(p)],
                       check=True, capture_output=True, env={**os.environ, "SVT_LOG": "1"})
        parts.append(p.read_bytes())
    src = tmp_path / "both.obu"
    src.write_bytes(b"".join(parts))
    probe = clients.ffprobe_json(str(src), "-count_frames", "-show_entries", "stream=codec_name,nb_read_frames")
    assert probe["streams"][0]["codec_name"] == "av1" and int(probe["streams"][0]["nb_read_frames"]) == 120
    out = _package(origin_bin, str(src), tmp_path / "out", "--transcode", "never")
    pl = m3u8.parse_media(open(os.path.join(out, "stream.m3u8")).read())
    assert sum(1 for s in pl.segments if s.discontinuity) == 1
    maps = list(dict.fromkeys(s.map_uri for s in pl.segments))
    assert len(maps) == 2
    sizes = [(t.width, t.height) for m in maps for t in mp4.parse_init(open(os.path.join(out, m), "rb").read()).tracks]
    assert sizes == [(320, 240), (480, 270)], sizes
    assert _frames(os.path.join(out, "index.m3u8")) == 120


def _with_dvvc(src, dst, profile, level=6, compat=1):
    """`src` (an hvc1 MP4 with its moov after the mdat, so no chunk offset moves) with a Dolby Vision configuration
    box added to its sample entry ("Dolby Vision Streams Within the ISO Base Media File Format" §3.2: dv_version
    1.0, profile(7) level(6) rpu(1) el(1) bl(1), compatibility id(4), reserved), every enclosing box grown by it."""
    d = bytearray(open(src, "rb").read())

    def child(start, end, name, skip=0):
        i = start + skip
        while i < end:
            size, kind = struct.unpack(">I4s", d[i:i + 8])
            if kind == name:
                return i, i + size
            i += size
        raise AssertionError(f"no {name!r}")
    chain = [child(0, len(d), b"moov")]
    for name, skip in ((b"trak", 8), (b"mdia", 8), (b"minf", 8), (b"stbl", 8), (b"stsd", 8), (b"hvc1", 16)):
        chain.append(child(*chain[-1], name, skip))
    bits = (profile & 0x7F) << 9 | (level & 0x3F) << 3 | 0b101
    body = bytes([1, 0, bits >> 8, bits & 0xFF, compat << 4, 0, 0, 0]) + bytes(16)
    box = struct.pack(">I4s", 8 + len(body), b"dvvC" if profile > 7 else b"dvcC") + body
    d[chain[-1][1]:chain[-1][1]] = box
    for start, _ in chain:
        d[start:start + 4] = struct.pack(">I", struct.unpack(">I", d[start:start + 4])[0] + len(box))
    open(dst, "wb").write(bytes(d))


def _dovi(path):
    streams = clients.ffprobe_json(path, "-select_streams", "v", "-show_streams")["streams"]
    return next((s for s in streams[0].get("side_data_list", []) if s["side_data_type"] == "DOVI configuration record"), None)


def test_dolby_vision_profile_8_is_signalled(origin_bin, made, tmp_path):
    """A profile 8.1 stream (HDR10 base layer): the track stays hvc1 with a dvvC equal to the input's (FFmpeg reads it
    back), and HLS names Dolby Vision in SUPPLEMENTAL-CODECS (`dvh1.08.06/db1p`) beside the base layer's CODECS.
    Profile 5 (no base layer a plain HEVC decoder shows right) is not signalled as Dolby Vision."""
    moov_last = tmp_path / "moov_last.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", made["hevc_pq.mp4"], "-c", "copy", "-tag:v", "hvc1",
                    str(moov_last)], check=True)
    for profile, supplemental in ((8, "dvh1.08.06/db1p"), (5, None)):
        src = tmp_path / f"dv{profile}.mp4"
        _with_dvvc(str(moov_last), str(src), profile)
        probed = _dovi(str(src))
        assert probed and probed["dv_profile"] == profile and probed["dv_bl_signal_compatibility_id"] == 1, probed
        assert _frames(str(src)) == _frames(made["hevc_pq.mp4"])      # the edit left the media alone
        out = _package(origin_bin, str(src), tmp_path / f"out{profile}", "--transcode", "never")
        variant = _variant(out)
        assert variant.attrs.get("SUPPLEMENTAL-CODECS") == supplemental, variant.attrs
        assert variant.attrs["CODECS"].startswith("hvc1.2.4.") and variant.attrs.get("VIDEO-RANGE") == "PQ"
        ours = _dovi(os.path.join(out, "index.m3u8"))
        if supplemental:
            assert ours == probed, (ours, probed)
        else:
            assert ours is None, ours
        res = check_vod_dir(out)
        assert not res.errors, "\n".join(res.errors[:10])
        # DASH: SCTE 214-1's attributes on the Representation, in their namespace (read by an XML parser), as HLS's
        # SUPPLEMENTAL-CODECS split into codec and brand; none for profile 5.
        import xml.etree.ElementTree as ET
        root = ET.parse(os.path.join(out, "manifest.mpd")).getroot()
        reps = [r for r in root.iter("{urn:mpeg:dash:schema:mpd:2011}Representation") if r.get("width")]
        scte = "{urn:scte:dash:scte214-extensions}"
        got = [(r.get("codecs")[:9], r.get(scte + "supplementalCodecs"), r.get(scte + "supplementalProfiles")) for r in reps]
        assert got == [("hvc1.2.4.", *(supplemental.split("/") if supplemental else (None, None)))], got


def test_gstreamer_plays_the_hevc_output_to_the_end(origin_bin, made, tmp_path):
    """GStreamer (hlsdemux2, qtdemux, avdec_h265) reads the packaged H.265 presentation over HTTP to its end with no
    error: one fakesink buffer per frame, as many as the input has."""
    need("gst-launch-1.0")
    from hlsharness import procs
    out = _package(origin_bin, made["hevc.mp4"], tmp_path / "out", "--transcode", "never")
    with procs.StaticServer(out) as server:
        p = subprocess.run(["timeout", "-s", "KILL", "60", "gst-launch-1.0", "-v", "playbin3",
                            f"uri={server.base_url}/index.m3u8", "video-sink=fakesink sync=false silent=false",
                            "audio-sink=fakesink sync=false"], capture_output=True, text=True)
    assert p.returncode == 0 and "ERROR" not in p.stdout + p.stderr, (p.stdout + p.stderr)[-2000:]
    assert p.stdout.count("chain") == _frames(made["hevc.mp4"]), (p.stdout + p.stderr)[-1500:]
