"""Issue 22 in a real player: hls.js 1.6.15 in headless Chromium, playing a live ladder, sees a break posted to the
events API as an EXT-X-DATERANGE (its LEVEL_UPDATED details carry the daterange with the posted break's SCTE35-OUT),
and with `--interstitial URL` plays the interstitial asset (a 4-s VOD that `package --ladder source` wrote, served from another port)
when the break comes, then goes back to the live stream: hls.js's interstitial events fire in order, no fatal error.
The playlists, sections and splice cuts themselves are test_events.py's.
"""
import json
import subprocess
import time
import urllib.request

from hlsharness import chromium, staticserver
from hlsharness.procs import package
from hlsharness.testenv import need_chromium

TOKEN = "events-play-token"

LISTEN_JS = r"""
(() => {
  const h = window.hls;
  if (!h) return false;
  if (!window.__ev) {
    window.__ev = {ranges: {}, interstitial: []};
    h.on('hlsLevelUpdated', (e, d) => {
      for (const [id, r] of Object.entries((d.details && d.details.dateRanges) || {})) {
        window.__ev.ranges[id] = {cls: r.class || (r.attr && r.attr.CLASS) || null,
                                  out: (r.attr && r.attr['SCTE35-OUT']) || null, start: String(r.startDate)};
      }
    });
    for (const name of ['hlsInterstitialStarted', 'hlsInterstitialAssetStarted', 'hlsInterstitialAssetEnded',
                        'hlsInterstitialEnded', 'hlsInterstitialsPrimaryResumed', 'hlsInterstitialAssetError']) {
      h.on(name, (e, d) => window.__ev.interstitial.push(name === 'hlsInterstitialAssetError' ? name + ': ' + String((d && (d.error && d.error.message)) || (d && d.details) || '') : name));
    }
  }
  return true;
})()
"""

STATE_JS = r"""
(() => ({t: document.querySelector('video').currentTime, ranges: window.__ev.ranges,
         interstitial: window.__ev.interstitial.slice(),
         fatal: (window.__hlsErrors || []).filter(e => e.fatal).map(e => e.details)}))()
"""


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.status, json.loads(r.read())


def test_hlsjs_sees_the_break_and_plays_the_interstitial(start_origin, origin_bin, tmp_path):
    need_chromium()
    ad = str(tmp_path / "ad.mp4")
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=640x360:rate=30", "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000",
                    "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-c:a", "aac", "-b:a", "64k", ad],
                   check=True)
    # Its video and audio in renditions of their own, as the live ladder's: hls.js plays an asset in the primary's
    # SourceBuffers and refuses a muxed one ("audiovideo") against separate video and audio.
    asset = package(origin_bin, ad, tmp_path / "ad", "--ladder", "source")
    with staticserver.serving(asset) as base:
        s = start_origin("--ladder", "360,240", "--api-token", TOKEN, "--interstitial", base + "/index.m3u8")
        with chromium.Browser() as b:
            b.call("Page.addScriptToEvaluateOnNewDocument", source=chromium.HOOK_JS)
            b.call("Page.navigate", url=s.url("/"))
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and not (b.evaluate(LISTEN_JS) and b.evaluate(STATE_JS)["t"] > 0.5):
                time.sleep(0.2)
            status, answer = post(s.url("/events"), {"type": "splice_out", "id": "break-1", "duration": 4, "delay": 4})
            assert status == 201 and answer["id"] == "break-1", answer
            state, deadline = None, time.monotonic() + 25
            while time.monotonic() < deadline:
                state = b.evaluate(STATE_JS)
                if "hlsInterstitialsPrimaryResumed" in state["interstitial"] and state["t"] > 0:
                    break
                time.sleep(0.3)
    assert state and not state["fatal"], state
    scte = [r for r in state["ranges"].values() if r["out"]]
    assert scte and scte[0]["out"].lower().startswith("0xfc"), state["ranges"]
    assert any(r["cls"] == "com.apple.hls.interstitial" for r in state["ranges"].values()), state["ranges"]
    events = state["interstitial"]
    assert not any(e.startswith("hlsInterstitialAssetError") for e in events), events
    order = ["hlsInterstitialStarted", "hlsInterstitialAssetStarted", "hlsInterstitialEnded",
             "hlsInterstitialsPrimaryResumed"]
    # The first interstitial in order. (In one CI run, on a loaded machine, hls.js started the same interstitial a second
    # time right after resuming, its daterange unchanged between reloads: hls.js's, noted in docs/events.md.)
    assert [e for e in events if e in order][:4] == order, events
