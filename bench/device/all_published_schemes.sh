#!/usr/bin/env bash
# Every published scheme of mcunet-5fps, mbv2-w0.35 and proxyless-w0.3 exported and run on the emulated
# Cortex-M7 (docs/DEVICE_RUNNER.md "Every published scheme on the emulated M7"): prints one Markdown row
# per scheme. mcunet-5fps uses MIT's int8 weights from ../shared; the other two PyTorch's default
# initialisation quantized by `tinyscope export` (seed 0).
#   bench/device/all_published_schemes.sh [TINYSCOPE [WORKDIR]]      (~30 s per scheme that compiles)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
ts=${1:-$repo/build/app/tinyscope}
work=${2:-$(mktemp -d)}
shared=$repo/../shared/reference/tinyengine
[ -x "$ts" ] || { echo "no tinyscope binary at $ts (build first)" >&2; exit 2; }
[ -f "$shared/full-int8-params.pkl" ] || { echo "../shared/reference/tinyengine not found" >&2; exit 2; }
echo "| scheme | checker errors (reference form) | TinyEngine codegen + link | device vs workbench: logits / parameters after one step (GraphInterpreter + TinyEngine's update) | SRAM: ledger → binary (.data + .bss + training stack), vs F746 | flash (binary) | instructions per inference / per training step |"
echo "|---|---|---|---|---|---|---|"
for model in mbv2-w0.35 mcunet-5fps proxyless-w0.3; do
  case $model in
    mbv2-w0.35) schemes="49kb 73kb 99kb 123kb 138kb" ;;
    mcunet-5fps) schemes="49kb 74kb 99kb 124kb 148kb" ;;
    proxyless-w0.3) schemes="49kb 74kb 98kb 120kb 148kb" ;;
  esac
  for s in $schemes; do
    out=$work/$model-$s
    params=()
    [ "$model" = mcunet-5fps ] && params=(--params "$shared/full-int8-params.pkl")
    "$ts" export --model "$model" "${params[@]}" --seed 0 --scheme "$model/$s" --board stm32f746 --out "$out" --json > "$out.export.json" 2> "$out.export.err"
    "$ts" device-run --export "$out" --images 2 --board stm32f746 --json > "$out.device.json" 2> "$out.device.err"
    echo $? > "$out.device.rc"
    python3 - "$model/$s" "$out" <<'PY'
import json, sys
name, out = sys.argv[1], sys.argv[2]
ex = json.load(open(out + ".export.json"))
errors = sorted({f["rule"] for f in ex.get("findings", []) if f.get("severity") == "error"})
ledger = ex.get("board_use", {}).get("sram_bytes")
ledger_s = f"{ledger:,} B" if ledger else "?"
try:
    d = json.load(open(out + ".device.json"))
except Exception:
    err = open(out + ".device.err").read().strip().splitlines()
    why = "refused by the code generator (NotImplementedError)" if any("NotImplementedError" in l for l in err) else ("fails: " + (err[-1] if err else "?"))
    print(f"| {name} | {', '.join(errors) or 'none'} | {why} | — | ledger {ledger_s} | — | — |")
    sys.exit(0)
logits = "equal" if d["inference_match"] else "DIFFER"
train = {True: "equal", False: "DIFFER: " + str(d.get("training_difference")), None: "not compared"}[d["training_match"]]
boundary = sum(p.get("at_boundary", 0) for p in d.get("trained_params", []))
if boundary:
    train += f" ({boundary} within the gradient tolerance)"
over = d["sram_bytes"] - 320 * 1024
fit = "fits" if d["board_fits"] else f"**+{over / 1024:.1f} KB over**"
print(f"| {name} | {', '.join(errors) or 'none'} | compiles, links, runs | {logits} / {train} | {ledger_s} → {d['sram_bytes']:,} B ({fit}) | "
      f"{d['flash_bytes']:,} B | {d['instructions_per_inference']:,} / {d['instructions_per_step']:,} |")
PY
  done
done
