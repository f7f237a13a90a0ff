"""Issue 21 §2 in a real player: hls.js 1.6 in headless Chromium, playing a live `--loop` stream of a Matroska input
with English (ASS) and French (SubRip) text tracks, lists both subtitle renditions (`subtitleTracks`), and once the
English one is chosen its cues reach the video's `textTracks` with the input's texts, 1.4 / 3.1 / 1.5 s apart as in the
input, each active exactly while the video's `currentTime` is within it. One short play (about 8 s); the playlists and
segments are test_subtitles.py's.
"""
import time

import pytest

from hlsharness import chromium
from hlsharness.procs import serving
from hlsharness.testenv import need_chromium
from test_subtitles import EN, files  # noqa: F401  (the module fixture)

STATE_JS = r"""
(() => {
  const v = document.querySelector('video'), h = window.hls;
  if (!v || !h) return null;
  const tt = Array.from(v.textTracks).find(t => t.kind === 'subtitles' && t.language === 'en');
  if (tt && tt.mode === 'disabled') tt.mode = 'hidden';
  const cue = c => ({s: c.startTime, e: c.endTime, text: c.text});
  return {t: v.currentTime, track: h.subtitleTrack,
          tracks: (h.subtitleTracks || []).map(s => ({name: s.name, lang: s.lang})),
          cues: tt && tt.cues ? Array.from(tt.cues).map(cue) : [],
          active: tt && tt.activeCues ? Array.from(tt.activeCues).map(cue) : [],
          fatal: (window.__hlsErrors || []).filter(e => e.fatal).map(e => e.details)};
})()
"""


def cue_problems(states):
    """What is wrong with the English cues hls.js put in the video's text track over the polls `states`."""
    problems = []
    last = states[-1]
    texts = {t for _, _, t in EN}
    cues = sorted({(round(c["s"], 3), round(c["e"], 3), c["text"]) for st in states for c in st["cues"]})
    if len(cues) < 2:
        return [f"fewer than two cues in the text track: {cues}"]
    problems += [f"unknown text {c[2]!r}" for c in cues if c[2] not in texts]
    # Consecutive cues as far apart as in the input (a loop is 6 s).
    order = [t for _, _, t in EN]
    gaps = {(EN[i][2], EN[(i + 1) % 3][2]): (EN[(i + 1) % 3][0] - EN[i][0]) % 6 for i in range(3)}
    for a, b in zip(cues, cues[1:]):
        want = gaps.get((a[2], b[2]))
        if want is None or abs((b[0] - a[0]) - want) > 0.05:
            problems.append(f"{a} then {b}: {b[0] - a[0]:.3f} s apart, expected {want} ({order})")
    shown = [st for st in states if st["active"]]
    if not shown:
        problems.append("no cue was ever active")
    for st in shown:
        for c in st["active"]:
            if not (c["s"] - 0.3 <= st["t"] <= c["e"] + 0.3):
                problems.append(f"{c['text']!r} ({c['s']:.3f}-{c['e']:.3f}) active at {st['t']:.3f}")
    if last["fatal"]:
        problems.append(f"fatal errors {last['fatal']}")
    return problems


def test_hlsjs_shows_the_english_cues(origin_bin, files):  # noqa: F811
    need_chromium()
    with serving(origin_bin, [files["mkv"], "--loop"], label="subtitles play") as s, chromium.Browser() as b:
        b.call("Page.addScriptToEvaluateOnNewDocument", source=chromium.HOOK_JS)
        b.call("Page.navigate", url=s.url("/"))
        states, deadline, st = [], time.monotonic() + 10, None
        while time.monotonic() < deadline:
            st = b.evaluate(STATE_JS)
            if st and st["t"] > 0.3 and len(st["tracks"]) == 2:
                break
            time.sleep(0.2)
        assert st and len(st["tracks"]) == 2, f"no playback with two subtitle tracks: {st}"
        assert st["tracks"] == [{"name": "English", "lang": "en"}, {"name": "Français", "lang": "fr"}], st["tracks"]
        b.evaluate("window.hls.subtitleDisplay = true; window.hls.subtitleTrack = 0")
        end = time.monotonic() + 8
        while time.monotonic() < end:
            st = b.evaluate(STATE_JS)
            if st:
                states.append(st)
            time.sleep(0.1)
    assert states and states[-1]["track"] == 0
    assert cue_problems(states) == [], (states[-1]["cues"], [x for x in states if x["active"]][:5])
    # The checker can fail: cues moved by half a second, or shown outside their time.
    moved = [dict(x, cues=[dict(c, s=c["s"] + 0.5 * (i % 2)) for i, c in enumerate(x["cues"])]) for x in states]
    assert cue_problems(moved) != []
    late = [dict(x, t=x["t"] + 2) for x in states]
    assert cue_problems(late) != []
