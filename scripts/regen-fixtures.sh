#!/usr/bin/env bash
# Regenerates the ISOBMFF test fixtures from FFmpeg's lavfi sources. Review the diff before committing:
# the bytes depend on the libx264 / FFmpeg AAC versions installed (checked with FFmpeg 5.1, x264 core 164).
#
#   Tests/ISOBMFFTests/Fixtures/
#     h264_aac_video.bin     H.264 samples of src (4-byte length-prefixed, as stored in MP4), back to back
#     h264_aac_audio.bin     raw AAC frames of src, back to back
#     h264_aac_packets.csv   stream_index,pts,dts,duration,size,flags per packet (ffprobe, file order)
#     h264_aac_avcC.bin      the avcC record FFmpeg's MP4 muxer wrote for the video stream
#     h264_aac_asc.bin       the AudioSpecificConfig of the audio stream
#     h264_aac_streams.txt   one line per stream: index=..|codec_name=..|time_base=.. (ffprobe compact)
#     sine_44100_mono.adts   0.1 s of AAC-LC in ADTS framing
#     init_h264_aac.mp4      OUR init segment for the sample set above   (written by the Swift test, see below)
#     seg_h264_aac.m4s       OUR media segment (styp+moof+mdat) for it
#
# src = 1 s of testsrc 160x90 @30 fps, SAR 4:3, x264 with B-frames (GOP 30), plus a 48 kHz stereo sine in AAC-LC.
set -euo pipefail
cd "$(dirname "$0")/.."
out=Tests/ISOBMFFTests/Fixtures
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ff() { ffmpeg -hide_banner -nostdin -v error -y "$@"; }

ff -f lavfi -i testsrc=size=160x90:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 1 \
   -vf setsar=4/3 -pix_fmt yuv420p -c:v libx264 -preset medium -g 30 -bf 2 -x264-params b-adapt=0 \
   -c:a aac -b:a 64k -ac 2 -map_metadata -1 -fflags +bitexact "$tmp/src.mp4"

ff -i "$tmp/src.mp4" -map 0:v -c copy -f rawvideo "$out/h264_aac_video.bin"
ff -i "$tmp/src.mp4" -map 0:a -c copy -f data "$out/h264_aac_audio.bin"

# Packet table. Side data (e.g. "Skip Samples") follows the six fields on some lines: keep the six fields only.
ffprobe -v error -show_packets -show_entries packet=stream_index,pts,dts,duration,size,flags -of csv=p=0 \
    "$tmp/src.mp4" | awk -F, 'NF >= 6 { print $1 "," $2 "," $3 "," $4 "," $5 "," $6 }' > "$out/h264_aac_packets.csv"

ffprobe -v error -show_entries stream=index,codec_name,time_base,width,height,sample_aspect_ratio,sample_rate,channels \
    -of compact=p=0 "$tmp/src.mp4" > "$out/h264_aac_streams.txt"

# Extradata: ffprobe prints it as a hexdump "OFFSET: xxxx xxxx ... ascii"; columns 11-50 hold the hex groups.
extradata() {
    ffprobe -v error -select_streams "$1" -show_streams -show_data "$tmp/src.mp4" |
        awk '/^extradata=/ { on = 1; next } on && /^[0-9a-f]+:/ { print substr($0, 11, 40); next } on { exit }' |
        tr -d ' \n' | xxd -r -p
}
extradata v > "$out/h264_aac_avcC.bin"
extradata a > "$out/h264_aac_asc.bin"

ff -f lavfi -i sine=frequency=1000:sample_rate=44100 -t 0.1 -ac 1 -c:a aac -fflags +bitexact -f adts \
   "$out/sine_44100_mono.adts"

# Our own output for the new inputs: the ffprobe fixture test rewrites the two goldens when asked to.
if [[ "${SKIP_GOLDEN:-0}" != 1 ]]; then
    swift build --build-tests >/dev/null
    ISOBMFF_UPDATE_GOLDEN=1 swift test --skip-build --filter 'ISOBMFFTests.FFprobeFixtureTests' >/dev/null
fi

ls -l "$out"
