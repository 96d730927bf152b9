#!/usr/bin/env bash
# TinyEngine vs TFLM on the emulated Cortex-M7, the MCUNet comparison (docs/DEPLOY.md, issue 48):
# every model below written by `tinyscope deploy --format tflite`, then run by `tinyscope device-run
# --tflite` on 5 fashion-mnist:test images with each engine — TinyEngine where its generator accepts
# the model (no squeeze-and-excite), TFLM + CMSIS-NN, TFLM with its reference kernels — and one
# Markdown row per model and engine printed: outputs equal to Int8Forward, arena, SRAM measured
# (static + arena + stack high-water mark), flash, instructions per inference (QEMU icount) and the
# ratios to TinyEngine's row of the same model. Models: mcunet-5fps (MIT's int8 params), mbv2-w0.35
# and proxyless-w0.3 (seeded weights, calibrated on fashion-mnist:holdout: right for memory and
# instruction counts, not for accuracy), the SE-free TinyEngine-trainable space mcunet-fmnist-te (its
# min and a searched winner) and the squeeze-and-excite space mcunet-fmnist (min, max: TFLM only; the
# max's 4.96 MB file is linked into the emulated board's PSRAM, counted as flash).
# The JSONs (deploy's and device-run's, one per model and engine) and the .tflite files stay in WORKDIR.
# About 7 minutes on 2 cores with the runtime archives cached (a TFLM runtime not in the cache: one cold
# build of 5–9 minutes, ~5 min of CPU).
#   bench/deploy/device_table.sh [TINYSCOPE [WORKDIR]]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
ts=${1:-$repo/build/app/tinyscope}
case $ts in /*) ;; *) ts=$PWD/$ts ;; esac
work=${2:-$(mktemp -d)}
mkdir -p "$work" || exit 2
work=$(cd "$work" && pwd)
shared=$repo/../shared/reference
[ -x "$ts" ] || { echo "no tinyscope binary at $ts (build first)" >&2; exit 2; }
[ -d "$shared/runtimes" ] || { echo "$shared/runtimes not found: the device runs need ../shared/reference" >&2; exit 2; }
command -v python3 > /dev/null || { echo "python3 not found: install the Debian package python3" >&2; exit 2; }
fmnist=$repo/models/supernets/mcunet-fmnist.pth
fmnist_te=$repo/models/supernets/mcunet-fmnist-te.pth
calib=(--bn-images 200 --calib-images 50)
images=5
echo "device_table: work folder $work" >&2

# The searched SE-free winner: evolution (seed 0) in the TinyEngine-trainable space under 10 M MACs / 32 KB.
"$ts" search --space mcunet-fmnist-te --macs 10 --sram 32 --json > "$work/te-search.json" || exit 2
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["best"]["config"], open(sys.argv[2], "w"))' \
  "$work/te-search.json" "$work/te-winner-config.json" || exit 2

models=()
deploy() {   # name, then deploy's model arguments
  local name=$1; shift
  echo "device_table: deploy $name" >&2
  if "$ts" deploy "$@" --format tflite --out "$work/$name.tflite" --json > "$work/$name.deploy.json" 2> "$work/$name.deploy.err"; then
    models+=("$name")
  else
    echo "device_table: deploy $name failed: $(tail -1 "$work/$name.deploy.err")" >&2
  fi
}
deploy mcunet-5fps --model mcunet-5fps --params "$shared/tinyengine/full-int8-params.pkl"
deploy mbv2-w0.35 --model mbv2-w0.35
deploy proxyless-w0.3 --model proxyless-w0.3
deploy te-min --supernet "$fmnist_te" --space mcunet-fmnist-te --config min "${calib[@]}"
deploy te-winner --supernet "$fmnist_te" --space mcunet-fmnist-te --config "$work/te-winner-config.json" "${calib[@]}"
deploy fmnist-min --supernet "$fmnist" --space mcunet-fmnist --config min "${calib[@]}"
deploy fmnist-max --supernet "$fmnist" --space mcunet-fmnist --config max "${calib[@]}"

for name in "${models[@]}"; do
  for engine in tinyengine tflm tflm-reference; do
    echo "device_table: device-run $name --engine $engine" >&2
    # A rebuild of the shared build tree replaces the binary: wait for it (at most 10 minutes).
    for _ in $(seq 120); do [ -x "$ts" ] && break; sleep 5; done
    "$ts" device-run --tflite "$work/$name.tflite" --engine "$engine" --images "$images" --data fashion-mnist:test --json \
      > "$work/$name.$engine.json" 2> "$work/$name.$engine.err"
    echo $? > "$work/$name.$engine.rc"
  done
done

python3 - "$work" "$images" "${models[@]}" <<'PY'
import json, os, sys
work, images, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
engines = [("tinyengine", "TinyEngine"), ("tflm", "TFLM + CMSIS-NN"), ("tflm-reference", "TFLM reference kernels")]
g = lambda v: "{:,}".format(v)

def load(name, engine):
    p = os.path.join(work, "{}.{}".format(name, engine))
    rc = int(open(p + ".rc").read().strip() or 2)
    j = None
    try:
        with open(p + ".json") as f:
            j = json.load(f)
    except (OSError, ValueError):
        pass
    err = [l.strip() for l in open(p + ".err").read().splitlines() if l.strip()]
    return rc, j, (err[-1] if err else "exit {}".format(rc))

print("| model | input | MACs | engine | outputs equal | arena | SRAM measured (static + arena + stack) | flash | instructions / inference"
      " | SRAM ÷ TinyEngine | flash ÷ TinyEngine | instructions ÷ TinyEngine | fits STM32F746 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in models:
    d = json.load(open(os.path.join(work, name + ".deploy.json")))
    shape = "×".join(str(x) for x in d["input"]["shape"][1:3])
    macs = g(d["cost"]["macs"])
    te = None
    for engine, title in engines:
        rc, j, last = load(name, engine)
        head = "| {} | {} | {} | {} |".format(name, shape, macs, title)
        if j is None or "sram_bytes" not in j:
            reason = last.replace("|", "/").replace("tinyscope device-run: ", "")
            if "Unsupported MUL" in reason:
                reason = "Unsupported MUL (squeeze-and-excite)"
            print(head + " {}: {} | | | | | | | | |".format("refused" if rc == 2 else "failed (exit {})".format(rc), reason))
            continue
        if engine == "tinyengine":
            te = j
        eq = "yes ({0}/{0})".format(j["images"]) if j.get("inference_match") else "NO: " + json.dumps(j.get("first_difference"))
        if engine != "tinyengine" and j.get("host_checked"):
            eq += ", = host TFLM" if j.get("host_match") else ", ≠ host TFLM"
        sram = "{} ({} + {} + {})".format(g(j["sram_bytes"]), g(j["static_sram_bytes"]),
                                          g(j["arena_bytes"]) if engine != "tinyengine" else "0", g(j["stack_bytes"]))
        if engine == "tinyengine":
            sram = "{} ({} incl. buffer + {})".format(g(j["sram_bytes"]), g(j["static_sram_bytes"]), g(j["stack_bytes"]))
        ratio = lambda k: "{:.2f}".format(j[k] / te[k]) if te else "—"
        fits = "yes" if j.get("board_fits") else "no"
        print(head + " {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            eq, g(j["arena_bytes"]), sram, g(j["flash_bytes"]), g(j["instructions_per_inference"]),
            ratio("sram_bytes"), ratio("flash_bytes"), ratio("instructions_per_inference"), fits))
PY
