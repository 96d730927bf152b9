# shellcheck shell=bash
# The build stage of `run_export.sh --tflite FILE --engine tinyengine WORKDIR`: TinyEngine's TFLite
# *inference* code generator (code_generator.CodegenUtilTFlite.GenerateSourceFilesFromTFlite) on FILE,
# its generated code + TinyEngine's kernels + resources/device/harness/tinyengine_infer_main.c + the
# board's startup code, compiled with TinyEngine's flags and linked for QEMU's mps2-an500.
# docs/DEVICE_RUNNER.md, "TinyEngine's inference code on the device".
#
# Sourced by run_export.sh, which calls engine_build with these set:
#   TFLITE (absolute path of the model)  WORK  BUILD=$WORK/build (empty)  GEN=$WORK/gen (empty)
#   CACHE_ROOT (compiled-archive cache)  TE (tinyengine root)  CMSIS  DEV (resources/device)  PY
#   functions: die MSG, now, elapsed A B, lock_entry LOCKFILE WHAT, unlock_entry
# engine_build sets ELF, CODEGEN_S, COMPILE_S, KERNEL_CACHE_HIT (1/0), TS_INPUT_BYTES, TS_OUTPUT_BYTES and writes
#   $GEN/codegen/{Include,Source}/…  the generated code        $GEN/codegen.log       the generator's output
#   $GEN/tflite_facts.sh / .json     the model's input/output tensors and the generator's layers
#   $BUILD/*.o, link.map, link.log, kernels_used.txt, tinyengine_infer.elf
#   $BUILD/engine_facts.json          engine-specific figures (PEAK_MEM, MODEL_SIZE, buffers, kernels used, …)
# Environment (optional):
#   TS_TINYENGINE_RESHAPE=skip   run the generator exactly as it is: it skips RESHAPE without passing its
#                                input on, so the classifier after AVERAGE_POOL_2D → RESHAPE reads a buffer
#                                nothing wrote. Default `alias`: a RESHAPE's output is its input's buffer
#                                (docs/DEVICE_RUNNER.md).
# Debian packages besides run_export.sh's: python3-flatbuffers (the generator reads the .tflite with it).


# The generator driver: GenerateSourceFilesFromTFlite with TfliteConvertor.parseOperatorInfo wrapped to
# (1) pass a RESHAPE's input on to its readers (unless TS_TINYENGINE_RESHAPE=skip), (2) check that the
# generated code's input is the model's input, and (3) record the layers. Exit 3: the generator refused
# the model ("TINYSCOPE_REFUSED <reason>"); exit 4: it cannot be imported; exit 5: the model is not one
# the harness can drive (non-int8 input/output, several inputs or outputs).
_tinyengine_driver() {
cat <<'EOF'
import json, os, sys, traceback
te, tflite_path, facts_sh, facts_json = sys.argv[1:5]
sys.path.insert(0, te)
try:
    import numpy as np
    from code_generator import TfliteConvertor as tc_mod
    from code_generator.CodegenUtilTFlite import GenerateSourceFilesFromTFlite
    from code_generator.converters.tflite_parser.utils import get_input_tensors, get_output_tensors, getOpCodeStr
    from code_generator.tflite import Model
    from code_generator.tflite.TensorType import TensorType
except Exception as e:
    print("TINYSCOPE_IMPORT %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    sys.exit(4)

def reason(e):
    msg = str(e).splitlines()[0] if str(e) else ""
    if msg:
        return msg if isinstance(e, NotImplementedError) else "%s: %s" % (type(e).__name__, msg)
    tb = traceback.extract_tb(e.__traceback__)[-1]
    return "%s in %s:%d" % (type(e).__name__, os.path.basename(tb.filename), tb.lineno)

try:
    buf = open(tflite_path, "rb").read()
    model = Model.Model.GetRootAsModel(buf, 0)
    graph = model.Subgraphs(0)
except Exception as e:
    print("TINYSCOPE_REFUSED not a TFLite flatbuffer (%s)" % reason(e))
    sys.exit(3)
types = {v: k for k, v in TensorType.__dict__.items() if not k.startswith("_")}
def tensor_info(i):
    t = graph.Tensors(i)
    q = t.Quantization()
    scale = float(q.ScaleAsNumpy()[0]) if q is not None and q.ScaleLength() > 0 else None
    zero = int(q.ZeroPointAsNumpy()[0]) if q is not None and q.ZeroPointLength() > 0 else None
    return {"index": i, "name": t.Name().decode(errors="replace"), "shape": [int(d) for d in t.ShapeAsNumpy()],
            "type": types.get(t.Type(), str(t.Type())).lower(), "scale": scale, "zero_point": zero}
if graph.InputsLength() != 1 or graph.OutputsLength() != 1:
    print("TINYSCOPE_UNFIT the model has %d inputs and %d outputs; the harness drives one of each" % (graph.InputsLength(), graph.OutputsLength()))
    sys.exit(5)
inp, out = tensor_info(graph.Inputs(0)), tensor_info(graph.Outputs(0))
for what, t in (("input", inp), ("output", out)):
    if t["type"] != "int8":
        print("TINYSCOPE_UNFIT the model's %s '%s' is %s; the harness drives int8 models" % (what, t["name"], t["type"]))
        sys.exit(5)

alias = os.environ.get("TS_TINYENGINE_RESHAPE", "alias") != "skip"
record = {"layers": [], "reshape_aliases": []}
original_parse = tc_mod.TfliteConvertor.parseOperatorInfo

def parse_with_reshape(self):
    original_parse(self)
    # RESHAPE is in the generator's SKIP_OPs ("TODO: Handle RESHAPE during codegen"): no layer, and its
    # output tensor is never written. Its bytes are its input's (same elements, same order), so a reader
    # of the output reads the input's buffer instead, as the generator already does for PAD and TRANSPOSE.
    to_input = {}
    for i in range(self.subgraph.OperatorsLength()):
        op = self.subgraph.Operators(i)
        if getOpCodeStr(op, self.model) == "RESHAPE":
            src = get_input_tensors(op, self.model)[0].tensor_idx
            dst = get_output_tensors(op, self.model)[0].tensor_idx
            to_input[str(dst)] = str(src)
    for dst in list(to_input):
        while to_input[dst] in to_input:
            to_input[dst] = to_input[to_input[dst]]
    for n, layer in enumerate(self.layer):
        for t in layer.input_tensors:
            if alias and str(t.graph_idx) in to_input:
                record["reshape_aliases"].append({"layer": n, "op": layer.params["op"], "reads": int(to_input[str(t.graph_idx)]),
                                                  "instead_of": int(t.graph_idx)})
                old = str(t.graph_idx)
                t.graph_idx = to_input[old]
                for key in ("input_idx", "input2_idx"):
                    if str(layer.params.get(key)) == old:
                        layer.params[key] = int(to_input[old])
    first = self.layer[0].input_tensors[0].graph_idx if self.layer and self.layer[0].input_tensors else None
    if str(first) != str(inp["index"]):
        raise RuntimeError("the generated code's first layer reads tensor %s, not the model's input %d" % (first, inp["index"]))
    for n, layer in enumerate(self.layer):
        p = layer.params
        record["layers"].append({"op": p["op"], "inputs": [int(t.graph_idx) for t in layer.input_tensors if str(t.graph_idx).isdigit()],
                                 "output": int(layer.output_tensors[0].graph_idx) if layer.output_tensors else None})
    produced = {str(l["output"]) for l in record["layers"]}
    unwritten = [(n, l["op"], t) for n, l in enumerate(record["layers"]) for t in l["inputs"]
                 if str(t) not in produced and str(t) != str(inp["index"])]
    record["unwritten_inputs"] = [{"layer": n, "op": op, "tensor": t} for n, op, t in unwritten]

tc_mod.TfliteConvertor.parseOperatorInfo = parse_with_reshape
try:
    activation = GenerateSourceFilesFromTFlite(tflite_path)
except Exception as e:
    traceback.print_exc()
    print("TINYSCOPE_REFUSED %s" % reason(e))
    sys.exit(3)

nbytes = lambda t: int(np.prod(t["shape"])) if t["shape"] else 1
if record["layers"] and str(record["layers"][-1]["output"]) != str(out["index"]):
    print("TINYSCOPE_UNFIT the generated code's last layer writes tensor %s, not the model's output %d" % (record["layers"][-1]["output"], out["index"]))
    sys.exit(5)
facts = {"input": inp, "output": out, "input_bytes": nbytes(inp), "output_bytes": nbytes(out),
         "activation_bytes": int(activation), "reshape": "alias" if alias else "skip", **record}
json.dump(facts, open(facts_json, "w"), indent=1)
with open(facts_sh, "w") as f:
    f.write("TS_INPUT_BYTES=%d\nTS_OUTPUT_BYTES=%d\nTS_ACTIVATION_BYTES=%d\n" % (facts["input_bytes"], facts["output_bytes"], int(activation)))
print("TINYSCOPE_ACTIVATION %d" % int(activation))
EOF
}

engine_build() {
  local t0 t1 rc log KEY CACHE ARCHIVE tmp src obj
  [[ -f $TFLITE ]] || die "the model '$TFLITE' is not a file"
  "$PY" -c "import flatbuffers" 2>/dev/null || die "python module 'flatbuffers' missing: install the Debian package python3-flatbuffers"
  command -v arm-none-eabi-nm >/dev/null 2>&1 || die "'arm-none-eabi-nm' not found: install the Debian package binutils-arm-none-eabi"

  # ------------------------------------------------------------------------------------------ codegen
  _tinyengine_driver > "$GEN/tinyengine_tflite_codegen.py"
  t0=$(now)
  set +e
  (cd "$GEN" && PYTHONPATH=$TE MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1 "$PY" "$GEN/tinyengine_tflite_codegen.py" \
      "$TE" "$TFLITE" "$GEN/tflite_facts.sh" "$GEN/tflite_facts.json" >"$GEN/codegen.log" 2>&1)
  rc=$?
  set -e
  t1=$(now)
  # shellcheck disable=SC2034  # read by run_export.sh
  CODEGEN_S=$(elapsed "$t0" "$t1")
  log=$GEN/codegen.log
  case $rc in
    0) ;;
    3) die "TinyEngine's code generator refuses the model: $(sed -n 's/^TINYSCOPE_REFUSED //p' "$log" | tail -n1)" ;;
    4) die "TinyEngine's TFLite code generator cannot be imported: $(sed -n 's/^TINYSCOPE_IMPORT //p' "$log" | tail -n1)" ;;
    5) die "TinyEngine's generated code cannot be run by the harness: $(sed -n 's/^TINYSCOPE_UNFIT //p' "$log" | tail -n1)" ;;
    *) die "TinyEngine's TFLite code generator failed (exit $rc): $(tail -n1 "$log")" ;;
  esac
  [[ -f $GEN/codegen/Source/genModel.c && -f $GEN/codegen/Include/genModel.h && -f $GEN/codegen/Include/genInclude.h ]] \
    || die "TinyEngine's code generator wrote no genModel.c/genModel.h/genInclude.h (see $log)"
  # shellcheck disable=SC1091
  source "$GEN/tflite_facts.sh"

  # ------------------------------------------------------------------------------------------ compile
  local INCS=(-I "$TE/TinyEngine/include" -I "$CMSIS/NN/Include" -I "$CMSIS/DSP/Include" -I "$CMSIS/Core/Include"
              -I "$GEN/codegen/Include" -I "$DEV/mps2-an500" -I "$DEV/harness")
  t0=$(now)
  # TinyEngine's kernels include the generated genInclude.h: the archive is per genInclude.h, keyed (and
  # built, published and shared) exactly as run_export.sh's training path does, so both reuse each other's.
  tinyengine_kernel_archive
  for src in "$GEN"/codegen/Source/*.c; do
    obj=$BUILD/$(basename "${src%.c}").o
    arm-none-eabi-gcc "${CFLAGS_TE[@]}" "${CFLAGS_OURS[@]}" "${INCS[@]}" -w -c "$src" -o "$obj" 2>"$obj.log" \
      || die "compile error in $src: $(grep -m1 'error' "$obj.log")"
  done
  # The working buffer the generated code reserves: genModel.h's `static signed char buffer[PEAK_MEM]`
  # (activations, then the im2col buffer sbuf and the kernel buffer kbuf), as the compiler laid it out.
  TS_ARENA_BYTES=$(arm-none-eabi-nm -S "$BUILD/genModel.o" | awk '$4 == "buffer" && $3 ~ /^[bBdD]$/ { print $2 }')
  [[ -n $TS_ARENA_BYTES ]] || die "the generated genModel.o has no working buffer 'buffer' (see $GEN/codegen/Include/genModel.h)"
  TS_ARENA_BYTES=$((16#$TS_ARENA_BYTES))
  arm-none-eabi-gcc "${CFLAGS_TE[@]}" "${CFLAGS_OURS[@]}" "${INCS[@]}" -Wall -Wextra -Wno-unused-parameter \
    -DTS_INPUT_BYTES="$TS_INPUT_BYTES" -DTS_OUTPUT_BYTES="$TS_OUTPUT_BYTES" -DTS_ARENA_BYTES="$TS_ARENA_BYTES" \
    -c "$DEV/harness/tinyengine_infer_main.c" -o "$BUILD/tinyengine_infer_main.o" 2>"$BUILD/tinyengine_infer_main.log" \
    || die "compile error in tinyengine_infer_main.c: $(grep -m1 error "$BUILD/tinyengine_infer_main.log")"
  compile_startup "${CFLAGS_TE[@]}" "${CFLAGS_OURS[@]}"
  ELF=$BUILD/tinyengine_infer.elf
  link_tinyengine_program "$ELF"
  t1=$(now)
  # shellcheck disable=SC2034  # read by run_export.sh
  COMPILE_S=$(elapsed "$t0" "$t1")

  # ------------------------------------------------------------------------------------------ facts
  arm-none-eabi-size -A "$ELF" > "$BUILD/size.txt"
  arm-none-eabi-nm -S --size-sort "$ELF" > "$BUILD/symbols.txt"
  "$PY" - "$GEN" "$BUILD" "$KEY" "$KERNEL_CACHE_HIT" "$TS_ARENA_BYTES" > "$BUILD/engine_facts.json" <<'EOF' \
    || die "cannot summarise the TinyEngine build (see $BUILD)"
import json, os, re, sys
gen, build, key, hit, arena = sys.argv[1:6]
header = open(f"{gen}/codegen/Include/genModel.h").read(200000)
define = lambda name: int(re.search(r"#define %s (\d+)" % name, header).group(1))
const = lambda name: int(re.search(r"const int %s = (\d+);" % name, header).group(1))
facts = json.load(open(f"{gen}/tflite_facts.json"))
text = open(f"{build}/link.map").read().split("Discarded input sections")[0]
used = sorted(set(re.findall(r"libtinyengine_kernels\.a\(([^)]+)\.o\)", text)))
kernels = [u.replace("__", "/") + ".c" for u in used]
open(f"{build}/kernels_used.txt", "w").write("\n".join(kernels) + "\n")
# What else the program keeps in RAM (mps2-an500's RAM starts at 0x20000000; link.ld), largest first.
ram_other = {}
for line in open(f"{build}/symbols.txt"):
    parts = line.split()
    if len(parts) == 4 and int(parts[0], 16) >= 0x20000000 and parts[3] != "buffer":
        ram_other[parts[3]] = int(parts[1], 16)
layers = facts["layers"]
ops = {}
for l in layers:
    ops[l["op"]] = ops.get(l["op"], 0) + 1
src = sorted(os.listdir(f"{gen}/codegen/Source")) + sorted(os.listdir(f"{gen}/codegen/Include"))
out = {
    "engine": "tinyengine",
    "generator": "code_generator.CodegenUtilTFlite.GenerateSourceFilesFromTFlite",
    "entry": "invoke(NULL)",
    "input": facts["input"], "output": facts["output"],
    "input_bytes": facts["input_bytes"], "output_bytes": facts["output_bytes"],
    "input_layout": "NHWC int8, as the .tflite input (TinyEngine's kernels read HWC)",
    "peak_mem_bytes": define("PEAK_MEM"),
    "model_size_bytes": define("MODEL_SIZE"),
    "activation_bytes": facts["activation_bytes"],
    "im2col_bytes": const("SBuffer_size"),
    "kernel_buffer_bytes": const("KBuffer_size"),
    "arena_bytes": int(arena),
    "arena_is": "genModel.h's static signed char buffer[PEAK_MEM]: activations + im2col (sbuf) + kernel buffer (kbuf)",
    "layers": len(layers), "layer_ops": ops,
    "reshape": facts["reshape"], "reshape_aliases": facts["reshape_aliases"],
    "unwritten_inputs": facts.get("unwritten_inputs", []),
    "generated_files": len(src),
    "kernel_archive_key": key, "kernel_archive_reused": hit == "1",
    "kernels_used": kernels,
    "largest_other_ram_symbols": dict(sorted(ram_other.items(), key=lambda kv: -kv[1])[:12]),
}
print(json.dumps(out, indent=1))
EOF
}
