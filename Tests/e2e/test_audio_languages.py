"""Issue 21 §1, audio languages: every audio track of the input is its own audio rendition.

The fixtures are made by FFmpeg and proven with ffprobe first: H.264 video with an English AAC track (a 440 Hz sine)
and a French one (660 Hz), `language=eng` / `language=fra`, in Matroska and in MP4. Read back the way users read
them: the multivariant lists both languages in one audio group with LANGUAGE, NAME and DEFAULT (`package`, and a live
`serve --loop` with and without `--ladder`: without, the video keeps the English audio inside and the French is an
EXT-X-MEDIA with URI in the same group); each audio rendition's packets are its input track's, byte for byte (ffmpeg
`framemd5` of `-c copy`, test_audio_codecs' helpers); ffmpeg reads the multivariant with `-map 0` silently;
`--audio-tracks fr` keeps only French; the DASH MPD has an audio AdaptationSet per language with `lang` and `Role`.
Each checker is shown to fail on wrong output. hls.js switching languages in Chromium: test_audio_languages_play.py.
"""
import os
import re
import subprocess

import pytest

from hlsharness import clients, http
from hlsharness.testenv import need
from hlsharness.procs import package
from test_audio_codecs import attributes, audio_packets, bit_exact_problems

SECONDS = 4
TONES = {"eng": 440, "fra": 660}


def make_fixture(path):
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30",
           "-f", "lavfi", "-i", f"sine=f={TONES['eng']}:sample_rate=48000",
           "-f", "lavfi", "-i", f"sine=f={TONES['fra']}:sample_rate=48000", "-t", str(SECONDS),
           "-map", "0:v", "-map", "1:a", "-map", "2:a",
           "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p",
           "-c:a", "aac", "-b:a", "96k", "-ac", "2",
           "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", path]
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    # Proven first: two AAC tracks with their language tags, and H.264.
    streams = clients.probe_streams(path)["streams"]
    audio = [s for s in streams if s["codec_type"] == "audio"]
    assert [(s["codec_name"], s.get("tags", {}).get("language")) for s in audio] == [("aac", "eng"), ("aac", "fra")], audio
    assert [s["codec_name"] for s in streams if s["codec_type"] == "video"] == ["h264"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    need("ffmpeg", "ffprobe")
    d = tmp_path_factory.mktemp("audio-languages")
    out = {}
    for name in ("en_fr.mkv", "en_fr.mp4"):
        make_fixture(str(d / name))
        out[name] = str(d / name)
    return out


def track_packets(path_or_url, n, seconds=None):
    """audio_packets of the input's n-th audio track (`-map 0:a:n`)."""
    cmd = ["timeout", "-s", "KILL", "60", "ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-rw_timeout", "5000000",
           "-i", path_or_url]
    if seconds:
        cmd += ["-t", str(seconds)]
    p = subprocess.run(cmd + ["-map", f"0:a:{n}", "-c", "copy", "-f", "framemd5", "-"], capture_output=True, timeout=90)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    rows = [line.split(",") for line in p.stdout.decode().splitlines() if line and not line.startswith("#")]
    return [(int(r[4]), r[5].strip()) for r in rows]


def audio_media(multivariant):
    return [attributes(l) for l in multivariant.splitlines() if l.startswith("#EXT-X-MEDIA:") and "TYPE=AUDIO" in l]


def language_problems(multivariant, expected, muxed):
    """`expected`: [(LANGUAGE, NAME, DEFAULT)] in order. One audio group; every member AUTOSELECT=YES with CHANNELS;
    every variant names the group; with `muxed`, the default member has no URI (its audio is in the variant) and the
    others have one; without, every member has one."""
    problems = []
    media = audio_media(multivariant)
    got = [(m.get("LANGUAGE"), m.get("NAME"), m.get("DEFAULT")) for m in media]
    if got != expected:
        problems.append(f"EXT-X-MEDIA (LANGUAGE, NAME, DEFAULT) {got}, expected {expected}")
    if len({m.get("GROUP-ID") for m in media}) != 1:
        problems.append(f"audio groups {sorted({m.get('GROUP-ID') for m in media})}, expected one")
    for m in media:
        if m.get("AUTOSELECT") != "YES" or not m.get("CHANNELS"):
            problems.append(f"{m.get('NAME')}: AUTOSELECT={m.get('AUTOSELECT')} CHANNELS={m.get('CHANNELS')}")
        wants_uri = not (muxed and m.get("DEFAULT") == "YES")
        if ("URI" in m) != wants_uri:
            problems.append(f"{m.get('NAME')}: URI {'missing' if wants_uri else 'present'} ({m.get('URI')})")
    group = media[0].get("GROUP-ID") if media else None
    for v in [attributes(l) for l in multivariant.splitlines() if l.startswith("#EXT-X-STREAM-INF:")]:
        if v.get("AUDIO") != group:
            problems.append(f"a variant's AUDIO={v.get('AUDIO')}, expected {group}")
    return problems


EN_FR = [("en", "English", "YES"), ("fr", "Français", "NO")]



def read_all(url_or_path):
    """ffmpeg reads every rendition of the multivariant (`-map 0`) without a word on stderr."""
    p = subprocess.run(["timeout", "-s", "KILL", "60", "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
                        "-xerror", "-rw_timeout", "5000000", "-i", url_or_path, "-t", "3", "-map", "0", "-f", "null", "-"],
                       capture_output=True, timeout=90)
    return p.returncode == 0 and not p.stderr.strip(), p.stderr.decode()[-2000:]


@pytest.mark.parametrize("name,ladder", [("en_fr.mkv", False), ("en_fr.mp4", True)])
def test_package_offers_both_languages_bit_exact(origin_bin, inputs, tmp_path, name, ladder):
    args = ["--ladder", "source"] if ladder else []
    out = package(origin_bin, inputs[name], tmp_path / "out", *args)
    playlist = os.path.join(out, "index.m3u8")
    text = open(playlist).read()
    assert language_problems(text, EN_FR, muxed=not ladder) == [], text
    ok, err = read_all(playlist)
    assert ok, err
    media = audio_media(text)
    french = os.path.join(out, media[1]["URI"])
    assert "audio-fr" in media[1]["URI"]
    # The French rendition is the input's French track; the English one (its own rendition, or the audio inside the
    # muxed variant) the English track. The first packet may go (it starts before the first picture); from MP4, whose
    # AAC starts with a priming packet at -1024, the first two (as with one audio track: the segmenter's start rule).
    lead = 2 if name.endswith(".mp4") else 1
    src_en, src_fr = track_packets(inputs[name], 0), track_packets(inputs[name], 1)
    assert bit_exact_problems(src_fr, audio_packets(french), may_drop_leading=lead) == []
    english = os.path.join(out, media[0]["URI"]) if ladder else os.path.join(out, "stream.m3u8")
    assert bit_exact_problems(src_en, audio_packets(english), may_drop_leading=lead) == []
    # The checker can fail: the tracks are told apart.
    assert bit_exact_problems(src_en, audio_packets(french), may_drop_leading=lead) != []
    # mdhd carries the language (ISO 639-2/T), which ffprobe reads back as the stream's tag.
    init = os.path.join(out, media[1]["URI"][: -len(".m3u8")], "init.mp4")
    tags = [s.get("tags", {}).get("language") for s in clients.probe_streams(init)["streams"]]
    assert tags == ["fra"], tags
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    sets = re.findall(r'<AdaptationSet[^>]*contentType="audio"[^>]*>\s*<Role[^>]*value="(\w+)"', mpd)
    langs = re.findall(r'<AdaptationSet[^>]*contentType="audio"[^>]*lang="([\w-]+)"', mpd)
    if ladder:
        assert langs == ["en", "fr"] and sets == ["main", "alternate"], (langs, sets)
    else:
        assert langs == ["fr"] and sets == ["alternate"], (langs, sets)


def test_language_checker_fails_on_wrong_playlists():
    good = ('#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",'
            'CHANNELS="2"\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Français",DEFAULT=NO,AUTOSELECT=YES,'
            'LANGUAGE="fr",CHANNELS="2",URI="audio-fr.m3u8"\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS="x",AUDIO="audio"\n'
            'stream.m3u8\n')
    assert language_problems(good, EN_FR, muxed=True) == []
    assert language_problems(good, EN_FR, muxed=False) != []                       # the default has no URI
    assert language_problems(good.replace('LANGUAGE="fr"', 'LANGUAGE="de"'), EN_FR, muxed=True) != []
    assert language_problems(good.replace('DEFAULT=NO', 'DEFAULT=YES'), EN_FR, muxed=True) != []
    assert language_problems(good.replace(',AUDIO="audio"', ''), EN_FR, muxed=True) != []
    assert language_problems(good.replace('GROUP-ID="audio",NAME="Fr', 'GROUP-ID="b",NAME="Fr'), EN_FR, muxed=True) != []


def test_audio_tracks_keeps_only_french(origin_bin, inputs, tmp_path):
    out = package(origin_bin, inputs["en_fr.mkv"], tmp_path / "out", "--audio-tracks", "fr")
    text = open(os.path.join(out, "index.m3u8")).read()
    # One track left: no alternatives to offer; the muxed rendition carries the French track.
    assert "TYPE=AUDIO" not in text, text
    src_fr = track_packets(inputs["en_fr.mkv"], 1)
    assert bit_exact_problems(src_fr, audio_packets(os.path.join(out, "stream.m3u8")), may_drop_leading=1) == []
    # Ordered, renamed, French the default.
    out2 = package(origin_bin, inputs["en_fr.mkv"], tmp_path / "out2", "--ladder", "source", "--audio-tracks", "1,0",
                   "--audio-name", "0=English (original)")
    text2 = open(os.path.join(out2, "index.m3u8")).read()
    assert language_problems(text2, [("fr", "Français", "YES"), ("en", "English (original)", "NO")], muxed=False) == []
    # An unknown entry is one clear line.
    p = subprocess.run([origin_bin, "package", inputs["en_fr.mkv"], "-o", str(tmp_path / "out3"), "--audio-tracks", "de"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    err = p.stderr.decode()
    assert p.returncode != 0 and "--audio-tracks" in err and "de" in err and "1 fr" in err, err
    p = subprocess.run([origin_bin, "package", inputs["en_fr.mkv"], "-o", str(tmp_path / "out4"),
                        "--audio-language", "1=not a tag"], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    err = p.stderr.decode()
    assert p.returncode != 0 and "--audio-language" in err and "not a language tag" in err, err


def text_of(url):
    r = http.get(url, timeout=10)
    assert r.status == 200, (url, r.status, r.error)
    return r.text


@pytest.mark.parametrize("ladder", [False, True])
def test_live_loop_offers_both_languages(start_origin, inputs, ladder):
    args = ["--ladder", "source"] if ladder else []
    s = start_origin(inputs["en_fr.mkv"], "--loop", "--default-audio", "fr", *args)
    text = text_of(s.url("/index.m3u8"))
    expected = [("fr", "Français", "YES"), ("en", "English", "NO")]
    assert language_problems(text, expected, muxed=not ladder) == [], text
    ok, err = read_all(s.url("/index.m3u8"))
    assert ok, err
    media = audio_media(text)
    other = media[1]["URI"]
    assert other == ("audio.m3u8" if ladder else "audio-en.m3u8"), other   # a ladder's first track keeps `audio`
    out = audio_packets(s.url("/" + other), seconds=3)
    assert len(out) >= 60
    assert bit_exact_problems(track_packets(inputs["en_fr.mkv"], 0), out, cyclic=True) == []
    assert bit_exact_problems(track_packets(inputs["en_fr.mkv"], 1), out, cyclic=True) != []
    mpd = text_of(s.url("/manifest.mpd"))
    langs = re.findall(r'<AdaptationSet[^>]*contentType="audio"[^>]*lang="([\w-]+)"', mpd)
    assert langs == (["en", "fr"] if ladder else ["en"]), mpd


def test_commentary_and_audio_description_from_the_disposition(origin_bin, inputs, tmp_path):
    """Matroska FlagCommentary / FlagVisualImpaired (FFmpeg's `comment` / `visual_impaired` dispositions, proven with
    ffprobe) become DASH Role commentary / description, and audio description its HLS CHARACTERISTICS."""
    roles = {}
    for disposition, role in (("comment", "commentary"), ("visual_impaired", "description")):
        src = str(tmp_path / f"{disposition}.mkv")
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", inputs["en_fr.mkv"], "-map", "0", "-c", "copy",
                        "-disposition:a:1", disposition, src], check=True, timeout=60)
        probed = [s.get("disposition", {}).get(disposition) for s in clients.probe_streams(src)["streams"]
                  if s["codec_type"] == "audio"]
        assert probed == [0, 1], probed
        out = package(origin_bin, src, tmp_path / disposition, "--ladder", "source")
        mpd = open(os.path.join(out, "manifest.mpd")).read()
        roles[disposition] = re.findall(r'<Role schemeIdUri="urn:mpeg:dash:role:2011" value="(\w+)"', mpd)
        assert roles[disposition] == ["main", role], mpd
        media = audio_media(open(os.path.join(out, "index.m3u8")).read())
        expected = "public.accessibility.describes-video" if role == "description" else None
        assert [m.get("CHARACTERISTICS") for m in media] == [None, expected], media
