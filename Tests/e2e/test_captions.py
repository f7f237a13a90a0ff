"""Issue 21 §3: CTA-608 closed captions carried through the ladder and signalled.

The fixture is an x264 stream with A/53 `cc_data` SEI written by hlsharness/cea608.py, proved first by FFmpeg's own
caption decoder (the four captions at their times). Then, read back with that same decoder:
- `package --ladder 360,240:hevc`: every rung, re-encoded by libx264 and libx265, carries the same captions at the same
  times (within one frame); the multivariant has `EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS` with `INSTREAM-ID="CC1"` and every
  variant `CLOSED-CAPTIONS="cc"`; the MPD an `Accessibility` `urn:scte:dash:cc:cea-608:2015`; the strict VOD checks pass.
- a copied stream keeps them; a stream without captions (and `--captions none`) says `CLOSED-CAPTIONS=NONE`.
- hls.js in headless Chromium, playing a re-encoded rung of the live ladder, gets the captions as a text track whose
  cues are the fixture's texts, 3 s apart as in the fixture.
"""
import os
import re
import subprocess
import time

import pytest

from hlsharness import cea608, chromium
from hlsharness.presentation import check_vod_presentation
from hlsharness.testenv import need_chromium
from hlsharness.procs import package

CAPTIONS = [(1.0, 2.5, "ALPHA ONE"), (4.0, 5.5, "BRAVO TWO"), (7.0, 8.5, "CHARLIE THREE"), (10.0, 11.5, "DELTA FOUR")]
FRAME = 1 / 30 + 0.001


@pytest.fixture(scope="module")
def captioned(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cc") / "captioned.mp4")
    cea608.make_captioned(path, CAPTIONS, seconds=12)
    # The fixture is proved by an independent reader before anything trusts it.
    assert cea608.read_captions(path) == CAPTIONS
    return path



def rendition_file(out, playlist, dest):
    """The rendition's init segment and media segments, in playlist order, as one file FFmpeg reads."""
    text = open(os.path.join(out, playlist)).read()
    base = os.path.dirname(os.path.join(out, playlist))
    init = re.search(r'#EXT-X-MAP:URI="([^"]+)"', text).group(1)
    segments = [l for l in text.splitlines() if l and not l.startswith("#")]
    with open(dest, "wb") as f:
        for uri in [init] + segments:
            f.write(open(os.path.join(base, uri), "rb").read())
    return dest


def caption_problems(got, expected=CAPTIONS, tolerance=FRAME):
    """What differs between two caption lists: a text, or a start or end more than `tolerance` away."""
    if [c[2] for c in got] != [c[2] for c in expected]:
        return [f"texts {[c[2] for c in got]} != {[c[2] for c in expected]}"]
    return [f"{e[2]}: {g[0]:.3f}-{g[1]:.3f} s, expected {e[0]:.3f}-{e[1]:.3f} s" for g, e in zip(got, expected)
            if abs(g[0] - e[0]) > tolerance or abs(g[1] - e[1]) > tolerance]


def variants(multivariant):
    return re.findall(r"#EXT-X-STREAM-INF:([^\n]*)\n([^\n]+)", multivariant)


def test_every_rung_of_an_encoded_ladder_carries_the_captions(origin_bin, captioned, tmp_path):
    out = package(origin_bin, captioned, tmp_path / "ladder", "--ladder", "360,240:hevc", "--captions", "CC1=en")
    mv = open(os.path.join(out, "index.m3u8")).read()
    assert re.findall(r"#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS[^\n]*", mv) == [
        '#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="English",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE="en",'
        'INSTREAM-ID="CC1"'], mv
    vs = variants(mv)
    assert len(vs) == 2 and all('CLOSED-CAPTIONS="cc"' in attrs for attrs, _ in vs), mv
    mpd = open(os.path.join(out, "manifest.mpd")).read()
    assert mpd.count('<Accessibility schemeIdUri="urn:scte:dash:cc:cea-608:2015" value="CC1=eng"/>') == 2, mpd
    res = check_vod_presentation(out)
    assert res.errors == [], res.errors
    for _, uri in vs:
        got = cea608.read_captions(rendition_file(out, uri, str(tmp_path / (uri + ".mp4"))))
        assert caption_problems(got) == [], (uri, got)
    # The checker can fail: shifted by two frames, or another text.
    assert caption_problems([(s + 0.07, e, t) for s, e, t in CAPTIONS]) != []
    assert caption_problems(CAPTIONS[:3] + [(10.0, 11.5, "DELTA FIVE")]) != []


def test_copied_captions_are_kept_and_none_is_said(origin_bin, captioned, tmp_path):
    out = package(origin_bin, captioned, tmp_path / "copy")
    mv = open(os.path.join(out, "index.m3u8")).read()
    assert 'INSTREAM-ID="CC1"' in mv and 'NAME="CC1"' in mv and 'CLOSED-CAPTIONS="cc"' in mv, mv
    got = cea608.read_captions(rendition_file(out, "stream.m3u8", str(tmp_path / "copy.mp4")))
    assert caption_problems(got) == [], got
    # --captions none: the captions stay in the pictures, unsignalled.
    out = package(origin_bin, captioned, tmp_path / "none", "--captions", "none")
    mv = open(os.path.join(out, "index.m3u8")).read()
    assert "TYPE=CLOSED-CAPTIONS" not in mv and all("CLOSED-CAPTIONS=NONE" in a for a, _ in variants(mv)), mv
    # A stream without captions: NONE on every variant, and the reader finds nothing (it fails where there is none).
    plain = str(tmp_path / "plain.mp4")
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=320x180:rate=30", "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", plain],
                   check=True)
    out = package(origin_bin, plain, tmp_path / "plain", "--ladder", "180,120")
    mv = open(os.path.join(out, "index.m3u8")).read()
    assert "TYPE=CLOSED-CAPTIONS" not in mv and all("CLOSED-CAPTIONS=NONE" in a for a, _ in variants(mv)), mv
    assert cea608.read_captions(plain) == []
    assert re.search(r"<Accessibility", open(os.path.join(out, "manifest.mpd")).read()) is None


def test_mpeg2_video_captions_are_found_and_carried(origin_bin, captioned, tmp_path):
    """A broadcast feed's MPEG-2 video carries its captions in the pictures' user data (A/53 Part 4 §6.2.2), not in
    SEI: re-encoded to H.264, the rendition carries them and the playlist says so."""
    ts = str(tmp_path / "mpeg2.ts")
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-i", captioned, "-c:v", "mpeg2video",
                    "-q:v", "4", "-a53cc", "1", "-c:a", "mp2", "-f", "mpegts", ts], check=True)
    # Proved first: FFmpeg's caption decoder reads the four captions from the MPEG-2 pictures, in their user data.
    assert cea608.read_captions(ts) == CAPTIONS
    assert b"\x00\x00\x01\xb2GA94\x03" in open(ts, "rb").read()
    out = package(origin_bin, ts, tmp_path / "mpeg2")
    mv = open(os.path.join(out, "index.m3u8")).read()
    assert 'INSTREAM-ID="CC1"' in mv and all('CLOSED-CAPTIONS="cc"' in a for a, _ in variants(mv)), mv
    got = cea608.read_captions(rendition_file(out, "stream.m3u8", str(tmp_path / "mpeg2-out.mp4")))
    assert caption_problems(got) == [], got


def test_a_bad_captions_option_is_one_line(origin_bin, captioned, tmp_path):
    for bad in ["CC9=en", "CC1=en,CC1=fr", "CC1=notalanguage1"]:
        p = subprocess.run([origin_bin, "package", captioned, "-o", str(tmp_path / "x"), "--captions", bad],
                           capture_output=True, text=True, timeout=30)
        lines = [l for l in p.stderr.splitlines() if l.startswith("Error:")]
        assert p.returncode != 0 and len(lines) == 1 and "--captions" in lines[0], p.stderr
        assert not os.path.exists(tmp_path / "x")


CUES_JS = r"""
(() => {
  const v = document.querySelector('video'), h = window.hls;
  if (!v || !h) return null;
  const tracks = [];
  for (const t of v.textTracks) {
    if (t.mode === 'disabled') t.mode = 'hidden';
    tracks.push({kind: t.kind, label: t.label, lang: t.language,
                 cues: Array.from(t.cues || []).map(c => [c.startTime, c.endTime, c.text])});
  }
  return {t: v.currentTime, level: h.currentLevel, lowLatency: h.config.lowLatencyMode, levels: (h.levels || []).map(l => l.height), tracks,
          fatal: (window.__hlsErrors || []).filter(e => e.fatal).map(e => e.details)};
})()
"""


MENU_JS = r"""
(() => {
  const m = document.getElementById('captions');
  m.value = 'English';
  m.dispatchEvent(new Event('change'));
  return {hidden: m.hidden, options: Array.from(m.options).map(o => [o.value, o.text]),
          modes: Array.from(document.querySelector('video').textTracks).filter(t => t.kind === 'captions').map(t => t.mode)};
})()
"""


def test_hlsjs_shows_the_captions_of_a_reencoded_rung(start_origin, captioned):
    need_chromium()
    s = start_origin(captioned, "--loop", "--ladder", "360,240", "--captions", "CC1=en")
    with chromium.Browser() as b:
        b.call("Page.addScriptToEvaluateOnNewDocument", source=chromium.HOOK_JS)
        # lowLatencyMode (the page's default with parts): hls.js 1.6.15 alone would reset its 608 parser on every part
        # after a segment's first and lose these captions (they span parts); the page corrects that listener.
        b.call("Page.navigate", url=s.url("/"))
        state, deadline, pinned = None, time.monotonic() + 20, False
        while time.monotonic() < deadline:
            state = b.evaluate(CUES_JS)
            if state and state["levels"] and not pinned:
                # The 240p rung: re-encoded from the decoded pictures, its captions written back by the encoder.
                b.evaluate(f"window.hls.currentLevel = {state['levels'].index(240)}")
                pinned = True
            cues = [c for t in (state or {}).get("tracks", []) for c in t["cues"]]
            if len({c[2] for c in cues}) >= 3:
                break
            time.sleep(0.5)
        menu = b.evaluate(MENU_JS)
    assert state and not state["fatal"] and state["lowLatency"], state
    captions = [t for t in state["tracks"] if t["kind"] == "captions"]
    assert captions and captions[0]["label"] == "English" and captions[0]["lang"] == "en", state["tracks"]
    cues = sorted({(round(c[0], 2), c[2].strip()) for c in captions[0]["cues"] if c[2].strip()})
    assert len(cues) >= 3, (state["tracks"], state["t"])
    # The page's captions menu offers them, and choosing one shows its track.
    assert menu["options"] == [["", "Captions off"], ["English", "CC English"]] and not menu["hidden"], menu
    assert menu["modes"] == ["showing"], menu
    texts = [c[2] for c in CAPTIONS]
    for (t0, a), (t1, b) in zip(cues, cues[1:]):
        # Consecutive captions of the looped fixture: the next text, 3 s later (±0.5 s).
        assert texts[(texts.index(a) + 1) % len(texts)] == b and abs(t1 - t0 - 3.0) <= 0.5, cues
