#!/usr/bin/env python3
"""Where a build's CPU goes: reads the log bench/build/timed.sh writes (user system wall output per
line) and prints CPU seconds per target (compiles and links apart), the largest translation units,
and the totals. Usage: bench/build/summarize.py LOG [TOP]"""
import collections, re, statistics, sys

def main():
    log = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    compiles = collections.defaultdict(list)
    links = []
    for line in open(log, encoding="utf-8", errors="replace"):
        parts = line.split(maxsplit=3)
        if len(parts) < 4 or not re.match(r"^[0-9.]+$", parts[0]):
            continue  # /usr/bin/time's "Command exited with non-zero status" lines
        cpu = float(parts[0]) + float(parts[1])
        out = parts[3].strip()
        m = re.search(r"CMakeFiles/([^/]+)\.dir/(.*)$", out)
        if m and m.group(1).startswith("cmTC_"):
            continue  # CMake's configure-time checks
        if m and (out.endswith(".o") or out.endswith(".gch")):
            compiles[m.group(1)].append((cpu, m.group(2)))
        else:
            links.append((cpu, out))
    total_compile = sum(c for v in compiles.values() for c, _ in v)
    total_link = sum(c for c, _ in links)
    print(f"compile CPU {total_compile:.0f} s in {sum(len(v) for v in compiles.values())} steps, "
          f"link CPU {total_link:.0f} s in {len(links)} steps, total {total_compile + total_link:.0f} s")
    print("\nper target (compiles): CPU s, steps, median s")
    groups = sorted(compiles.items(), key=lambda kv: -sum(c for c, _ in kv[1]))
    for target, steps in groups:
        cpus = [c for c, _ in steps]
        print(f"  {target:40s} {sum(cpus):7.1f} {len(cpus):4d} {statistics.median(cpus):6.1f}")
    tests = [c for t, v in compiles.items() for c, _ in v
             if t.startswith(("test_", "slow_", "tinyscope_suites_", "tinyscope_slow_", "tinyscope_test_pch_"))]
    print(f"\ntest programs' compiles (their precompiled headers included): {sum(tests):.0f} s in {len(tests)} steps")
    print(f"\nlargest {top} steps:")
    every = [(c, f"{t}/{f}") for t, v in compiles.items() for c, f in v] + links
    for cpu, what in sorted(every, reverse=True)[:top]:
        print(f"  {cpu:6.1f}  {what}")

main()
