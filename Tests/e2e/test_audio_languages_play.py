"""Issue 21 §1 in a real player: hls.js 1.6 in headless Chromium lists both audio languages of a live ladder and
plays on after switching to the French one (its fragments come from the French rendition, the video advances, the
decoded-audio byte count rises). One short play (≤ 8 s); the playlists and packets are test_audio_languages.py's.
"""
import time

from hlsharness import chromium
from hlsharness.testenv import need_chromium
from test_audio_languages import make_fixture

STATE_JS = r"""
(() => {
  const v = document.querySelector('video'), h = window.hls;
  if (!v || !h) return null;
  if (!window.__audioFrags) {
    window.__audioFrags = [];
    window.__audioSwitched = [];
    h.on('hlsFragLoaded', (e, d) => { if (d.frag && d.frag.type === 'audio') window.__audioFrags.push(d.frag.url); });
    h.on('hlsAudioTrackSwitched', (e, d) => window.__audioSwitched.push(d.id));
  }
  return {t: v.currentTime, audioBytes: v.webkitAudioDecodedByteCount || 0, track: h.audioTrack,
          tracks: (h.audioTracks || []).map(a => ({name: a.name, lang: a.lang, isDefault: !!a.default})),
          frags: window.__audioFrags.slice(-3), switched: window.__audioSwitched.slice(),
          fatal: (window.__hlsErrors || []).filter(e => e.fatal).map(e => e.details)};
})()
"""


def switch_problems(before, after, french_index):
    """What is wrong with a switch to the French track, from the page's state before and a few seconds after."""
    problems = []
    if after["track"] != french_index or french_index not in after["switched"]:
        problems.append(f"audio track {after['track']}, switched {after['switched']}, expected {french_index}")
    if not any("audio-fr/" in u for u in after["frags"]):
        problems.append(f"no French audio fragment loaded (last: {after['frags']})")
    if after["t"] - before["t"] < 1.5:
        problems.append(f"played {after['t'] - before['t']:.2f} s after the switch")
    if after["audioBytes"] <= before["audioBytes"]:
        problems.append("no audio decoded after the switch")
    if after["fatal"]:
        problems.append(f"fatal errors {after['fatal']}")
    return problems


def test_hlsjs_lists_both_languages_and_plays_french(start_origin, tmp_path):
    need_chromium()
    src = str(tmp_path / "en_fr.mkv")
    make_fixture(src)
    s = start_origin(src, "--loop", "--ladder", "source")
    with chromium.Browser() as b:
        b.call("Page.addScriptToEvaluateOnNewDocument", source=chromium.HOOK_JS)
        b.call("Page.navigate", url=s.url("/"))
        before, deadline = None, time.monotonic() + 10
        while time.monotonic() < deadline:
            st = b.evaluate(STATE_JS)
            if st and st["t"] > 0.5 and len(st["tracks"]) == 2:
                before = st
                break
            time.sleep(0.2)
        assert before, f"no playback with two audio tracks: {st}"
        assert [(a["lang"], a["name"], a["isDefault"]) for a in before["tracks"]] == [
            ("en", "English", True), ("fr", "Français", False)], before["tracks"]
        # The page's audio menu lists both (its value is the playing track's index).
        menu = b.evaluate("(() => { const m = document.getElementById('audio'); "
                          "return {hidden: m.hidden, options: Array.from(m.options).map(o => o.text)}; })()")
        assert menu == {"hidden": False, "options": ["English (en)", "Français (fr)"]}, menu
        french = [a["lang"] for a in before["tracks"]].index("fr")
        b.evaluate(f"window.hls.audioTrack = {french}")
        time.sleep(4)
        after = b.evaluate(STATE_JS)
    assert switch_problems(before, after, french) == [], (before, after)
    # The checker can fail: the state before the switch is not a French one.
    assert switch_problems(before, before, french) != []
