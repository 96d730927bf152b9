#!/usr/bin/env bash
# One memory figure, three engines (docs/DEPLOY.md): `tinyscope deploy --format tflite --compare-memory`
# on mcunet-5fps (MIT's int8 params) and on the smallest, largest and a searched winner of both spaces
# (mcunet-fmnist on the shipped demo supernet, mcunet-vww on ../shared's perturbed VWW supernet);
# prints one Markdown row per model. About two minutes on 2 cores (BN re-calibration on 200 images,
# int8 calibration on 100).
#   bench/deploy/memory_table.sh [TINYSCOPE [WORKDIR]]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
ts=${1:-$repo/build/app/tinyscope}
work=${2:-$(mktemp -d)}
mkdir -p "$work" || exit 2
shared=$repo/../shared/reference
[ -x "$ts" ] || { echo "no tinyscope binary at $ts (build first)" >&2; exit 2; }
[ -d "$shared" ] || { echo "../shared/reference not found" >&2; exit 2; }
fmnist=$repo/models/supernets/mcunet-fmnist.pth
vww=$shared/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth
calib=(--bn-images 200 --calib-images 100)

# The searched winners: evolution (seed 0) under the limits in their row.
"$ts" search --space mcunet-fmnist --macs 10 --sram 32 --json > "$work/fmnist-search.json" || exit 2
"$ts" search --space mcunet-vww --macs 60 --sram 250 --json > "$work/vww-search.json" || exit 2
for s in fmnist vww; do
  python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["best"]["config"], open(sys.argv[2], "w"))' \
    "$work/$s-search.json" "$work/$s-winner-config.json" || exit 2
done

run() {   # name, then deploy's model arguments
  local name=$1; shift
  "$ts" deploy "$@" --format tflite --compare-memory --board stm32f746 --out "$work/$name.tflite" --json \
    > "$work/$name.json" 2> "$work/$name.err" || { echo "| $name | deploy failed: $(tail -1 "$work/$name.err") |"; return; }
  python3 - "$name" "$work/$name.json" <<'PY'
import json, sys
name, j = sys.argv[1], json.load(open(sys.argv[2]))
m = j["memory"]
rows = {(r["engine"], r["figure"].split(" ")[0]): r for r in m["rows"]}
g = lambda v: "{:,}".format(v)
t = m["tflm"]
te = m["tinyengine"]
if te.get("accepted"):
    tecell = "{} / {}".format(g(te["activation_bytes"]), g(te["peak_bytes"]))
elif "refusal" in te:
    tecell = "refused (" + te["refusal"].split(":")[-1].strip() + ")"
else:
    tecell = "not run"
peak = "op {} {}: {}".format(t["live_peak_op"], t["live_peak_op_type"],
                            " + ".join("{} {}".format(b["name"], g(b["bytes"])) for b in t["live_at_peak"]))
shape = "×".join(str(d) for d in j["input"]["shape"][1:3])
print("| {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
    name, shape, g(j["cost"]["macs"]), g(m["ours"]["peak_sram_bytes"]), tecell, g(t["head_bytes"]), g(t["tail_bytes"]),
    g(t["arena_used_bytes"]), peak))
PY
}

echo "| model | input | MACs | ours: peak SRAM | TinyEngine: arena / PEAK_MEM | TFLM head | TFLM tail | TFLM arena_used_bytes | where TFLM's live set peaks |"
echo "|---|---|---|---|---|---|---|---|---|"
run mcunet-5fps --model mcunet-5fps --params "$shared/tinyengine/full-int8-params.pkl"
run fmnist-min --supernet "$fmnist" --space mcunet-fmnist --config min "${calib[@]}"
run fmnist-winner --supernet "$fmnist" --space mcunet-fmnist --config "$work/fmnist-winner-config.json" "${calib[@]}"
run fmnist-max --supernet "$fmnist" --space mcunet-fmnist --config max "${calib[@]}"
run vww-min --supernet "$vww" --space mcunet-vww --config min "${calib[@]}"
run vww-winner --supernet "$vww" --space mcunet-vww --config "$work/vww-winner-config.json" "${calib[@]}"
run vww-max --supernet "$vww" --space mcunet-vww --config max "${calib[@]}"
