/// The player page's seek bar with thumbnails (`--thumbnails`): shown when the stream has `thumbnails.vtt`, it spans
/// the seekable (DVR) window; hovering it shows the tile for the hovered time, a sprite of the sheet the WebVTT cue
/// names (`SHEET#xywh=x,y,w,h`). Cue times are media times (the segments' `tfdt`); the video element's time is media
/// time minus hls.js's `initPTS` (its `INIT_PTS_FOUND` event), zero for a native player. `window.player.tiles` and
/// `window.player.showTile(t, x)` are exposed for tests.
extension PlayerPage {
    static let thumbnailStyle = """
      #dvr { position: relative; margin-top: 8px; }
      #seek { width: 100%; }
      #preview { position: absolute; bottom: 30px; display: none; box-sizing: content-box; border: 2px solid #fff;
                 border-radius: 4px; background-repeat: no-repeat; pointer-events: none; box-shadow: 0 2px 8px #000a; }
    """

    static let thumbnailMarkup = """
      <div id="dvr" hidden><div id="preview"></div><input id="seek" type="range" min="0" max="0" step="0.1" aria-label="Seek"></div>
    """

    static let thumbnailScript = """
    const tiles = { cues: [], offset: 0, at: null };
    window.player.tiles = tiles;
    if (window.hls) window.hls.on(Hls.Events.INIT_PTS_FOUND, (_event, data) => {
      if (data.id === 'main') tiles.offset = data.initPTS / data.timescale;
    });
    const vttURL = new URL(signed('thumbnails.vtt'), location.href);
    function parseVTT(text) {
      const seconds = (s) => s.trim().split(':').reduce((a, b) => a * 60 + Number(b), 0);  // hh:mm:ss.ttt
      const cues = [];
      for (const block of text.split(/\\n\\n+/)) {
        const lines = block.trim().split('\\n');
        const i = lines.findIndex((l) => l.includes('-->'));
        if (i < 0 || !lines[i + 1] || !lines[i + 1].includes('#xywh=')) continue;
        const [start, end] = lines[i].split('-->').map(seconds);
        const [uri, xywh] = lines[i + 1].split('#xywh=');
        const [x, y, w, h] = xywh.split(',').map(Number);
        cues.push({ start, end, url: new URL(uri, vttURL).href, x, y, w, h });
      }
      return cues;
    }
    async function loadTiles() {
      try {
        const r = await fetch(vttURL, { cache: 'no-store' });
        if (!r.ok) return false;
        tiles.cues = parseVTT(await r.text());
        return true;
      } catch (e) { return false; }
    }
    // The cue of a video-element time.
    tiles.at = (t) => { const m = t + tiles.offset; return tiles.cues.find((c) => c.start <= m && m < c.end) || null; };
    const seek = $('seek'), preview = $('preview');
    function showTile(t, x) {
      const c = tiles.at(t);
      window.player.hoveredTile = c ? { time: t, url: c.url, x: c.x, y: c.y, w: c.w, h: c.h } : null;
      if (!c) { preview.style.display = 'none'; return; }
      preview.style.width = c.w + 'px';
      preview.style.height = c.h + 'px';
      preview.style.backgroundImage = 'url("' + c.url + '")';
      preview.style.backgroundPosition = (-c.x) + 'px ' + (-c.y) + 'px';
      preview.style.left = Math.max(0, Math.min(seek.clientWidth - c.w, x - c.w / 2)) + 'px';
      preview.style.display = 'block';
    }
    window.player.showTile = showTile;
    function updateSeek() {
      const s = video.seekable;
      if (!s.length) return;
      seek.min = s.start(0);
      seek.max = s.end(s.length - 1);
      if (!seek.matches(':active')) seek.value = video.currentTime;
    }
    seek.addEventListener('input', () => { video.currentTime = Number(seek.value); });
    seek.addEventListener('mousemove', (e) => {
      const r = seek.getBoundingClientRect();
      const f = Math.min(1, Math.max(0, (e.clientX - r.left) / r.width));
      showTile(Number(seek.min) + f * (Number(seek.max) - Number(seek.min)), e.clientX - r.left);
    });
    seek.addEventListener('mouseleave', () => { preview.style.display = 'none'; });
    if (await loadTiles()) {
      $('dvr').hidden = false;
      setInterval(loadTiles, 5000);
      setInterval(updateSeek, 500);
    }
    """
}
