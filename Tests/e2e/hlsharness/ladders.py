"""Reference ABR ladders made by FFmpeg itself (one x264 encode per rung from one split source, AAC in its own
rendition), to prove the presentation checkers pass on correct input and fail on targeted breakages.

ffmpeg_ladder() writes the origin's layout: index.m3u8, NAME.m3u8, NAME/init.mp4, NAME/seg<N>.m4s.
FFmpeg's own multivariant playlist lacks FRAME-RATE, AVERAGE-BANDWIDTH, AUTOSELECT and CHANNELS and takes
BANDWIDTH from the encoder settings (audio only with CRF), so index.m3u8 is written from the media instead:
write_multivariant() measures it as RFC 8216 §4.1 defines it.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from . import m3u8, mp4
from .procs import REPO, Nginx, stop_process

# name, size, x264 bit rate (small sizes: the ladder is about structure, not pictures)
RUNGS = (("720p", "640x360", "900k"), ("480p", "480x270", "500k"), ("360p", "320x180", "250k"))
# the sizes the names promise (reference_origin.py --ladder)
FULL_RUNGS = (("720p", "1280x720", "2500k"), ("480p", "854x480", "1200k"), ("360p", "640x360", "600k"))
AUDIO = "audio"


def _ffmpeg_args(seconds, rate, gop, rungs, hls_time, live, split_by_time, input_file=None):
    n = len(rungs)
    chain = f"[0:v]split={n}" + "".join(f"[s{i}]" for i in range(n)) + ";" + ";".join(
        f"[s{i}]scale={size.replace('x', ':')}[v{i}]" for i, (_, size, _) in enumerate(rungs))
    args = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y"]
    if live:
        args += ["-re"]
    if input_file:
        args += ["-i", input_file]
    else:
        args += ["-f", "lavfi", "-i", f"testsrc2=size=1280x720:rate={rate}",
                 "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]
    if seconds:
        args += ["-t", str(seconds)]
    args += ["-filter_complex", chain]
    for i in range(n):
        args += ["-map", f"[v{i}]"]
    args += ["-map", "0:a" if input_file else "1:a", "-c:v", "libx264", "-preset", "ultrafast",
             "-pix_fmt", "yuv420p", "-g", str(gop), "-keyint_min", str(gop), "-sc_threshold", "0"]
    for i, (_, _, br) in enumerate(rungs):
        args += [f"-b:v:{i}", br, f"-maxrate:v:{i}", br, f"-bufsize:v:{i}", br]
    flags = ["split_by_time"] if split_by_time else []
    if live:
        flags += ["delete_segments", "program_date_time", "temp_file"]
    args += ["-c:a", "aac", "-ac", "2", "-b:a", "96k", "-f", "hls", "-hls_time", str(hls_time),
             "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4"]
    if flags:
        args += ["-hls_flags", "+".join(flags)]
    args += ["-hls_list_size", "8"] if live else ["-hls_playlist_type", "vod"]
    vsm = " ".join(f"v:{i},agroup:{AUDIO},name:{name}" for i, (name, _, _) in enumerate(rungs))
    args += ["-var_stream_map", f"{vsm} a:0,agroup:{AUDIO},default:yes,name:{AUDIO}"]
    return args


def cached_ladder(**kwargs):
    """ffmpeg_ladder(**kwargs) made once into .cache/e2e-media/ladder-<hash of the recipe>/."""
    recipe = json.dumps([_ffmpeg_args(kwargs.get("seconds", 6), kwargs.get("rate", 30), kwargs.get("gop", 30),
                                      kwargs.get("rungs", RUNGS), kwargs.get("hls_time", 1), False,
                                      kwargs.get("split_by_time", False)), kwargs.get("multivariant", True)])
    out = os.path.join(REPO, ".cache", "e2e-media", "ladder-" + hashlib.sha256(recipe.encode()).hexdigest()[:12])
    if os.path.exists(os.path.join(out, f"{AUDIO}.m3u8")):
        return out
    tmp = tempfile.mkdtemp(prefix="ladder-", dir=os.path.dirname(out) if os.path.isdir(os.path.dirname(out))
                           else None)
    ffmpeg_ladder(os.path.join(tmp, "l"), **kwargs)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    try:
        os.rename(os.path.join(tmp, "l"), out)
    except OSError:   # made meanwhile by another run
        pass
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def ffmpeg_ladder(out, seconds=6, rate=30, gop=30, rungs=RUNGS, hls_time=1, split_by_time=False, multivariant=True,
                  input_file=None):
    """A VOD ladder in the origin's layout under `out` (made once: reused when out/audio.m3u8 exists), from the
    test pattern or input_file. split_by_time with hls_time 1/3 gives 1/3-second fragments: the parts of
    simladder's LL-HLS origin."""
    if os.path.exists(os.path.join(out, f"{AUDIO}.m3u8")):
        return out
    tmp = tempfile.mkdtemp(prefix="ffladder-")
    try:
        args = _ffmpeg_args(seconds, rate, gop, rungs, hls_time, False, split_by_time, input_file)
        args += ["-hls_segment_filename", os.path.join(tmp, "%v", "seg%d.m4s"), os.path.join(tmp, "%v", "s.m3u8")]
        p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError(f"ffmpeg ladder failed: {p.stderr.decode()[-2000:]}")
        os.makedirs(out, exist_ok=True)
        for name in [r[0] for r in rungs] + [AUDIO]:
            src = os.path.join(tmp, name)
            with open(os.path.join(src, "s.m3u8")) as f:
                text = f.read()
            init = re.search(r'URI="([^"]+)"', text).group(1)
            shutil.move(src, os.path.join(out, name))
            os.rename(os.path.join(out, name, init), os.path.join(out, name, "init.mp4"))
            os.remove(os.path.join(out, name, "s.m3u8"))
            text = text.replace(f'URI="{init}"', f'URI="{name}/init.mp4"')
            text = re.sub(r"^(seg\d+\.m4s)$", rf"{name}/\1", text, flags=re.M)
            with open(os.path.join(out, f"{name}.m3u8"), "w") as f:
                f.write(text)
        if multivariant:
            write_multivariant(out, [r[0] for r in rungs])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def media_facts(directory, name):
    """(init, [(EXTINF, size)], frames/s or None) of rendition `name` in the origin's layout."""
    with open(os.path.join(directory, name, "init.mp4"), "rb") as f:
        init = mp4.parse_init(f.read())
    with open(os.path.join(directory, f"{name}.m3u8")) as f:
        pl = m3u8.parse_media(f.read())
    segs, frames, secs = [], 0, 0.0
    for s in pl.segments:
        with open(os.path.join(directory, s.uri), "rb") as f:
            data = f.read()
        segs.append((s.duration, len(data)))
        t = init.tracks[0]
        if t.handler == "vide":
            runs = mp4.parse_fragment(data, init).track_runs(t.track_id)
            frames += sum(len(r.durations) for r in runs)
            secs += sum(r.duration for r in runs) / t.timescale
    return init, segs, (frames / secs if secs else None), pl.target_duration


def peak_bit_rate(segs, td):
    """RFC 8216 §4.1 peak segment bit rate of [(EXTINF, size)] in order."""
    best = 0.0
    for i in range(len(segs)):
        size = dur = 0
        for d, n in segs[i:]:
            size, dur = size + n, dur + d
            if dur > 1.5 * td:
                break
            if dur >= 0.5 * td:
                best = max(best, 8 * size / dur)
    return best


def multivariant_text(directory, video_names, audio_name=AUDIO, overrides=None):
    """index.m3u8 text for a ladder directory, every attribute measured from the media (RFC 8216 §4.1 peak and
    average segment bit rates). overrides: {name: {attr: value}} to break it on purpose."""
    overrides = overrides or {}
    ainit, asegs, _, td = media_facts(directory, audio_name)
    apeak = peak_bit_rate(asegs, td)
    aavg = 8 * sum(n for _, n in asegs) / sum(d for d, _ in asegs)
    media = {"TYPE": "AUDIO", "GROUP-ID": '"audio"', "NAME": '"audio"', "DEFAULT": "YES", "AUTOSELECT": "YES",
             "CHANNELS": f'"{ainit.tracks[0].channels}"', "URI": f'"{audio_name}.m3u8"'}
    media.update(overrides.get(audio_name, {}))
    lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS",
             "#EXT-X-MEDIA:" + ",".join(f"{k}={v}" for k, v in media.items() if v is not None)]
    for name in video_names:
        init, segs, fps, td = media_facts(directory, name)
        v = init.tracks[0]
        attrs = {"BANDWIDTH": str(int(peak_bit_rate(segs, td) + apeak + 0.999)),
                 "AVERAGE-BANDWIDTH": str(int(8 * sum(n for _, n in segs) / sum(d for d, _ in segs) + aavg + 0.999)),
                 "CODECS": f'"{v.codec},{ainit.tracks[0].codec}"', "RESOLUTION": f"{v.width}x{v.height}",
                 "FRAME-RATE": f"{fps:.3f}", "AUDIO": '"audio"'}
        attrs.update(overrides.get(name, {}))
        lines += ["#EXT-X-STREAM-INF:" + ",".join(f"{k}={v}" for k, v in attrs.items() if v is not None),
                  f"{name}.m3u8"]
    return "\n".join(lines) + "\n"


def write_multivariant(directory, video_names, audio_name=AUDIO, overrides=None):
    with open(os.path.join(directory, "index.m3u8"), "w") as f:
        f.write(multivariant_text(directory, video_names, audio_name, overrides))


class FFmpegLiveLadder:
    """FFmpeg's own live fMP4 ladder (`-re`, FFmpeg's layout NAME/s.m3u8 + NAME/seg<N>.m4s) served by nginx, with
    an index.m3u8 written once the first segments exist (BANDWIDTH from the VBV rates with headroom)."""

    def __init__(self, rungs=RUNGS, rate=30, workdir=None):
        self.dir = workdir or tempfile.mkdtemp(prefix="ffmpeg-ladder-")
        self.rungs, self.rate = rungs, rate
        self.proc = self.nginx = None

    def start(self, ready_timeout=20):
        args = _ffmpeg_args(None, self.rate, self.rate, self.rungs, 1, True, False)
        args += ["-hls_segment_filename", os.path.join(self.dir, "%v", "seg%d.m4s"),
                 os.path.join(self.dir, "%v", "s.m3u8")]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.nginx = Nginx(self.dir).start()
        names = [r[0] for r in self.rungs] + [AUDIO]
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if all(_segments(os.path.join(self.dir, n, "s.m3u8")) >= 2 for n in names):
                break
            time.sleep(0.2)
        else:
            err = self.proc.stderr.read().decode() if self.proc.poll() is not None else "timeout"
            self.stop()
            raise RuntimeError(f"ffmpeg live ladder did not start: {err}")
        self._write_index()
        return self

    def _write_index(self):
        init = {}
        for name in [r[0] for r in self.rungs] + [AUDIO]:
            with open(os.path.join(self.dir, name, "s.m3u8")) as f:
                uri = re.search(r'URI="([^"]+)"', f.read()).group(1)
            with open(os.path.join(self.dir, name, uri), "rb") as f:
                init[name] = mp4.parse_init(f.read()).tracks[0]
        a = init[AUDIO]
        lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS",
                 f'#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,'
                 f'CHANNELS="{a.channels}",URI="{AUDIO}/s.m3u8"']
        for name, _, br in self.rungs:
            v = init[name]
            bw = int((int(br[:-1]) * 1000 + 96000) * 1.5)
            lines += [f'#EXT-X-STREAM-INF:BANDWIDTH={bw},AVERAGE-BANDWIDTH={bw * 2 // 3},CODECS="{v.codec},'
                      f'{a.codec}",RESOLUTION={v.width}x{v.height},FRAME-RATE={self.rate:.3f},AUDIO="audio"',
                      f"{name}/s.m3u8"]
        tmp = os.path.join(self.dir, ".index.tmp")
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, os.path.join(self.dir, "index.m3u8"))

    @property
    def base_url(self):
        return self.nginx.base_url

    def stop(self):
        stop_process(self.proc, sig=15)
        if self.nginx:
            self.nginx.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _segments(path):
    try:
        with open(path) as f:
            return f.read().count("#EXTINF")
    except OSError:
        return 0
