# TensorFlow Lite Micro on the emulated Cortex-M7: the `tflm` (CMSIS-NN kernels) and `tflm-reference`
# (TFLM's portable reference kernels) engines of `run_export.sh --tflite FILE --engine ENGINE WORKDIR`.
# Sourced by run_export.sh, which sets TFLITE, WORK, BUILD, CACHE_ROOT, RT, DEV, ENGINE and the functions
# die, die_link, compile_startup, now, elapsed, cached_folder; engine_build sets ELF, CODEGEN_S, COMPILE_S, KERNEL_CACHE_HIT
# and writes $BUILD/engine_facts.json (docs/DEVICE_RUNNER.md "TFLM on the device").
#
# TFLM's Makefile downloads its toolchain and CMSIS-NN, so the runtime is compiled here, from
# ../shared/reference/runtimes (never copied into the repository), with Debian's arm-none-eabi-gcc and
# TFLM's own flags for a Cortex-M: the core at -Os, kernels and CMSIS-NN at -O2, no exceptions or RTTI,
# static memory; the FPU as TinyEngine's flags (-mfpu=fpv5-sp-d16 -mfloat-abi=hard) so both engines run
# the same code generation model. The runtime does not depend on the model: one archive per engine,
# keyed by the sources, flags and compiler, built once into the shared cache and published by a rename.

TFLM_ARCH=(-mcpu=cortex-m7 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard -mlittle-endian -funsigned-char -fomit-frame-pointer)
TFLM_COMMON=(-fno-unwind-tables -fno-asynchronous-unwind-tables -ffunction-sections -fdata-sections -fmessage-length=0
             -DTF_LITE_STATIC_MEMORY -DTF_LITE_DISABLE_X86_NEON -DTF_LITE_MCU_DEBUG_LOG)
TFLM_CXX=(-std=c++17 -fno-rtti -fno-exceptions -fno-threadsafe-statics)
TFLM_CMSIS_DEFS=(-DCMSIS_NN -DARM_NN_ENABLE_F16=0 -DARM_NN_ENABLE_F32=0)

# The ops of the harness's resolver (tflm_main.cc, the same as tflm_run's) and the kernels CMSIS-NN
# replaces (TFLM's micro/kernels/cmsis_nn/<op>.cc in place of micro/kernels/<op>.cc).
TFLM_KERNELS=(activations add concatenation conv depthwise_conv dequantize fully_connected hard_swish
              logistic mul pad pooling quantize reduce reshape softmax squeeze strided_slice sub tanh transpose)
TFLM_CMSIS_KERNELS=" add conv depthwise_conv fully_connected mul pad pooling softmax transpose "

# One line per translation unit: LEVEL LANG SOURCE (LEVEL core|kernel; LANG c|c++).
tflm_sources() {
  local tflm=$RT/tflite-micro micro=$RT/tflite-micro/tensorflow/lite/micro f k
  for f in "$micro"/*.cc; do
    case $(basename "$f") in
      *_test.cc | debug_log.cc | fake_micro_context.cc | mock_micro_graph.cc | test_helpers.cc | test_helper_custom_ops.cc) ;;
      *) echo "core c++ $f" ;;
    esac
  done
  for f in "$micro"/arena_allocator/*.cc "$micro"/memory_planner/*.cc "$micro"/tflite_bridge/*.cc; do
    [[ $f == *_test.cc ]] || echo "core c++ $f"
  done
  for f in core/api/flatbuffer_conversions.cc core/api/tensor_utils.cc core/c/common.cc kernels/kernel_util.cc \
           kernels/internal/common.cc kernels/internal/portable_tensor_utils.cc kernels/internal/quantization_util.cc \
           kernels/internal/runtime_shape.cc kernels/internal/tensor_ctypes.cc kernels/internal/tensor_utils.cc; do
    echo "core c++ $tflm/tensorflow/lite/$f"
  done
  echo "core c++ $tflm/tensorflow/compiler/mlir/lite/core/api/error_reporter.cc"
  echo "core c++ $tflm/tensorflow/compiler/mlir/lite/schema/schema_utils.cc"
  echo "kernel c++ $micro/kernels/kernel_util.cc"
  echo "kernel c++ $micro/kernels/micro_tensor_utils.cc"
  for k in "${TFLM_KERNELS[@]}"; do
    if [[ $ENGINE == tflm && $TFLM_CMSIS_KERNELS == *" $k "* ]]; then
      echo "kernel c++ $micro/kernels/cmsis_nn/$k.cc"
    else
      echo "kernel c++ $micro/kernels/$k.cc"
    fi
    [[ ! -f $micro/kernels/${k}_common.cc ]] || echo "kernel c++ $micro/kernels/${k}_common.cc"
  done
  if [[ $ENGINE == tflm ]]; then   # CMSIS-NN's C sources, without the f16/f32 ones (as TFLM's cmsis_nn.inc)
    find "$RT/cmsis-nn/Source" -name '*.c' ! -name '*_f16.c' ! -name '*_f32.c' | sort | sed 's/^/third c /'
  fi
}

tflm_flags() { # LEVEL LANG: the compiler flags of one translation unit
  local flags=("${TFLM_ARCH[@]}" "${TFLM_COMMON[@]}")
  case $1 in core) flags+=(-Os) ;; *) flags+=(-O2) ;; esac
  [[ $2 == c ]] && flags+=(-std=c11) || flags+=("${TFLM_CXX[@]}")
  [[ $ENGINE != tflm ]] || flags+=("${TFLM_CMSIS_DEFS[@]}")
  flags+=(-I "$RT/tflite-micro" -I "$RT/flatbuffers/include" -I "$RT/ruy" -I /usr/include/gemmlowp -I "$DEV/tflm-shim")
  [[ $ENGINE != tflm ]] || flags+=(-I "$RT/cmsis-nn" -I "$RT/cmsis-nn/Include" -I "$RT/cmsis6/CMSIS/Core/Include")
  echo "${flags[@]}"
}

build_tflm_runtime() { # DIR: every source of $BUILD/tflm_sources.txt compiled, archived in DIR/libtflm.a
  local tmp=$1 n=0 level lang src
  while read -r level lang src; do
    n=$((n + 1))
    echo "$n $(tflm_flags "$level" "$lang") -- $src"
  done < "$BUILD/tflm_sources.txt" > "$tmp/jobs.txt"
  # Each line: NUMBER FLAGS... -- SOURCE; objects are numbered (sources of the same name exist in several folders).
  # shellcheck disable=SC2016
  TMP="$tmp" xargs -P 2 -L 1 bash -c '
    n=$0; flags=(); for a in "$@"; do [[ $a == -- ]] && break; flags+=("$a"); done; src=${!#}
    case $src in *.c) cc=arm-none-eabi-gcc ;; *) cc=arm-none-eabi-g++ ;; esac
    $cc "${flags[@]}" -w -c "$src" -o "$TMP/$n.o" 2>"$TMP/$n.log" || { echo "compile error in $src: $(grep -m1 error "$TMP/$n.log")" >&2; exit 255; }' \
    < "$tmp/jobs.txt" || die "a TensorFlow Lite Micro source failed to compile for Cortex-M7 (see above)"
  arm-none-eabi-ar rcs "$tmp/libtflm.a" "$tmp"/*.o || die "cannot archive the TFLM runtime in '$tmp'"
  cp "$BUILD/tflm_sources.txt" "$tmp/sources.txt"
  rm -f "$tmp"/*.o "$tmp"/*.log "$tmp/jobs.txt"
}

engine_build() {
  local tflm=$RT/tflite-micro
  [[ -d $tflm/tensorflow/lite/micro && -d $RT/flatbuffers/include && -d $RT/ruy ]] \
    || die "TensorFlow Lite Micro not found under '$RT' (tflite-micro, flatbuffers, ruy; set TINYSCOPE_SHARED)"
  [[ $ENGINE != tflm || ( -d $RT/cmsis-nn/Source && -d $RT/cmsis6/CMSIS/Core/Include ) ]] \
    || die "CMSIS-NN or the CMSIS 6 core headers not found under '$RT' (cmsis-nn, cmsis6)"
  [[ -f /usr/include/gemmlowp/fixedpoint/fixedpoint.h ]] || die "gemmlowp's fixedpoint.h not found: install the Debian package libgemmlowp-dev"
  command -v arm-none-eabi-g++ >/dev/null 2>&1 || die "'arm-none-eabi-g++' not found: install the Debian package gcc-arm-none-eabi"
  CODEGEN_S=0

  # ------------------------------------------------------------------------------------- the runtime archive
  local t0 t1 key cache archive
  t0=$(now)
  tflm_sources > "$BUILD/tflm_sources.txt"
  key=$( (while read -r level lang src; do echo "$level $lang ${src#"$RT"/}"; sha256sum < "$src"; done < "$BUILD/tflm_sources.txt"
          cat "$DEV/tflm-shim/tensorflow/compiler/mlir/lite/kernels/internal/compatibility_macros.h"
          # the flags without the folders they name: one archive however ../shared is reached (a symlink, TINYSCOPE_SHARED)
          { tflm_flags core c++; tflm_flags kernel c; } | sed "s|$RT|RT|g; s|$DEV|DEV|g"
          arm-none-eabi-g++ --version | head -n1) | sha256sum | cut -c1-16)
  cache=$CACHE_ROOT/$ENGINE-$key
  archive=$cache/libtflm.a
  cached_folder "$cache" libtflm.a "the $ENGINE runtime archive $key" build_tflm_runtime
  KERNEL_CACHE_HIT=$ENTRY_HIT

  # ------------------------------------------------------------------------------------- the program
  cp "$TFLITE" "$BUILD/model.tflite" || die "cannot copy '$TFLITE' into the build folder"
  local harness_flags
  read -r -a harness_flags <<< "$(tflm_flags kernel c++)"
  arm-none-eabi-g++ "${harness_flags[@]}" -Wall -Wextra -Wno-unused-parameter -Wno-unused-function -I "$DEV/mps2-an500" -I "$DEV/harness" \
    -c "$DEV/harness/tflm_main.cc" -o "$BUILD/tflm_main.o" 2>"$BUILD/tflm_main.log" \
    || die "compile error in tflm_main.cc: $(grep -m1 error "$BUILD/tflm_main.log")"
  (cd "$BUILD" && arm-none-eabi-gcc "${TFLM_ARCH[@]}" -c "$DEV/harness/tflm_model.S" -o "$BUILD/tflm_model.o" 2>"$BUILD/tflm_model.log") \
    || die "cannot assemble the model into flash: $(head -n1 "$BUILD/tflm_model.log")"
  compile_startup "${TFLM_ARCH[@]}" -O2 -ffunction-sections -fdata-sections
  ELF=$BUILD/tflm_model.elf
  arm-none-eabi-g++ "${TFLM_ARCH[@]}" --specs=rdimon.specs -nostartfiles -T "$DEV/mps2-an500/link.ld" \
    -Wl,--gc-sections -Wl,-Map="$BUILD/link.map" -o "$ELF" \
    "$BUILD/tflm_main.o" "$BUILD/tflm_model.o" "$BUILD/startup.o" "$archive" -lm 2>"$BUILD/link.log" \
    || die_link "$BUILD/link.log"
  t1=$(now)
  COMPILE_S=$(elapsed "$t0" "$t1")
  local arena_sym
  arena_sym=$(arm-none-eabi-nm -S "$ELF" | awk '$4 ~ /arena/ && ($3 == "b" || $3 == "B") && !n++ { print $2 }')
  arena_sym=$((16#${arena_sym:-0}))
  printf '{"runtime": "%s", "runtime_archive": "%s", "arena_array_bytes": %s, "translation_units": %s}\n' \
    "$ENGINE" "$(basename "$cache")" "${arena_sym:-0}" "$(wc -l < "$BUILD/tflm_sources.txt")" > "$BUILD/engine_facts.json"
}
