"""Small test inputs made with ffmpeg (once; cached under .cache/e2e-media/<recipe hash>/)."""
import fcntl
import hashlib
import json
import os
import subprocess
import threading

from .procs import REPO

V = "testsrc2=size={size}:rate={rate}"
X265_GOP = "keyint=30:min-keyint=30:scenecut=0"
A = "sine=frequency=440:sample_rate=48000"

# name -> (ffmpeg args after the global options, description). Durations are short on purpose.
RECIPES = {
    # H.264 (High, B-frames, 1 s GOP) + AAC, faststart MP4: the looped file
    "clip.mp4": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-f", "lavfi", "-i", A, "-t", "4",
                 "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "30", "-keyint_min", "30",
                 "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2",
                 "-movflags", "+faststart"],
    # the same as MPEG-TS (stdin)
    "clip.ts": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-f", "lavfi", "-i", A, "-t", "4",
                "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "30", "-keyint_min", "30",
                "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2",
                "-f", "mpegts"],
    # a 6 s VOD source for `package` with B-frames and a 2 s GOP
    "vod.mp4": ["-f", "lavfi", "-i", V.format(size="320x240", rate=25), "-f", "lavfi", "-i", A, "-t", "6",
                "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "50", "-keyint_min", "50",
                "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", "-movflags", "+faststart"],
    "y4m.y4m": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-t", "3", "-pix_fmt", "yuv420p",
                "-f", "yuv4mpegpipe"],
    "raw.yuv": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-t", "3", "-pix_fmt", "yuv420p",
                "-f", "rawvideo"],
    "mjpeg.mjpeg": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-t", "3", "-c:v", "mjpeg",
                    "-pix_fmt", "yuvj420p", "-q:v", "5", "-f", "mjpeg"],
    "mpeg4_mp3.mkv": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-f", "lavfi", "-i", A, "-t", "3",
                      "-c:v", "mpeg4", "-q:v", "5", "-g", "30", "-c:a", "libmp3lame", "-b:a", "96k",
                      "-f", "matroska"],
    "mpeg4_mp3.mp4": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-f", "lavfi", "-i", A, "-t", "3",
                      "-c:v", "mpeg4", "-q:v", "5", "-g", "30", "-c:a", "libmp3lame", "-b:a", "96k",
                      "-movflags", "+faststart"],
    "audio.ts": ["-f", "lavfi", "-i", A, "-t", "3", "-c:a", "aac", "-ac", "2", "-f", "mpegts"],
    "video.ts": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-t", "3", "-c:v", "libx264",
                 "-preset", "veryfast", "-g", "30", "-pix_fmt", "yuv420p", "-f", "mpegts"],
    "mpeg2.ts": ["-f", "lavfi", "-i", V.format(size="320x240", rate=30), "-f", "lavfi", "-i", A, "-t", "3",
                 "-c:v", "mpeg2video", "-q:v", "5", "-c:a", "mp2", "-f", "mpegts"],
    # H.265 (x265, hvc1, 1 s GOP) + AAC, faststart MP4: copied as it is
    "hevc.mp4": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-f", "lavfi", "-i", A, "-t", "4",
                 "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", X265_GOP + ":log-level=error",
                 "-tag:v", "hvc1", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", "-movflags", "+faststart"],
    # H.265 Main 10 HDR10 (PQ, BT.2020, mastering display and content light level SEI), video only
    "hevc_pq.mp4": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-t", "3", "-pix_fmt", "yuv420p10le",
                    "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                    X265_GOP + ":log-level=error:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc"
                    ":master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1)"
                    ":max-cll=1000,400",
                    "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc",
                    "-tag:v", "hvc1", "-movflags", "+faststart"],
    # H.265 Main 10 HLG, video only
    "hevc_hlg.mp4": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-t", "3", "-pix_fmt", "yuv420p10le",
                     "-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                     X265_GOP + ":log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc",
                     "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc",
                     "-tag:v", "hvc1", "-movflags", "+faststart"],
    # H.265 in MPEG-TS, video only: Annex-B, parameter sets in-band only
    "hevc_video.ts": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-t", "3", "-c:v", "libx265",
                      "-preset", "ultrafast", "-x265-params", X265_GOP + ":log-level=error", "-pix_fmt", "yuv420p",
                      "-f", "mpegts"],
    # AV1 (SVT-AV1, 1 s GOP) + Opus, faststart MP4
    "av1.mp4": ["-f", "lavfi", "-i", V.format(size="640x360", rate=30), "-f", "lavfi", "-i", A, "-t", "4",
                "-c:v", "libsvtav1", "-preset", "12", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "libopus", "-ac", "2",
                "-movflags", "+faststart"],
}

# Properties the tests use (duration s, video size, frame rate).
INFO = {
    "y4m.y4m": {"duration": 3, "size": "320x240", "rate": 30},
    "raw.yuv": {"duration": 3, "size": "320x240", "rate": 30, "pix_fmt": "yuv420p"},
    "mjpeg.mjpeg": {"duration": 3, "size": "320x240", "rate": 30},
    "mpeg4_mp3.mkv": {"duration": 3}, "mpeg4_mp3.mp4": {"duration": 3},
    "audio.ts": {"duration": 3}, "video.ts": {"duration": 3}, "mpeg2.ts": {"duration": 3},
    "clip.mp4": {"duration": 4}, "clip.ts": {"duration": 4}, "vod.mp4": {"duration": 6},
    "hevc.mp4": {"duration": 4}, "hevc_pq.mp4": {"duration": 3}, "hevc_hlg.mp4": {"duration": 3},
    "hevc_video.ts": {"duration": 3}, "av1.mp4": {"duration": 4},
}

_lock = threading.Lock()


def cache_dir():
    h = hashlib.sha256(json.dumps(RECIPES, sort_keys=True).encode()).hexdigest()[:12]
    return os.path.join(REPO, ".cache", "e2e-media", h)


def make(name, directory=None):
    """Path of test input `name`, generating it on first use."""
    directory = directory or cache_dir()
    path = os.path.join(directory, name)
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return path
    os.makedirs(directory, exist_ok=True)
    # Threads of this process take _lock; the test workers of a parallel run (pytest-xdist) also take a file lock,
    # so each input is made once and the loser of the race finds it made.
    with _lock, open(os.path.join(directory, ".lock"), "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return path
        stem, ext = os.path.splitext(path)
        tmp = f"{stem}.part{os.getpid()}{ext}"
        cmd = ["ffmpeg", "-hide_banner", "-nostdin", "-v", "error", "-y", *RECIPES[name], tmp]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(f"generating {name} failed: {p.stderr.decode()[-2000:]}")
        os.replace(tmp, path)
        return path


def make_all(directory=None):
    return {name: make(name, directory) for name in RECIPES}
