#!/usr/bin/env bash
# Validates an fMP4 HLS output directory with ffprobe: init.mp4 + seg*.m4s (in numeric order) are concatenated
# and read with `ffprobe -show_packets`. Exits non-zero if ffprobe fails or prints anything on stderr.
#
#   scripts/validate.sh DIR            prints "ok: N packets" on success
#   FFPROBE=/path/to/ffprobe scripts/validate.sh DIR
set -euo pipefail
dir=${1:?usage: validate.sh DIR (containing init.mp4 and seg*.m4s)}
ffprobe=${FFPROBE:-ffprobe}
[[ -f "$dir/init.mp4" ]] || { echo "validate: $dir/init.mp4 missing" >&2; exit 2; }
mapfile -t segs < <(find "$dir" -maxdepth 1 -name 'seg*.m4s' -printf '%f\n' | sort -V)
(( ${#segs[@]} > 0 )) || { echo "validate: no seg*.m4s in $dir" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$dir/init.mp4" "${segs[@]/#/$dir/}" > "$tmp/all.mp4"

status=0
"$ffprobe" -hide_banner -v error -show_packets -of csv=p=0 "$tmp/all.mp4" > "$tmp/packets.csv" 2> "$tmp/err.txt" || status=$?
if [[ $status -ne 0 || -s "$tmp/err.txt" ]]; then
    echo "validate: ffprobe failed (exit $status) on init.mp4 + ${#segs[@]} segment(s):" >&2
    head -n 20 "$tmp/err.txt" >&2
    exit 1
fi
packets=$(wc -l < "$tmp/packets.csv")
(( packets > 0 )) || { echo "validate: no packets" >&2; exit 1; }
echo "ok: $packets packets in init.mp4 + ${#segs[@]} segment(s)"
