"""Live H.265 and AV1 in real players (issue 24 §1): hls.js in headless Chromium plays AV1 copied live, and with a
mixed ladder (the H.265 source copied beside encoded H.264 rungs) picks only what Chromium can decode (it has no
HEVC decoder); ffmpeg reads every variant, the H.265 one included. Each fixture is proven in test_video_codecs.py.
"""
from hlsharness import chromium, clients, m3u8, http
from hlsharness import media as media_mod
from hlsharness.testenv import need, need_chromium


def _levels(res):
    for s in reversed(res["samples"]):
        if s.get("levels"):
            return s["levels"], s.get("currentLevel")
    return [], None


def test_av1_and_opus_play_live_in_hlsjs(start_origin):
    need_chromium()
    need("ffmpeg")
    s = start_origin(media_mod.make("av1.mp4"), "--loop", "--transcode", "never")
    mv = m3u8.parse_multivariant(http.get(s.url("/index.m3u8")).text)
    assert mv.variants[0].attrs["CODECS"].startswith("av01.0.") and mv.variants[0].attrs["CODECS"].endswith(",opus"), mv.raw
    res = chromium.chromium_play(s.url("/"), 4)
    print(chromium.summary(res))
    assert chromium.playback_problems(res, max_dropped=0.03) == []
    levels, _ = _levels(res)
    assert levels and all("av01" in (lv.get("codecs") or "") for lv in levels), levels
    decoded = [x.get("audioDecodedBytes") or 0 for x in res["samples"]]
    assert decoded[-1] > decoded[len(decoded) // 2] > 0, f"Opus not decoded: {decoded}"


def test_mixed_ladder_hlsjs_plays_h264_and_never_picks_hevc(start_origin):
    need_chromium()
    need("ffmpeg")
    s = start_origin(media_mod.make("hevc.mp4"), "--loop", "--ladder", "source,240")
    mv = m3u8.parse_multivariant(http.get(s.url("/index.m3u8")).text)
    codecs = sorted(v.attrs["CODECS"].split(",")[0].split(".")[0] for v in mv.variants)
    assert codecs == ["avc1", "hvc1"], mv.raw
    ff = clients.ffmpeg_read(s.url("/index.m3u8"), 3)   # -map 0: both variants and the audio, HEVC decoded too
    assert ff.ok, str(ff)
    res = chromium.chromium_play(s.url("/"), 4)
    print(chromium.summary(res))
    assert chromium.playback_problems(res, max_dropped=0.03) == []
    levels, current = _levels(res)
    assert levels, "hls.js listed no level"
    assert not any("hvc1" in (lv.get("codecs") or "") for lv in levels), f"hls.js kept the HEVC level: {levels}"
    assert current is not None and "avc1" in (levels[current].get("codecs") or ""), (levels, current)
    assert res["video_size"][1] == 240, res["video_size"]
