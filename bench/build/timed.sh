#!/bin/sh
# A compiler/linker launcher that logs each step's CPU time, for "where does a cold build's time go"
# (docs/BENCHMARKS.md). Use it on a fresh build folder:
#   TINYSCOPE_BUILD_LOG=/tmp/steps.log cmake -S . -B B -DCMAKE_BUILD_TYPE=Release \
#     -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/bench/build/timed.sh -DCMAKE_C_COMPILER_LAUNCHER=$PWD/bench/build/timed.sh \
#     -DCMAKE_CXX_LINKER_LAUNCHER=$PWD/bench/build/timed.sh
#   TINYSCOPE_BUILD_LOG=/tmp/steps.log cmake --build B -j2
#   bench/build/summarize.py /tmp/steps.log
# Each line of the log: user-seconds system-seconds wall-seconds output-file.
log=${TINYSCOPE_BUILD_LOG:-/tmp/tinyscope-build-steps.log}
out=?
prev=
for a in "$@"; do
  [ "$prev" = "-o" ] && out=$a
  prev=$a
done
exec /usr/bin/time -a -o "$log" -f "%U %S %e $out" "$@"
