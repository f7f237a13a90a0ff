"""Issue 22 in a real player: hls.js 1.6.15 in headless Chromium, playing a live ladder, sees a break posted to the
events API as an EXT-X-DATERANGE (its LEVEL_UPDATED details carry the daterange with the posted break's SCTE35-OUT),
and plays the interstitial asset (a 4-s VOD that `package --ladder source` wrote, served from another port) when the
break comes, then goes back to the live stream: hls.js's interstitial events fire in order, no fatal error. Twice:
with `--interstitial URL` (the daterange's X-ASSET-URI names the asset) and with `--interstitial-list URL` (its
X-ASSET-LIST names a JSON asset list the test serves, `{"ASSETS": [{"URI": the asset, "DURATION": its length}]}`,
which hls.js must fetch, with the break's id and planned duration in the query, to know what to play).
The playlists, sections and splice cuts themselves are test_events.py's.
"""
import glob
import json
import os
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from hlsharness import chromium, staticserver
from hlsharness.m3u8 import parse_media, parse_multivariant
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
                                  out: (r.attr && r.attr['SCTE35-OUT']) || null, start: String(r.startDate),
                                  uri: (r.attr && r.attr['X-ASSET-URI']) || null,
                                  list: (r.attr && r.attr['X-ASSET-LIST']) || null};
      }
    });
    for (const name of ['hlsAssetListLoaded', 'hlsInterstitialStarted', 'hlsInterstitialAssetStarted', 'hlsInterstitialAssetEnded',
                        'hlsInterstitialEnded', 'hlsInterstitialsPrimaryResumed', 'hlsInterstitialAssetError']) {
      h.on(name, (e, d) => window.__ev.interstitial.push(name === 'hlsInterstitialAssetError' ? name + ': ' + String((d && (d.error && d.error.message)) || (d && d.details) || '') : name));
    }
  }
  return true;
})()
"""

# `schedule`: hls.js's own view of each interstitial (its InterstitialsManager), for the message when one is not
# played: where it starts, how many assets it has, and the error hls.js set on it (such as "no longer within playback
# range" when its asset list came after the playhead had passed it), which fires no event of its own.
STATE_JS = r"""
(() => {
  const m = window.hls && window.hls.interstitialsManager;
  const schedule = m ? (m.events || []).map(e => ({id: e.identifier, start: e.startTime, duration: e.duration,
                                                   assets: (e.assetList || []).length,
                                                   error: e.error ? String(e.error.message || e.error) : null})) : null;
  const v = document.querySelector('video');
  const ranges = b => { const r = []; try { for (let i = 0; i < b.length; i++) r.push([+b.start(i).toFixed(3), +b.end(i).toFixed(3)]); } catch (e) {} return r; };
  const tracks = (window.hls && window.hls.bufferController && window.hls.bufferController.tracks) || {};
  const buffers = {media: ranges(v.buffered)};
  for (const [k, tr] of Object.entries(tracks)) if (tr && tr.buffer) buffers[k] = ranges(tr.buffer.buffered);
  const items = m ? (m.schedule || []).map(i => [+(+i.start).toFixed(3), +(+i.end).toFixed(3), i.event ? i.event.identifier : 'primary']) : null;
  const where = m ? {playing: m.playingIndex, buffering: m.bufferingIndex, waiting: m.waitingIndex} : null;
  return {t: v.currentTime, buffers, items, where, ranges: window.__ev.ranges,
          interstitial: window.__ev.interstitial.slice(), schedule,
          errors: (window.__hlsErrors || []).map(e => e.details + (e.reason ? ': ' + e.reason : '')).slice(-8),
          fatal: (window.__hlsErrors || []).filter(e => e.fatal).map(e => e.details)};
})()
"""


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.status, json.loads(r.read())


def fetch_text(s, path):
    with urllib.request.urlopen(s.url("/" + path.lstrip("/")), timeout=5) as r:
        return r.read().decode()


def window_seconds(s):
    """The seconds of media the first rung's playlist lists now."""
    return parse_media(fetch_text(s, "/360p.m3u8")).total_duration


def playlists(s):
    """The multivariant playlist's media playlists, fetched now: {uri: text}."""
    top = parse_multivariant(fetch_text(s, "/index.m3u8"))
    uris = [v.uri for v in top.variants] + [m["URI"] for m in top.media if m.get("URI")]
    return {uri: fetch_text(s, uri) for uri in uris}


@pytest.fixture(scope="module")
def ad(origin_bin, tmp_path_factory):
    """The interstitial asset, made once for both cases: (its directory, its length in seconds)."""
    d = tmp_path_factory.mktemp("ad")
    src = str(d / "ad.mp4")
    subprocess.run(["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=640x360:rate=30", "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000",
                    "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-c:a", "aac", "-b:a", "64k", src],
                   check=True)
    # Its video and audio in renditions of their own, as the live ladder's: hls.js plays an asset in the primary's
    # SourceBuffers and refuses a muxed one ("audiovideo") against separate video and audio.
    asset = package(origin_bin, src, d / "out", "--ladder", "source")
    lengths = []
    for path in glob.glob(os.path.join(asset, "**", "*.m3u8"), recursive=True):
        with open(path) as f:
            text = f.read()
        if "#EXTINF" in text:
            lengths.append(sum(seg.duration for seg in parse_media(text).segments))
    assert lengths, os.listdir(asset)
    return asset, max(lengths)


@pytest.mark.parametrize("kind", ["uri", "list"])
def test_hlsjs_sees_the_break_and_plays_the_interstitial(kind, ad, start_origin):
    need_chromium()
    asset, length = ad
    # The asset list the test answers (its URI absolute: filled in once the server's port is known).
    extra, log = {"/list.json": (b"", "application/json")}, []
    with staticserver.serving(asset, extra=extra, log=log) as base:
        extra["/list.json"] = (json.dumps({"ASSETS": [{"URI": base + "/index.m3u8", "DURATION": length}]}).encode(),
                               "application/json")
        flag = ["--interstitial", base + "/index.m3u8"] if kind == "uri" else ["--interstitial-list", base + "/list.json"]
        s = start_origin("--ladder", "360,240", "--api-token", TOKEN, *flag)
        # hls.js 1.6.15 never enters a live interstitial schedule when its first playlist is so short that its live
        # start is 0: checkStart() then reads startPosition -1, and once the playhead moves it is not asked again, so
        # no break is ever started (hls.js #7799, fixed in 1.6.16; this copy is 1.6.15, PyPI's newest). Seen as
        # `playingIndex` -1 for the whole play, about 1 run in 20. The player starts once the window holds 4 s.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and window_seconds(s) < 4:
            time.sleep(0.2)
        with chromium.Browser() as b:
            b.call("Page.addScriptToEvaluateOnNewDocument", source=chromium.HOOK_JS)
            b.call("Page.navigate", url=s.url("/"))
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and not (b.evaluate(LISTEN_JS) and b.evaluate(STATE_JS)["t"] > 0.5):
                time.sleep(0.2)
            # 8 s ahead: the daterange is listed with the next segment (ProducerChain.place), seconds before the
            # break. (Listed only with the segment it starts in, hls.js learnt of it about a second ahead and in some
            # runs never started the interstitial. With 5 s, one run in four still saw hls.js load the asset list and
            # never start the break, its playhead catching up with the live edge meanwhile: 10 runs of 10 passed
            # with 8 s.)
            status, answer = post(s.url("/events"), {"type": "splice_out", "id": "break-1", "duration": 4, "delay": 8})
            assert status == 201 and answer["id"] == "break-1", answer
            # For the message when the break is not played: the player's position, buffers and schedule position
            # over time, and the playlists as they were when the playhead came within a second of the break.
            state, deadline, history, near_break = None, time.monotonic() + 30, [], None
            while time.monotonic() < deadline:
                state = b.evaluate(STATE_JS)
                history.append((round(state["t"], 2), state["buffers"], state["where"], state["items"]))
                if "hlsInterstitialsPrimaryResumed" in state["interstitial"] and state["t"] > 0:
                    break
                starts = [i[0] for i in state["items"] or [] if i[2] != "primary"]
                if near_break is None and starts and state["t"] > starts[0] - 1:
                    near_break = playlists(s)
                time.sleep(0.3)
    print("hls.js interstitial schedule:", state and state["schedule"])
    assert state and not state["fatal"], state
    scte = [r for r in state["ranges"].values() if r["out"]]
    assert scte and scte[0]["out"].lower().startswith("0xfc"), state["ranges"]
    interstitials = [r for r in state["ranges"].values() if r["cls"] == "com.apple.hls.interstitial"]
    assert interstitials, state["ranges"]
    lists = [(m, p, status) for m, p, _, status in log if p.startswith("/list.json")]
    if kind == "uri":
        assert interstitials[0]["uri"] == base + "/index.m3u8" and not interstitials[0]["list"], interstitials
        assert not lists, lists
    else:
        assert interstitials[0]["list"] == base + "/list.json?break=break-1&duration=4.0" and not interstitials[0]["uri"], interstitials
        # hls.js fetched the list (adding its session's _HLS_primary_id to our query) and played what it named.
        assert lists, log
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(lists[0][1]).query)
        assert lists[0][0] == "GET" and lists[0][2] == 200, lists
        assert query["break"] == ["break-1"] and query["duration"] == ["4.0"] and query.get("_HLS_primary_id"), query
        assert "hlsAssetListLoaded" in state["interstitial"], state["interstitial"]
    events = state["interstitial"]
    assert not any(e.startswith("hlsInterstitialAssetError") for e in events), "\n".join(events)
    order = ["hlsInterstitialStarted", "hlsInterstitialAssetStarted", "hlsInterstitialEnded",
             "hlsInterstitialsPrimaryResumed"]
    # The first interstitial in order. (In one CI run, on a loaded machine, hls.js started the same interstitial a second
    # time right after resuming, its daterange unchanged between reloads: hls.js's, noted in docs/events.md.)
    assert [e for e in events if e in order][:4] == order, (events, state["t"], interstitials, state["schedule"],
                                                             state["errors"], lists, history[-12:], near_break)
