#!/usr/bin/env bash
# Device in the loop, by hand: run TinyEngine's training code generator on an export folder, compile the
# generated C and TinyEngine's kernels for Cortex-M7 with TinyEngine's own flags, link with the project's
# startup code and linker script for QEMU's mps2-an500, and run the project's harness under QEMU
# (semihosting, -icount shift=0, instruction counts from the project's QEMU plugin).
#
# Usage: resources/device/run_export.sh EXPORT_DIR WORKDIR
#        resources/device/run_export.sh --tflite MODEL.tflite --engine ENGINE WORKDIR
#        resources/device/run_export.sh --run-elf ELF WORKDIR   (only the last stage: ELF on the board, confined)
#   --tflite: an int8 .tflite model run for inference by ENGINE: tflm (TensorFlow Lite Micro with CMSIS-NN's
#   kernels), tflm-reference (TFLM's reference kernels) or tinyengine (TinyEngine's TFLite code generator
#   and kernels); the engine's build stage is resources/device/engines/ENGINE.sh (tflm.sh serves both TFLM
#   engines). TS_INPUTS (required) holds the inputs back to back in the model's input layout.
#   (run by core/device/DeviceRunner for `tinyscope device-run`; bench/device/run_tinyengine_export.sh wraps it)
#   EXPORT_DIR holds exactly one <name>-graph.json, one params pickle (*.pkl) and one scale.json (or <name>-scale.json).
#   WORKDIR    is created if needed; everything is written below it (see docs/DEVICE_RUNNER.md).
# QEMU runs under a Landlock ruleset (resources/device/sandbox/landlock_exec.c): through semihosting the
# emulated program can create, write or remove files only in WORKDIR/run, and read nothing of the host
# but that folder, its ELF and the system's programs and libraries (/usr). A kernel without Landlock
# stops the run, unless TINYSCOPE_DEVICE_SANDBOX=off says to run unconfined (docs/DEVICE_RUNNER.md).
# Environment (all optional):
#   TINYSCOPE_SHARED        the shared reference folder (default: <repo>/../shared)
#   TS_INPUTS               a file of N int8 images (default: two synthetic images, see the docs)
#   TS_LABELS               a file of K label bytes, one training step each (default: one byte, 3)
#   TS_QEMU_TIMEOUT         seconds before QEMU is killed and the run reported as a hang (default 900)
#   TS_KERNEL_CACHE         folder for compiled kernel archives keyed by genInclude.h, and the QEMU plugin
#                           (default WORKDIR/kernel-cache). Runs at the same time may share it: what they
#                           build there is built under a private name and published by one rename, under a
#                           flock on a lock file next to it (docs/DEVICE_RUNNER.md, "Concurrent runs").
# Debian packages: gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gcc python3-numpy
#                  python3-matplotlib python3-tqdm (TinyEngine's generator imports all three).
set -euo pipefail

die() { echo "device-run: $*" >&2; exit 2; }

RUN_ELF=""
TFLITE=""
ENGINE=""
if [[ ${1:-} == --tflite ]]; then
  [[ $# -eq 5 && $3 == --engine ]] || die "usage: $0 --tflite MODEL.tflite --engine tflm|tflm-reference|tinyengine WORKDIR"
  [[ -f $2 ]] || die "model '$2' does not exist"
  TFLITE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  ENGINE=$4
  case $ENGINE in tflm | tflm-reference | tinyengine) ;; *) die "unknown engine '$ENGINE' (tflm, tflm-reference, tinyengine)" ;; esac
  [[ -n ${TS_INPUTS:-} && -f ${TS_INPUTS:-} ]] || die "--tflite needs TS_INPUTS, a file of inputs"
  shift 3   # leaves WORKDIR in $2, as the other forms
elif [[ ${1:-} == --run-elf ]]; then
  [[ $# -eq 3 ]] || die "usage: $0 --run-elf ELF WORKDIR"
  [[ -f $2 ]] || die "ELF '$2' does not exist"
  RUN_ELF=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  shift
else
  [[ $# -eq 2 ]] || die "usage: $0 EXPORT_DIR WORKDIR"
  EXPORT_DIR=$(cd "$1" 2>/dev/null && pwd) || die "export folder '$1' does not exist"
fi
mkdir -p "$2" || die "cannot create work folder '$2'"
WORK=$(cd "$2" && pwd)

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)   # resources/device/ -> the repository
SHARED=${TINYSCOPE_SHARED:-$REPO/../shared}
RT=$SHARED/reference/runtimes
TE=$RT/tinyengine
CMSIS=$RT/cmsis/CMSIS
DEV=$REPO/resources/device
PY=/usr/bin/python3
[[ -d $TE/code_generator && -d $TE/TinyEngine/src/kernels ]] || die "TinyEngine not found under '$RT' (set TINYSCOPE_SHARED)"
[[ -d $CMSIS/NN/Include ]] || die "CMSIS headers not found under '$RT/cmsis'"

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found: install the Debian package $2"; }
need arm-none-eabi-gcc gcc-arm-none-eabi
need arm-none-eabi-size binutils-arm-none-eabi
need qemu-system-arm qemu-system-arm
need gcc gcc
need "$PY" python3
need flock util-linux
[[ -f $(arm-none-eabi-gcc -print-file-name=rdimon.specs) ]] || die "newlib's rdimon.specs not found: install the Debian package libnewlib-arm-none-eabi"
PY_MODULES=()   # what the code generator of this job imports
if [[ -n $TFLITE ]]; then
  [[ $ENGINE != tinyengine ]] || PY_MODULES=(numpy:python3-numpy flatbuffers:python3-flatbuffers)
elif [[ -z $RUN_ELF ]]; then
  PY_MODULES=(numpy:python3-numpy matplotlib:python3-matplotlib tqdm:python3-tqdm)
fi
for mod in "${PY_MODULES[@]}"; do
  "$PY" -c "import ${mod%%:*}" 2>/dev/null || die "python module '${mod%%:*}' missing: install the Debian package ${mod##*:}"
done

now() { date +%s.%N; }
# A failed link, in one line: a program larger than the emulated board's memory says by how much.
die_link() { # LINK_LOG
  local over
  over=$(grep -m1 -oE "region .(CODE|RAM). overflowed by [0-9]+ bytes" "$1" || true)
  if [[ $over == *CODE* ]]; then
    die "the program does not fit the emulated board's 4 MB of flash (mps2-an500): ${over#region }"
  elif [[ $over == *RAM* ]]; then
    die "the program's static data do not fit the emulated board's 4 MB of RAM (mps2-an500): ${over#region }"
  fi
  die "link error: $(grep -m1 -E 'error|undefined|overflow' "$1")"
}
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# The cache is shared by every run of this user (tinyscope device-run's default) and runs may be
# concurrent. Readers take an entry only once it is complete: an archive or plugin is built under a
# private name and appears by one rename(2) (mv -T / mv -f within the folder). Builders of the same
# entry take turns on a flock of ENTRY.lock (released by the kernel however the holder ends, even
# SIGKILL), so the second run waits, finds the first one's entry and reuses it instead of compiling
# it again; it then re-checks under the lock. Lock files stay (removing one would let two holders in).
CACHE_ROOT=${TS_KERNEL_CACHE:-$WORK/kernel-cache}
mkdir -p "$CACHE_ROOT" || die "cannot create the kernel cache folder '$CACHE_ROOT'"
LOCK_WAIT=${TS_QEMU_TIMEOUT:-900}
lock_entry() { # LOCKFILE WHAT: opens LOCKFILE on fd $LOCK_FD and waits for its exclusive lock
  exec {LOCK_FD}>"$1" || die "cannot open the lock file '$1'"
  flock -w "$LOCK_WAIT" "$LOCK_FD" || die "waited $LOCK_WAIT s for another run building $2 (lock file '$1')"
}
unlock_entry() { exec {LOCK_FD}>&-; }

# A host program or plugin built from one of our C files, keyed by its source and the host compiler
# (two checkouts sharing the cache never replace each other's), built and published like the kernel
# archive. Prints its path.
host_tool() { # SOURCE NAME SUFFIX WHAT GCC_FLAGS...
  local src=$1 name=$2 suffix=$3 what=$4 key out tmp
  shift 4
  key=$( (cat "$src"; gcc --version | head -n1; echo "$*") | sha256sum | cut -c1-16)
  out=$CACHE_ROOT/$name-$key$suffix
  if [[ ! -f $out ]]; then
    lock_entry "$out.lock" "$what"
    if [[ ! -f $out ]]; then
      rm -f "$out".tmp.*
      tmp=$(mktemp "$out.tmp.XXXXXX")
      gcc "$@" -o "$tmp" "$src" >&2 || { rm -f "$tmp"; die "cannot build $what"; }
      sync "$tmp" 2>/dev/null || true
      mv -f "$tmp" "$out" || { rm -f "$tmp"; die "cannot publish $what as '$out'"; }
    fi
    unlock_entry
  fi
  echo "$out"
}

# One folder entry of the cache holding FILE (a compiled archive), built by the function BUILDER into a
# private folder ENTRY.tmp.XXXXXX and published by one rename (mv -T). Sets ENTRY_HIT: 1 when the entry
# was there (or another run published it while we waited for the lock), 0 when this run built it.
cached_folder() { # ENTRY FILE WHAT BUILDER
  local entry=$1 file=$2 what=$3 builder=$4 tmp
  ENTRY_HIT=1
  [[ ! -f $entry/$file ]] || return 0
  lock_entry "$entry.lock" "$what"
  if [[ ! -f $entry/$file ]]; then   # not published while we waited: we build it
    ENTRY_HIT=0
    # Leftovers of a run killed while it held this lock (only a holder writes them, and we hold it).
    rm -rf "$entry" "$entry".tmp.*
    tmp=$(mktemp -d "$entry.tmp.XXXXXX")
    "$builder" "$tmp"
    sync "$tmp/$file" 2>/dev/null || true   # on disk before its name is
    mv -T "$tmp" "$entry" || { rm -rf "$tmp"; die "cannot publish $what as '$entry'"; }
  fi
  unlock_entry
}

# TinyEngine's tutorial flags (both TinyEngine paths: the training export and the TFLite inference code).
CFLAGS_TE=(-mcpu=cortex-m7 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard -std=c11 -Ofast -DSTM32F746xx)
CFLAGS_OURS=(-ffunction-sections -fdata-sections)

build_tinyengine_kernels() { # DIR: TinyEngine's kernels compiled against $GEN's genInclude.h, archived in DIR
  local tmp=$1 src obj
  (cd "$TE/TinyEngine/src/kernels" && find . -name '*.c' | sort) > "$tmp/sources.txt"
  while read -r src; do
    obj=$tmp/$(echo "${src#./}" | sed 's|/|__|g; s|\.c$|.o|')
    echo "$TE/TinyEngine/src/kernels/${src#./} $obj"
  done < "$tmp/sources.txt" > "$tmp/jobs.txt"
  # shellcheck disable=SC2016
  TE="$TE" CMSIS="$CMSIS" GEN="$GEN" FLAGS="${CFLAGS_TE[*]} ${CFLAGS_OURS[*]}" xargs -P 2 -L 1 bash -c \
    'read -r -a flags <<< "$FLAGS"
     arm-none-eabi-gcc "${flags[@]}" -w -I "$TE/TinyEngine/include" -I "$CMSIS/NN/Include" -I "$CMSIS/DSP/Include" \
       -I "$CMSIS/Core/Include" -I "$GEN/codegen/Include" -c "$0" -o "$1" 2>"$1.log" || { echo "compile error in $0: $(grep -m1 error "$1.log")" >&2; exit 255; }' \
    < "$tmp/jobs.txt" || die "a TinyEngine kernel failed to compile (see above)"
  arm-none-eabi-ar rcs "$tmp/libtinyengine_kernels.a" "$tmp"/*.o || die "cannot archive the TinyEngine kernels in '$tmp'"
  rm -f "$tmp"/*.o "$tmp"/*.log "$tmp/jobs.txt"
}

# startup.c (vector table, reset handler, stack painting) with the program's architecture flags, into
# $BUILD/startup.o: every program on the board links it.
compile_startup() { # FLAGS...
  arm-none-eabi-gcc "$@" -std=c11 -Wall -Wextra -I "$DEV/mps2-an500" -c "$DEV/mps2-an500/startup.c" -o "$BUILD/startup.o" \
    2>"$BUILD/startup.log" || die "compile error in startup.c: $(grep -m1 error "$BUILD/startup.log")"
}

# A TinyEngine program (either path): every object in $BUILD and the kernel archive, linked with
# TinyEngine's flags, link.ld and newlib's semihosting into ELF (map: $BUILD/link.map).
link_tinyengine_program() { # ELF
  arm-none-eabi-gcc "${CFLAGS_TE[@]}" --specs=rdimon.specs -nostartfiles -T "$DEV/mps2-an500/link.ld" \
    -Wl,--gc-sections -Wl,-Map="$BUILD/link.map" -o "$1" "$BUILD"/*.o "$ARCHIVE" -lm 2>"$BUILD/link.log" \
    || die_link "$BUILD/link.log"
}

# TinyEngine's kernels include the generated genInclude.h, so their objects are per model; an archive
# built for the same genInclude.h (and the same flags and compiler) is reused, by either TinyEngine path.
# Sets KEY, ARCHIVE and KERNEL_CACHE_HIT.
tinyengine_kernel_archive() {
  KEY=$( (cat "$GEN/codegen/Include/genInclude.h"; echo "${CFLAGS_TE[*]} ${CFLAGS_OURS[*]}"; arm-none-eabi-gcc --version | head -n1) | sha256sum | cut -c1-16)
  ARCHIVE=$CACHE_ROOT/$KEY/libtinyengine_kernels.a
  cached_folder "$CACHE_ROOT/$KEY" libtinyengine_kernels.a "the kernel archive $KEY" build_tinyengine_kernels
  KERNEL_CACHE_HIT=$ENTRY_HIT
}

ELF=$RUN_ELF
if [[ -n $TFLITE ]]; then   # a .tflite model: the engine's build stage, then the plugin
  BUILD=$WORK/build
  GEN=$WORK/gen
  rm -rf "$BUILD" "$GEN" && mkdir -p "$BUILD" "$GEN"
  ENGINE_FILE=$DEV/engines/${ENGINE%-reference}.sh
  [[ -f $ENGINE_FILE ]] || die "the $ENGINE engine's build stage '$ENGINE_FILE' is missing"
  # shellcheck disable=SC1090
  source "$ENGINE_FILE"
  engine_build
  [[ -f $ELF ]] || die "the $ENGINE build stage produced no program"
elif [[ -z $RUN_ELF ]]; then   # the export's codegen, compile and plugin
one() { # one FILE matching a glob in EXPORT_DIR, or a one-line error
  local matches=("$EXPORT_DIR"/$1)
  [[ -e ${matches[0]} ]] || die "no $1 in '$EXPORT_DIR'"
  [[ ${#matches[@]} -eq 1 ]] || die "more than one $1 in '$EXPORT_DIR'"
  echo "${matches[0]}"
}
GRAPH=$(one '*-graph.json')
PARAMS=$(one '*.pkl')
SCALE=$(one '*scale.json')


# ---------------------------------------------------------------------------------------------- codegen
GEN=$WORK/gen
rm -rf "$GEN" && mkdir -p "$GEN"
t0=$(now)
(cd "$GEN" && PYTHONPATH=$TE MPLBACKEND=Agg "$PY" "$TE/examples/tiny_training.py" \
    -f "$GRAPH" -D "$PARAMS" -QAS "$SCALE" -m -g -d -FR >codegen.log 2>&1) \
  || die "TinyEngine's code generator failed on '$GRAPH': $(grep -m1 -E 'Error|error' "$GEN/codegen.log" || tail -n1 "$GEN/codegen.log")"
t1=$(now)
CODEGEN_S=$(elapsed "$t0" "$t1")
[[ -f $GEN/codegen/Source/genModel.c && -f $GEN/codegen/Include/genModel.h ]] || die "code generator wrote no genModel.c/.h (see $GEN/codegen.log)"

# Input size and class count from the graph JSON; the updated-parameter table from genModel.h.
"$PY" - "$GRAPH" "$GEN/codegen/Include/genModel.h" "$GEN/graph_facts.sh" "$GEN/tinyscope_params.c" <<'EOF'
import json, re, sys
graph_path, header_path, facts_path, table_path = sys.argv[1:5]
ops = json.load(open(graph_path))
shapes = {}
for op in ops:
    for t in op["inputs"]:
        if t["var_type"] == "parameter":
            shapes[t["name"]] = (t["shape"], t["dtype"])
if "input" not in shapes or "label" not in shapes:
    sys.exit(f"{graph_path}: no 'input' or 'label' parameter")
in_shape, in_dtype = shapes["input"]
if in_dtype != "int8":
    sys.exit(f"{graph_path}: input dtype {in_dtype}, expected int8")
n = 1
for d in in_shape:
    n *= d
classes = shapes["label"][0][-1]
open(facts_path, "w").write(f"TS_INPUT_BYTES={n}\nTS_NUM_CLASSES={classes}\nTS_INPUT_SHAPE='{in_shape}'\n")
text = open(header_path).read()
sizes = {m.group(2): (m.group(1), int(m.group(3))) for m in
         re.finditer(r"^(?:const\s+)?(int32_t|unsigned char|signed char|float)\s+(\w+)\[(\d+)\]\s*=", text, re.M)}
rows = []
for m in re.finditer(r"^(int32_t|unsigned char|signed char|float)\*\s*(v\w+)=(\w+);", text, re.M):
    ctype, name, array = m.groups()
    if array not in sizes:
        sys.exit(f"{header_path}: parameter pointer {name} refers to {array}, whose size is not declared")
    atype, count = sizes[array]
    dtype = {"int32_t": "int32", "unsigned char": "int8", "signed char": "int8", "float": "float32"}[atype]
    elem = {"int32": 4, "int8": 1, "float32": 4}[dtype]
    rows.append((name, array, atype, dtype, count * elem))
with open(table_path, "w") as f:
    f.write("/* Generated by resources/device/run_export.sh from genModel.h: the arrays a training step updates. */\n")
    f.write("#include <stdint.h>\n#include \"tinyscope_harness.h\"\n")
    for name, array, atype, dtype, nbytes in rows:
        f.write(f"extern {atype} {array}[];\n")
    f.write("const tinyscope_param tinyscope_params[] = {\n")
    for name, array, atype, dtype, nbytes in rows:
        f.write(f'    {{"{name}", "{array}", "{dtype}", {array}, {nbytes}u}},\n')
    if not rows:
        f.write('    {"", "", "", 0, 0u},\n')
    f.write("};\n")
    f.write(f"const uint32_t tinyscope_param_count = {len(rows)}u;\n")
EOF
# shellcheck disable=SC1091
source "$GEN/graph_facts.sh"

# ---------------------------------------------------------------------------------------------- compile
INCS=(-I "$TE/TinyEngine/include" -I "$CMSIS/NN/Include" -I "$CMSIS/DSP/Include" -I "$CMSIS/Core/Include"
      -I "$GEN/codegen/Include" -I "$DEV/mps2-an500" -I "$DEV/harness")
BUILD=$WORK/build
rm -rf "$BUILD" && mkdir -p "$BUILD"
compile() { # SRC OBJ
  arm-none-eabi-gcc "${CFLAGS_TE[@]}" "${CFLAGS_OURS[@]}" "${INCS[@]}" -w -c "$1" -o "$2" 2>"$2.log" \
    || die "compile error in $1: $(grep -m1 'error' "$2.log")"
}


t0=$(now)
tinyengine_kernel_archive
for src in "$GEN"/codegen/Source/*.c; do compile "$src" "$BUILD/$(basename "${src%.c}").o"; done
compile "$GEN/tinyscope_params.c" "$BUILD/tinyscope_params.o"
arm-none-eabi-gcc "${CFLAGS_TE[@]}" "${CFLAGS_OURS[@]}" "${INCS[@]}" -Wall -Wextra -Wno-unused-parameter \
  -DTS_INPUT_BYTES="$TS_INPUT_BYTES" -DTS_NUM_CLASSES="$TS_NUM_CLASSES" \
  -c "$DEV/harness/harness_main.c" -o "$BUILD/harness_main.o" 2>"$BUILD/harness_main.log" \
  || die "compile error in harness_main.c: $(grep -m1 error "$BUILD/harness_main.log")"
compile_startup "${CFLAGS_TE[@]}" "${CFLAGS_OURS[@]}"
ELF=$BUILD/tinyengine_export.elf
link_tinyengine_program "$ELF"
t1=$(now)
COMPILE_S=$(elapsed "$t0" "$t1")
# The kernel files the linker took from the archive = the kernels this model needs.
"$PY" - "$BUILD/link.map" > "$BUILD/kernels_used.txt" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().split("Discarded input sections")[0]
used = sorted(set(re.findall(r"libtinyengine_kernels\.a\(([^)]+)\.o\)", text)))
print("\n".join(u.replace("__", "/") + ".c" for u in used))
EOF

# ---------------------------------------------------------------------------------------------- plugin
fi   # the export's codegen and compile
if [[ -z $RUN_ELF ]]; then
  PLUGIN=$(host_tool "$DEV/qemu-plugin/insn_marks.c" insn_marks .so "the QEMU plugin" -shared -fPIC -O2)
  MARK=$(arm-none-eabi-nm "$ELF" | awk '$3 == "tinyscope_mark" { print $1 }')
  [[ -n $MARK ]] || die "tinyscope_mark not found in $ELF"
fi

# ---------------------------------------------------------------------------------------------- run
RUN=$WORK/run
rm -rf "$RUN" && mkdir -p "$RUN"
if [[ -n ${TS_INPUTS:-} ]]; then
  cp "$TS_INPUTS" "$RUN/inputs.bin"
elif [[ -z $RUN_ELF ]]; then
  # Image 0: bytes of a 32-bit LCG (x = 1664525 x + 1013904223 mod 2^32, x0 = 1; each byte = x >> 24).
  # Image 1: all zeros.
  "$PY" - "$RUN/inputs.bin" "$TS_INPUT_BYTES" <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
x, out = 1, bytearray()
for _ in range(n):
    x = (1664525 * x + 1013904223) & 0xFFFFFFFF
    out.append(x >> 24)
open(path, "wb").write(bytes(out) + bytes(n))
EOF
fi
if [[ -n $TFLITE ]]; then :; elif [[ -n ${TS_LABELS:-} ]]; then cp "$TS_LABELS" "$RUN/labels.bin"; elif [[ -z $RUN_ELF ]]; then printf '\x03' > "$RUN/labels.bin"; fi

# The emulated program reaches the host only through semihosting, relative to QEMU's working folder
# $RUN; the Landlock ruleset lets QEMU (and so the program) write only there, and read only there,
# its ELF, the plugin and the system's programs and libraries.
QEMU=$(command -v qemu-system-arm)
CONFINE=()
if [[ ${TINYSCOPE_DEVICE_SANDBOX:-on} != off ]]; then
  LANDLOCK=$(host_tool "$DEV/sandbox/landlock_exec.c" landlock_exec "" "the sandbox launcher" -O2 -Wall)
  CONFINE=("$LANDLOCK" --rw "$RUN" --rx /usr --ro "$ELF")
  for d in /lib /lib64 /lib32 /libx32; do if [[ -e $d ]]; then CONFINE+=(--rx "$d"); fi; done
  if [[ -e /etc/ld.so.cache ]]; then CONFINE+=(--ro /etc/ld.so.cache); fi
  if [[ ${QEMU#/usr/} == "$QEMU" ]]; then CONFINE+=(--rx "$QEMU"); fi
  if [[ -z $RUN_ELF ]]; then CONFINE+=(--ro "$PLUGIN"); fi
  CONFINE+=(--)
fi
QEMU_ARGS=(-machine mps2-an500 -nographic -semihosting -icount shift=0)
if [[ -z $RUN_ELF ]]; then QEMU_ARGS+=(-plugin "$PLUGIN,mark=0x$MARK,out=$RUN/insns.txt"); fi

t0=$(now)
set +e
(cd "$RUN" && timeout "${TS_QEMU_TIMEOUT:-900}" "${CONFINE[@]}" "$QEMU" "${QEMU_ARGS[@]}" -kernel "$ELF" >qemu.log 2>&1)
rc=$?
set -e
t1=$(now)
EMULATION_S=$(elapsed "$t0" "$t1")
[[ $rc -ne 124 ]] || die "QEMU did not finish within ${TS_QEMU_TIMEOUT:-900} s (hang); last output: $(tail -n1 "$RUN/qemu.log")"
[[ $rc -ne 125 ]] || die "$(grep -m1 '^landlock_exec: ' "$RUN/qemu.log" || tail -n1 "$RUN/qemu.log") (TINYSCOPE_DEVICE_SANDBOX=off runs it unconfined; docs/DEVICE_RUNNER.md)"
if [[ $rc -ne 0 && -n $TFLITE ]] && grep -q '^tinyscope-harness: error' "$RUN/qemu.log"; then
  # The runtime refused the model: the harness's line, after the runtime's own last message if it printed one.
  HARNESS_SAYS=$(grep -m1 '^tinyscope-harness: error: ' "$RUN/qemu.log" | cut -c27-)
  RUNTIME_SAYS=$(grep -v '^tinyscope-harness' "$RUN/qemu.log" | grep -v '^[[:space:]]*$' | tail -n1 | cut -c1-300 || true)
  die "$ENGINE on the emulated board: ${RUNTIME_SAYS:+$RUNTIME_SAYS; }$HARNESS_SAYS"
fi
[[ $rc -eq 0 ]] || die "the program on the emulated board failed (exit $rc): $(tail -n1 "$RUN/qemu.log")"
if [[ -n $RUN_ELF ]]; then
  echo "{\"emulation_s\": $EMULATION_S}"
  exit 0
fi

# ---------------------------------------------------------------------------------------------- summary
arm-none-eabi-size -A "$ELF" > "$BUILD/size.txt"
if [[ -n $TFLITE ]]; then
"$PY" - "$RUN" "$BUILD" "$CODEGEN_S" "$COMPILE_S" "$EMULATION_S" "$KERNEL_CACHE_HIT" "$TFLITE" "$ENGINE" <<'EOF' | tee "$WORK/summary.json"
import json, re, sys
run, build, codegen_s, compile_s, emulation_s, cache_hit, model, engine = sys.argv[1:9]
rep = {}
for line in open(f"{run}/device_report.txt"):
    parts = line.split()
    if len(parts) == 2:
        rep[parts[0]] = int(parts[1])
facts = json.load(open(f"{build}/engine_facts.json"))
marks = [int(l.split()[2]) for l in open(f"{run}/insns.txt") if l.startswith("mark")]
first, images = rep.get("marks_inference_first", 0), rep["images"]
if len(marks) < first + 2 * images:
    sys.exit(f"device-run: the plugin recorded {len(marks)} marks, expected {first + 2 * images}")
sizes = {}
for line in open(f"{build}/size.txt"):
    m = re.match(r"^(\.\w+)\s+(\d+)\s+(\d+)", line)
    if m and m.group(1) in (".text", ".rodata", ".tinyscope_model", ".data", ".bss", ".ARM.exidx", ".ARM.extab"):
        sizes[m.group(1)] = int(m.group(2))
out_bytes = rep["output_bytes"]
raw = open(f"{run}/outputs.bin", "rb").read()
if len(raw) != images * out_bytes:
    sys.exit(f"device-run: outputs.bin holds {len(raw)} bytes, expected {images} x {out_bytes}")
outputs = [[v - 256 if v > 127 else v for v in raw[i * out_bytes:(i + 1) * out_bytes]] for i in range(images)]
# A static arena array (TFLM's) counts in SRAM by the part the interpreter uses; TinyEngine's buffers are
# static arrays of exactly their size, so its .bss already holds them.
arena_array = facts.get("arena_array_bytes", 0)
arena = rep.get("arena_used_bytes", rep.get("arena_bytes", 0))
static = sizes.get(".data", 0) + sizes.get(".bss", 0) - arena_array
stack = rep["stack_high_water_inference"]
print(json.dumps({
    "model": model, "engine": engine,
    "codegen_s": float(codegen_s), "compile_link_s": float(compile_s), "emulation_s": float(emulation_s),
    "kernel_archive_reused": cache_hit == "1",
    "images": images, "input_bytes": rep["input_bytes"], "output_bytes": out_bytes,
    "instructions_per_inference": [marks[first + 2 * i + 1] - marks[first + 2 * i] for i in range(images)],
    "arena_bytes": arena,
    "static_sram_bytes": static,
    "stack_high_water_inference": stack,
    "sram_bytes": static + (arena if arena_array else 0) + stack,
    "sections": sizes,
    "flash_bytes": sizes.get(".text", 0) + sizes.get(".rodata", 0) + sizes.get(".tinyscope_model", 0) + sizes.get(".data", 0)
                   + sizes.get(".ARM.exidx", 0) + sizes.get(".ARM.extab", 0),
    "engine_facts": facts,
    "outputs": outputs,
}, indent=1))
EOF
exit "${PIPESTATUS[0]}"
fi
"$PY" - "$RUN" "$BUILD" "$CODEGEN_S" "$COMPILE_S" "$EMULATION_S" "$KERNEL_CACHE_HIT" "$GRAPH" <<'EOF' | tee "$WORK/summary.json"
import json, re, sys
run, build, codegen_s, compile_s, emulation_s, cache_hit, graph = sys.argv[1:8]
rep = {}
params = []
for line in open(f"{run}/device_report.txt"):
    parts = line.split()
    if parts[0] == "param":
        params.append({"name": parts[1], "array": parts[2], "dtype": parts[3], "bytes": int(parts[4])})
    else:
        rep[parts[0]] = int(parts[1])
marks = [int(l.split()[2]) for l in open(f"{run}/insns.txt") if l.startswith("mark")]
total = [int(l.split()[1]) for l in open(f"{run}/insns.txt") if l.startswith("total")][0]
pairs = lambda first, count: [marks[first + 2 * i + 1] - marks[first + 2 * i] for i in range(count)]
images, steps = rep["images"], rep["steps"]
sizes = {}
for line in open(f"{build}/size.txt"):
    m = re.match(r"^(\.\w+)\s+(\d+)\s+(\d+)", line)
    if m and m.group(1) in (".text", ".rodata", ".data", ".bss", ".ARM.exidx", ".ARM.extab"):
        sizes[m.group(1)] = int(m.group(2))
# Section bytes per owner, from the link map: what the generated code and TinyEngine's kernels take,
# apart from the harness, the startup code and newlib.
def owner(path):
    if "libtinyengine_kernels.a" in path: return "tinyengine_kernels"
    if path.endswith(("harness_main.o", "startup.o", "tinyscope_params.o")): return "harness"
    if "/build/" in path and path.endswith(".o"): return "generated"
    return "newlib_libgcc"
by_owner = {}
lines = open(f"{build}/link.map").read().split("Linker script and memory map")[1].splitlines()
pending = None
for line in lines:
    m = re.match(r"^ (\.(?:text|rodata|data|bss)[\w.$]*|COMMON)\s*$", line)
    if m:
        pending = m.group(1); continue
    m = re.match(r"^ (\.(?:text|rodata|data|bss)[\w.$]*|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+\.(?:o|a\(.*\)))\s*$", line)
    if m and (m.group(1) or pending):
        name = m.group(1) or pending
        kind = "bss" if name.startswith(".bss") or name == "COMMON" else name.split(".")[1]
        key = owner(m.group(4))
        by_owner.setdefault(key, {}).setdefault(kind, 0)
        by_owner[key][kind] += int(m.group(3), 16)
    pending = None
logits = list(open(f"{run}/logits.bin", "rb").read())
logits = [[v - 256 if v > 127 else v for v in logits[i * rep["num_classes"]:(i + 1) * rep["num_classes"]]] for i in range(images)]
out = {
    "graph": graph,
    "codegen_s": float(codegen_s), "compile_link_s": float(compile_s), "emulation_s": float(emulation_s),
    "kernel_archive_reused": cache_hit == "1",
    "kernels_used": open(f"{build}/kernels_used.txt").read().split(),
    "images": images, "steps": steps,
    "instructions_per_inference": pairs(rep["marks_inference_first"], images),
    "instructions_per_step": pairs(rep["marks_training_first"], steps),
    "instructions_total_run": total,
    "stack_high_water_inference": rep["stack_high_water_inference"],
    "stack_high_water_training": rep["stack_high_water_training"],
    "sections": sizes,
    "sram_static_bytes": sizes.get(".data", 0) + sizes.get(".bss", 0),
    "flash_bytes": sizes.get(".text", 0) + sizes.get(".rodata", 0) + sizes.get(".data", 0)
                   + sizes.get(".ARM.exidx", 0) + sizes.get(".ARM.extab", 0),
    "section_bytes_by_owner": by_owner,
    "logits": logits,
    "updated_params": params,
}
before, after = open(f"{run}/params_before.bin", "rb").read(), open(f"{run}/params_after.bin", "rb").read()
off = 0
for p in params:
    n = p["bytes"]
    if p["dtype"] == "int8":
        b = [v - 256 if v > 127 else v for v in before[off:off + n]]
        a = [v - 256 if v > 127 else v for v in after[off:off + n]]
        p["changed"] = sum(x != y for x, y in zip(a, b))
        # |delta| >= 128 cannot come from an in-range int8 update: the kernel's float->int8 store wrapped.
        p["wrapped_at_least"] = sum(abs(x - y) >= 128 for x, y in zip(a, b))
    else:
        b = [int.from_bytes(before[off + i:off + i + 4], "little", signed=True) for i in range(0, n, 4)]
        a = [int.from_bytes(after[off + i:off + i + 4], "little", signed=True) for i in range(0, n, 4)]
        p["changed"] = sum(x != y for x, y in zip(a, b))
    p["max_abs_change"] = max((abs(x - y) for x, y in zip(a, b)), default=0)
    off += n
print(json.dumps(out, indent=1))
EOF
