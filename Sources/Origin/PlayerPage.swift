/// The player page served at `/`: hls.js first (`Hls.isSupported()`), native HLS only as a fallback.
///
/// Query parameters: `src=URL` overrides the playlist (default `/index.m3u8`, carrying the page's own
/// `hls_prefix`/`hls_exp`/`hls_sig` signature when it has one, as does the local hls.js); `lowLatency=1`/`0` turns
/// hls.js `lowLatencyMode` on/off. The default is on when the stream publishes LL-HLS parts
/// (`lowLatencyDefault`), off otherwise (plain segments: the live edge of 3 target durations is the stable
/// choice). The readout shows the mode and the rendition playing; with more than one rendition a menu
/// picks one ("Auto" lets hls.js choose); with several audio languages a menu switches the audio, and with closed
/// captions a menu shows one of them. `window.hls` and `window.player` are exposed for tests.
enum PlayerPage {
    static func html(hlsJSURL: String, fallbackURL: String?, lowLatencyDefault: Bool = false) -> String {
        let primary = jsString(hlsJSURL)
        let fallback = fallbackURL.map(jsString) ?? "null"
        return """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>hls-origin live</title>
        <style>
          :root { color-scheme: dark; --bg: #0f1115; --panel: #171a21; --text: #e6e8ee; --muted: #8b93a7; --accent: #5ab0ff; }
          * { box-sizing: border-box; }
          body { margin: 0; background: var(--bg); color: var(--text);
                 font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
          main { max-width: 1100px; margin: 0 auto; padding: 16px; }
          header { display: flex; align-items: baseline; gap: 12px; margin-bottom: 12px; }
          h1 { font-size: 18px; margin: 0; font-weight: 600; }
          .live { color: #ff5a5a; font-weight: 700; font-size: 12px; letter-spacing: .08em; }
          .engine { color: var(--muted); margin-left: auto; font-size: 12px; }
          select { background: var(--panel); color: var(--text); border: 1px solid #2a2f3a; border-radius: 6px;
                   padding: 3px 6px; font: inherit; font-size: 12px; }
          video { width: 100%; aspect-ratio: 16 / 9; background: #000; border-radius: 8px; display: block; }
          #stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 8px; margin-top: 12px; }
          .stat { background: var(--panel); border-radius: 8px; padding: 10px 12px; }
          .stat span { display: block; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .06em; }
          .stat b { font: 600 18px/1.3 ui-monospace, SFMono-Regular, Menlo, monospace; color: var(--accent); }
          #message { color: #ffb35a; margin-top: 10px; min-height: 1.4em; font-size: 13px; }
          code { color: var(--muted); }
        \(thumbnailStyle)
        </style>
        </head>
        <body>
        <main>
          <header><h1>hls-origin</h1><span class="live">● LIVE</span><span class="engine" id="engine">loading…</span>
            <select id="audio" aria-label="Audio language" hidden></select>
            <select id="captions" aria-label="Captions" hidden></select>
            <select id="quality" aria-label="Rendition" hidden></select></header>
          <video id="video" muted autoplay playsinline controls></video>
        \(thumbnailMarkup)
          <section id="stats">
            <div class="stat"><span>Mode</span><b id="mode">–</b></div>
            <div class="stat"><span>Latency</span><b id="latency">–</b></div>
            <div class="stat"><span>Buffer ahead</span><b id="buffer">–</b></div>
            <div class="stat"><span>Rendition</span><b id="rendition">–</b></div>
            <div class="stat"><span>Dropped frames</span><b id="dropped">–</b></div>
          </section>
          <div id="message"></div>
          <p><code id="source"></code></p>
        </main>
        <script type="module">
        const HLS_JS_URL = \(primary);
        const HLS_JS_FALLBACK = \(fallback);
        const params = new URLSearchParams(location.search);
        // Signed URLs (--auth-token): the page's own signature goes on to what it loads (the playlists carry it
        // further), so one signed page URL is all a viewer needs.
        const signature = \(jsArray(URLSigner.queryNames)).filter((k) => params.has(k))
          .map((k) => k + '=' + encodeURIComponent(params.get(k))).join('&');
        const signed = (url) => signature ? url + (url.includes('?') ? '&' : '?') + signature : url;
        const src = params.get('src') || signed('index.m3u8');  // relative: the page works where the origin is mounted
        const LOW_LATENCY_DEFAULT = \(lowLatencyDefault ? "true" : "false");
        const lowLatency = params.has('lowLatency') ? params.get('lowLatency') === '1' : LOW_LATENCY_DEFAULT;
        const video = document.getElementById('video');
        const $ = (id) => document.getElementById(id);
        const message = (text) => { $('message').textContent = text; };
        const levelLabel = (level) => (level.height ? level.height + 'p' : 'level') + ' · '
                                      + (level.bitrate / 1e6).toFixed(1) + ' Mb/s';
        $('source').textContent = src + (lowLatency ? '  (lowLatencyMode)' : '');
        $('mode').textContent = lowLatency ? 'LL-HLS' : 'standard';
        video.muted = true;

        // hls.js 1.6 resets its CEA-608 parsers when an LL-HLS part follows the previous part of its own segment
        // (TimelineController.onFragLoading tests `sn !== lastSn + 1` first), so every caption whose display spans
        // parts is lost in lowLatencyMode. The same listener with the intended test: only a gap, a jump back or a new
        // discontinuity resets them (the next part of the segment, or the next segment's first, continues).
        function keepCaptionsAcrossParts(Hls, hls) {
          const timeline = (hls.coreComponents || []).find((c) => c && 'cea608Parser1' in c && typeof c.onFragLoading === 'function');
          if (!timeline || !/^1\\.6\\./.test(Hls.version)) return;
          hls.off(Hls.Events.FRAG_LOADING, timeline.onFragLoading, timeline);
          hls.on(Hls.Events.FRAG_LOADING, function (_event, data) {
            if (!this.enabled || data.frag.type !== 'main') return;
            const sn = data.frag.sn, part = data.part ? data.part.index : -1;
            const next = (sn === this.lastSn && part === this.lastPartIndex + 1) || (sn === this.lastSn + 1 && part <= 0);
            if (this.cea608Parser1 && this.cea608Parser2 && (!next || data.frag.cc !== this.lastCc)) {
              this.cea608Parser1.reset();
              this.cea608Parser2.reset();
            }
            this.lastCc = data.frag.cc;
            this.lastSn = sn;
            this.lastPartIndex = part;
          }, timeline);
        }

        async function loadHls() {
          for (const url of [HLS_JS_URL, HLS_JS_FALLBACK]) {
            if (!url) continue;
            try {
              const mod = await import(url.startsWith('./') ? signed(url) : url);
              const Hls = mod.default || mod.Hls;
              if (Hls) return Hls;
            } catch (e) { console.warn('hls.js failed to load from', url, e); }
          }
          return null;
        }

        const Hls = await loadHls();
        window.player = { engine: 'none', src, lowLatency, errors: [] };
        if (Hls && Hls.isSupported()) {
          // In LL mode, let hls.js play up to 1.5× to get back to PART-HOLD-BACK after a start on an earlier
          // keyframe or a stall (its default, 1, never catches up). An interstitial plays in a MediaSource of its own:
          // appended in place into the live stream's buffers (the default), hls.js 1.6.15 raised "Failed to set the
          // 'timestampOffset' property on 'SourceBuffer': This SourceBuffer is still processing an 'appendBuffer'"
          // in about half the runs of a break listed seconds ahead.
          const hls = new Hls({ lowLatencyMode: lowLatency, backBufferLength: 30, interstitialAppendInPlace: false,
                                ...(lowLatency ? { maxLiveSyncPlaybackRate: 1.5 } : {}) });
          window.hls = hls;
          window.Hls = Hls;
          keepCaptionsAcrossParts(Hls, hls);
          window.player.engine = 'hls.js ' + Hls.version;
          hls.on(Hls.Events.ERROR, (_event, data) => {
            window.player.errors.push(data.type + ':' + data.details);
            if (!data.fatal) return;
            message('Playback error: ' + data.details + ' — recovering…');
            if (data.type === Hls.ErrorTypes.NETWORK_ERROR) setTimeout(() => hls.startLoad(), 1000);
            else if (data.type === Hls.ErrorTypes.MEDIA_ERROR) hls.recoverMediaError();
            else { hls.destroy(); message('Fatal error: ' + data.details); }
          });
          hls.on(Hls.Events.FRAG_BUFFERED, () => message(''));
          // Rendition menu, highest first: "Auto" (-1) or one level (its index in hls.levels); nextLevel switches
          // at the next fragment, without flushing the buffer.
          const quality = $('quality');
          hls.on(Hls.Events.MANIFEST_PARSED, () => {
            const byRate = hls.levels.map((level, i) => [level, i]).sort((a, b) => b[0].bitrate - a[0].bitrate);
            quality.replaceChildren(new Option('Auto', '-1'),
                                    ...byRate.map(([level, i]) => new Option(levelLabel(level), String(i))));
            quality.hidden = hls.levels.length < 2;
          });
          quality.addEventListener('change', () => { hls.nextLevel = Number(quality.value); });
          // Audio languages (hls.audioTracks) and closed captions (the multivariant's CLOSED-CAPTIONS renditions;
          // hls.js makes their text track when the first cue arrives, so the choice is applied as tracks appear).
          const audioMenu = $('audio'), captionMenu = $('captions');
          hls.on(Hls.Events.AUDIO_TRACKS_UPDATED, () => {
            audioMenu.replaceChildren(...hls.audioTracks.map((t, i) =>
              new Option(t.name + (t.lang && !t.name.includes(t.lang) ? ' (' + t.lang + ')' : ''), String(i))));
            audioMenu.value = String(hls.audioTrack);
            audioMenu.hidden = hls.audioTracks.length < 2;
          });
          hls.on(Hls.Events.AUDIO_TRACK_SWITCHED, (_event, data) => { audioMenu.value = String(data.id); });
          audioMenu.addEventListener('change', () => { hls.audioTrack = Number(audioMenu.value); });
          let captionLabel = null;
          const showCaptions = () => {
            for (const t of video.textTracks) {
              if (t.kind === 'captions' || t.kind === 'subtitles') t.mode = t.label === captionLabel ? 'showing' : 'hidden';
            }
          };
          hls.on(Hls.Events.MANIFEST_LOADED, (_event, data) => {
            const names = (data.captions || []).map((c) => c.name);
            captionMenu.replaceChildren(new Option('Captions off', ''), ...names.map((n) => new Option('CC ' + n, n)));
            captionMenu.hidden = names.length === 0;
          });
          captionMenu.addEventListener('change', () => { captionLabel = captionMenu.value || null; showCaptions(); });
          video.textTracks.addEventListener('addtrack', showCaptions);
          hls.on(Hls.Events.LEVEL_SWITCHED, (_event, data) => {
            const level = hls.levels[data.level];
            $('rendition').textContent = level ? levelLabel(level) + (hls.autoLevelEnabled ? ' (auto)' : '') : '–';
          });
          hls.loadSource(src);
          hls.attachMedia(video);
        } else if (video.canPlayType('application/vnd.apple.mpegurl')) {
          window.player.engine = 'native';
          video.src = src;
        } else {
          message('This browser cannot play HLS (hls.js unavailable, no native support).');
        }
        $('engine').textContent = window.player.engine;
        video.play().catch(() => {});

        function bufferAhead() {
          const t = video.currentTime, b = video.buffered;
          for (let i = 0; i < b.length; i++) if (b.start(i) <= t + 0.1 && t <= b.end(i)) return b.end(i) - t;
          return 0;
        }
        function update() {
          const hls = window.hls;
          const latency = hls && Number.isFinite(hls.latency) ? hls.latency : NaN;
          $('latency').textContent = Number.isFinite(latency) ? latency.toFixed(2) + ' s' : '–';
          $('buffer').textContent = bufferAhead().toFixed(2) + ' s';
          const q = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : null;
          $('dropped').textContent = q ? q.droppedVideoFrames + ' / ' + q.totalVideoFrames : '–';
        }
        setInterval(update, 500);
        update();

        // QoE beacons: every 10 s (and when the page goes away) the page tells the origin its startup time (once),
        // live latency, stalls and rendition switches since the last report (POST qoe, relative: the stream's own
        // /NAME/qoe; a text/plain beacon, so no CORS preflight). The origin adds them up in /metrics.
        const qoe = { pageStart: performance.now(), startup: null, sentStartup: false, stalls: 0, stalled: 0,
                      stallStart: null, switches: 0, lastLevel: null };
        video.addEventListener('playing', () => {
          if (qoe.startup === null) qoe.startup = (performance.now() - qoe.pageStart) / 1000;
          if (qoe.stallStart !== null) { qoe.stalled += (performance.now() - qoe.stallStart) / 1000; qoe.stallStart = null; }
        });
        video.addEventListener('waiting', () => {
          if (qoe.startup !== null && qoe.stallStart === null) { qoe.stalls += 1; qoe.stallStart = performance.now(); }
        });
        if (window.hls) window.hls.on(Hls.Events.LEVEL_SWITCHED, (_event, data) => {
          if (qoe.lastLevel !== null && data.level !== qoe.lastLevel) qoe.switches += 1;
          qoe.lastLevel = data.level;
        });
        function report() {
          if (qoe.startup === null) return;
          const now = performance.now();
          const stalled = qoe.stalled + (qoe.stallStart !== null ? (now - qoe.stallStart) / 1000 : 0);
          const r = { stalls: qoe.stalls, stalled: Math.round(stalled * 1000) / 1000, switches: qoe.switches };
          if (!qoe.sentStartup) r.startup = Math.round(qoe.startup * 1000) / 1000;
          const hls = window.hls;
          if (hls && Number.isFinite(hls.latency) && hls.latency > 0) r.latency = Math.round(hls.latency * 1000) / 1000;
          if (navigator.sendBeacon && navigator.sendBeacon(signed('qoe'), JSON.stringify(r))) {
            qoe.sentStartup = true;
            qoe.stalls = 0; qoe.stalled = 0; qoe.switches = 0;
            if (qoe.stallStart !== null) qoe.stallStart = now;
          }
        }
        window.player.reportQoE = report;
        setInterval(report, 10000);
        addEventListener('pagehide', report);
        \(thumbnailScript)
        </script>
        </body>
        </html>

        """
    }

    /// A JavaScript array of string literals.
    static func jsArray(_ items: [String]) -> String { "[" + items.map(jsString).joined(separator: ", ") + "]" }

    /// A JavaScript string literal safe inside an HTML `<script>`.
    static func jsString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
