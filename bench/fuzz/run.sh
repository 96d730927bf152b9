#!/bin/sh
# Seeds a corpus per fuzz target from the repository and ../shared, then runs every target for
# SECONDS (default 600) one after another, after replaying bench/fuzz/regressions/TARGET/. Findings (crash-*, timeout-*, oom-*) land in
# build-fuzz/findings/<target>/; the corpora grow in build-fuzz/corpus/<target>/.
#   bench/fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
set -eu
build=${1:?usage: run.sh BUILD_DIR [SECONDS] [TARGET...]}
secs=${2:-600}
shift; [ $# -gt 0 ] && shift
targets=${*:-"fuzz_json fuzz_graph fuzz_image fuzz_params fuzz_checkpoint fuzz_names"}
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=$root/../shared/reference
seed() {   # seed TARGET FILE...
  mkdir -p "$build/corpus/$1"; t=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$build/corpus/$t/$(basename "$f")" || true; done
}
seed fuzz_json "$root"/models/spaces/*.json "$shared"/mcunet-vww/acc_datasets/src/OFAMCUNets_r96_gpu0_acc_table.json \
  "$root"/models/predictors/*.json "$root"/datasets/*/*.json
seed fuzz_graph "$shared"/tinyengine/example/tiny-graph.json "$shared"/tinyengine/49kb-int8-graph.json
seed fuzz_params "$shared"/tinyengine/example/tiny-params.pkl
seed fuzz_checkpoint "$shared"/mcunet-vww/*.pth
mkdir -p "$build/corpus/fuzz_names"   # first byte: 0 grammar, 1 scale.json key, 2 graph parameter name
printf '\000v15_bias' > "$build/corpus/fuzz_names/grammar"
printf '\001v0_x_scale' > "$build/corpus/fuzz_names/scale"
printf '\002v1_bias\n#include "x"' > "$build/corpus/fuzz_names/graph"
export TINYSCOPE_FUZZ_GRAPH="$shared/tinyengine/example/tiny-graph.json"
mkdir -p "$build/corpus/fuzz_image"
if [ -f /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz ]; then
  cp /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz "$build/corpus/fuzz_image/labels.gz"
fi
python3 - "$build/corpus/fuzz_image" <<'PY' || true
import sys, zlib, struct
out = sys.argv[1]
def png(w, h, grey):
    raw = b''.join(b'\0' + bytes((x * 7 + y * 3) % 256 for x in range(w * (1 if grey else 3))) for y in range(h))
    def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0 if grey else 2, 0, 0, 0)) + \
        chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
open(out + '/grey.png', 'wb').write(png(28, 28, True))
open(out + '/rgb.png', 'wb').write(png(12, 9, False))
idx = struct.pack('>IIII', 0x803, 3, 4, 4) + bytes(range(48))
open(out + '/three.idx', 'wb').write(idx)
open(out + '/three.idx.gz', 'wb').write(__import__('gzip').compress(idx))
PY
for t in $targets; do
  mkdir -p "$build/findings/$t"
  # Inputs that once failed (bench/fuzz/regressions/TARGET/) are replayed first.
  if [ -d "$root/bench/fuzz/regressions/$t" ]; then
    echo "== $t: regressions"
    ASAN_OPTIONS=detect_leaks=0 "$build/$t" "$root/bench/fuzz/regressions/$t"/* 2>&1 | grep -E "^(Executed|==[0-9]+==ERROR|SUMMARY)|runtime error" || true
  fi
  echo "== $t for $secs s"
  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$root/bench/fuzz/lsan.supp \
    "$build/$t" "$build/corpus/$t" -artifact_prefix="$build/findings/$t/" -max_len=1000000 -rss_limit_mb=2560 \
    -timeout=20 -max_total_time="$secs" -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Done)" || true
done
