#!/bin/sh
# Tinyscope set-up for a fresh Debian 12 machine (run as root, or as a user with sudo).
#   ./setup.sh run        install what is missing, build (Release) and open the app
#   ./setup.sh test       install what is missing, build and run the default test tier (ctest -LE slow)
#   ./setup.sh test-slow  the same for the slow tier (ctest -L slow; tests/README.md)
# All are idempotent and incremental: a second run installs nothing and rebuilds only what changed.
set -eu
cd "$(dirname "$0")"
mode=${1:-run}
BUILD_DIR=${TINYSCOPE_BUILD_DIR:-build}

# Build toolchain and libraries (Debian packages only; nothing is downloaded at run time).
PKGS="cmake ninja-build make g++ pkg-config qt6-base-dev qt6-charts-dev qt6-svg-dev libtorch-dev libgloo-dev
      libopenblas0-openmp libgraphviz-dev nlohmann-json3-dev zlib1g-dev libstb-dev dataset-fashion-mnist
      flatbuffers-compiler libflatbuffers-dev libgemmlowp-dev protobuf-compiler libprotobuf-dev libonnx-dev libdnnl-dev"
# The device in the loop (tinyscope device-run and the Export dialog's "Verify on an emulated
# Cortex-M7", docs/DEVICE_RUNNER.md): the Cortex-M toolchain, QEMU and the modules TinyEngine's code
# generators import; the tests also read our params pickles with numpy.
DEVICE_PKGS="python3 python3-numpy python3-flatbuffers gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm python3-matplotlib python3-tqdm"
# Deployment checks (tinyscope deploy, docs/DEPLOY.md): onnx.checker, and npm to install ONNX
# Runtime (onnxruntime-node) into the test folder. A Node.js that brings its own npm will do
# (Debian's npm package conflicts with such a nodejs).
DEPLOY_PKGS="python3-onnx"
command -v npm >/dev/null 2>&1 || DEPLOY_PKGS="$DEPLOY_PKGS npm"

case "$mode" in
  run|test|test-slow) want="$PKGS $DEVICE_PKGS $DEPLOY_PKGS" ;;
  *) echo "usage: ./setup.sh run|test|test-slow" >&2; exit 2 ;;
esac

# Each phase's wall time is printed (CI logs show where its minutes go).
t0=$(date +%s)
phase() { echo "[setup] $1: $(( $(date +%s) - t0 )) s"; t0=$(date +%s); }

missing=""
for p in $want; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "Installing Debian packages:$missing"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
      echo "error: these packages are missing and installing them needs root:$missing" >&2; exit 1
    fi
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # shellcheck disable=SC2086
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi

phase "packages"
jobs=$(nproc 2>/dev/null || echo 2)
# Ninja keeps both cores busy to the end (Make leaves one idle while a target waits for another's
# link): 9 % off a cold build (docs/BENCHMARKS.md). A build folder made earlier keeps its generator.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
# What the mode needs and nothing more (docs/BENCHMARKS.md "Where a cold build's time goes"): `run`
# builds the program (and the TFLM runner it starts); `test` everything in `all` (the default tier's
# suites); `test-slow` adds the slow tier's programs and the benchmark programs (bench/, outside
# `all`), so those never rot unseen.
case "$mode" in
  run) cmake --build "$BUILD_DIR" -j "$jobs" --target tinyscope ;;
  test) cmake --build "$BUILD_DIR" -j "$jobs" ;;
  test-slow) cmake --build "$BUILD_DIR" -j "$jobs" --target all slow_tests benchmarks ;;
esac
phase "build"

# Test tiers (tests/README.md): the default one checks behaviour on small inputs; the slow one
# reaches statistical targets on full data.
case "$mode" in
  test) tier="-LE slow" ;;
  test-slow) tier="-L slow" ;;
  *) tier="" ;;
esac
if [ -n "$tier" ]; then
  cd "$BUILD_DIR"
  # shellcheck disable=SC2086
  status=0
  QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j "$jobs" $tier || status=$?
  phase "tests"
  exit $status
fi

app="$BUILD_DIR/app/tinyscope"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo
  echo "Built $app, but there is no display here (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open."
  echo "Use the CLI on the same core instead, for example:"
  echo "  $app space show            # the embedded default design space"
  echo "  $app cost --max            # MACs, peak SRAM, params and flash of the largest subnet"
  echo "  $app help                  # every command"
  echo "or render every panel to PNG files (the tool is built with the tests):"
  echo "  cmake --build $BUILD_DIR --target tinyscope-screenshots && $BUILD_DIR/tests/screenshots/tinyscope-screenshots shots/"
  echo
  "$app" space show
  exit 0
fi
exec "$app"
