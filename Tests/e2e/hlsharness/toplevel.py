"""chromium_play() with hls.js held on one rendition of a ladder (the highest bit rate by default).

hls-origin's page at `/` has no query parameter for the level, so an extra script, installed before any page
script runs, waits for `window.hls`, and on MANIFEST_PARSED sets `startLevel` and `loadLevel` to the chosen
level: the first fragment already comes from it and ABR stays off (a manual level), without the buffer flush
that setting `currentLevel` causes. If the manifest was parsed before the script saw `window.hls`, it falls back
to `currentLevel`. What it did is in `window.__forcedLevel`; the playing rendition shows in the result's
`video_size`.

chromium_play() builds its own `chromium.Browser`; play_level() swaps in a subclass that installs the script
right after the browser starts, for the duration of one call (the bench and the tests are single-threaded).
"""
from . import chromium

FORCE_LEVEL_JS = r"""
(() => {
  const want = %s;  // 'top' | 'bottom' | level index
  window.__forcedLevel = null;
  const pick = (levels) => {
    if (want === 'top' || want === 'bottom') {
      let best = 0;
      for (let i = 1; i < levels.length; i++) {
        const [a, b] = [levels[i].bitrate, levels[best].bitrate];
        if (want === 'top' ? a > b : a < b) best = i;
      }
      return best;
    }
    return Math.min(Number(want), levels.length - 1);
  };
  const describe = (h, i, how) => ({index: i, how, height: h.levels[i].height, width: h.levels[i].width,
                                    bitrate: h.levels[i].bitrate, levels: h.levels.length});
  const timer = setInterval(() => {
    const h = window.hls;
    if (!h || typeof h.on !== 'function') return;
    clearInterval(timer);
    if (h.levels && h.levels.length) {
      const i = pick(h.levels);
      h.currentLevel = i;
      window.__forcedLevel = describe(h, i, 'currentLevel');
      return;
    }
    h.on('hlsManifestParsed', () => {
      const i = pick(h.levels);
      h.startLevel = i;
      h.loadLevel = i;
      window.__forcedLevel = describe(h, i, 'startLevel+loadLevel');
    });
  }, 5);
})();
"""


def play_level(url, seconds, level="top", **kwargs):
    """chromium_play(url, seconds, **kwargs) with hls.js held on `level` ('top', 'bottom' or an index).
    The result gains `forced_level` (what the script did, or None if it never ran)."""
    want = repr(level) if isinstance(level, str) else str(int(level))
    script = FORCE_LEVEL_JS % want
    base = chromium.Browser
    forced = {}

    class LevelBrowser(base):
        def start(self, *a, **kw):
            super().start(*a, **kw)
            self.call("Page.addScriptToEvaluateOnNewDocument", source=script)
            forced["browser"] = self
            return self

        def close(self):
            try:
                if self.ws is not None:
                    forced["level"] = self.evaluate("window.__forcedLevel")
            except Exception:  # noqa: BLE001 - the page may be gone; the result says None
                pass
            super().close()

    chromium.Browser = LevelBrowser
    try:
        res = chromium.chromium_play(url, seconds, **kwargs)
    finally:
        chromium.Browser = base
    res["forced_level"] = forced.get("level")
    return res
