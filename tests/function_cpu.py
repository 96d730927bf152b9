#!/usr/bin/env python3
"""CPU time of every test function, to keep each under the limit of tests/README.md.

    tests/function_cpu.py BUILD_DIR [-R REGEX] [-L LABEL | -LE LABEL] [--over SECONDS]

Takes the suites, their environment and labels from CTest (`ctest --show-only=json-v1`), runs each
Qt Test function alone with that environment and prints its CPU time (user + system of the suite's
process and of every `tinyscope` process it waited for) and wall time. Every run includes the
suite's initTestCase and process start (about 1 s with LibTorch), so the figures are upper bounds.
A function that needs an earlier one (it skips without it) is listed in NEEDS below: it runs after
that one, whose own time is subtracted. Exit code 1 when a function took more than --over seconds
of CPU (default 30).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

# Functions that use what an earlier function of their suite made.
NEEDS = {"test_training": "tinyRunLearnsAndWritesARealCheckpoint"}


def run(cmd, env, cwd):
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, time.monotonic() - start, os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("-R", dest="regex", default=".")
    ap.add_argument("-L", dest="label")
    ap.add_argument("-LE", dest="exclude")
    ap.add_argument("--over", type=float, default=30.0)
    a = ap.parse_args()
    listing = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=a.build, capture_output=True, text=True, check=True).stdout)
    worst = 0.0
    print(f"{'suite':28} {'function':66} {'CPU s':>7} {'wall s':>7}  result", flush=True)
    for t in listing["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = props.get("LABELS", [])
        if not re.search(a.regex, t["name"]) or (a.label and a.label not in labels) or (a.exclude and a.exclude in labels):
            continue
        env = dict(os.environ)
        env.update(kv.split("=", 1) for kv in props.get("ENVIRONMENT", []))
        cwd = props.get("WORKING_DIRECTORY", a.build)
        cmd = t["command"]
        names = subprocess.run(cmd + ["-functions"], capture_output=True, text=True, env=env, cwd=cwd).stdout.split()
        functions = [f[:-2] for f in names if f.endswith("()")]
        first = NEEDS.get(t["name"])
        base = run(cmd + [first], env, cwd)[0] if first else 0.0
        total_cpu = total_wall = 0.0
        for f in functions:
            after = first is not None and f != first
            cpu, wall, code, out = run(cmd + ([first, f] if after else [f]), env, cwd)
            if after:
                cpu = max(0.0, cpu - base)
            result = "ok" if code == 0 else f"FAILED ({code})"
            if code == 0 and re.search(r"SKIP\s+:\s+\S+::" + re.escape(f) + r"\(\)", out):
                result = "skipped"
            total_cpu += cpu
            total_wall += wall
            worst = max(worst, cpu)
            flag = "  <-- over" if cpu > a.over else ""
            print(f"{t['name']:28} {f:66} {cpu:7.1f} {wall:7.1f}  {result}{flag}", flush=True)
        print(f"{t['name']:28} {'(all of the above, ' + ','.join(labels or ['no label']) + ')':66} {total_cpu:7.1f} {total_wall:7.1f}",
              flush=True)
    return 1 if worst > a.over else 0


if __name__ == "__main__":
    sys.exit(main())
