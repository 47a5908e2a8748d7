# The python arm's speed figures: start-up (`-c pass`) and cpu_bound.py, native
# python3.11 vs python.wasm under node:wasi vs `sprawl python`. Wall and CPU (user+sys) medians.
# Usage: /usr/bin/python3.11 tests/python/figures.py [SPRAWL]   (SPRAWL: build/release/src/sprawl)
# Run it on a quiet machine: under load the wall figures grow, the CPU figures much less.
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPRAWL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/release/src/sprawl")
NATIVE = "/usr/bin/python3.11"
NODE = ["node", "--no-warnings", os.path.join(ROOT, "scripts/python-wasi-node.mjs")]
HERE = os.path.join(ROOT, "tests/python")


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(name, cmd, n):
    runs = [run(cmd) for _ in range(n)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    print(f"{name:34s} wall {wall * 1000:7.0f} ms   cpu {cpu * 1000:7.0f} ms   (median of {n})", flush=True)


print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
measure("native python3.11 -c pass", [NATIVE, "-c", "pass"], 20)
measure("node -e 0 (node alone)", ["node", "-e", "0"], 10)
measure("node:wasi python.wasm -c pass", NODE + ["-c", "pass"], 10)
if os.access(SPRAWL, os.X_OK):
    measure("sprawl python -c pass", [SPRAWL, "python", "-c", "pass"], 10)
measure("native python3.11 cpu_bound.py", [NATIVE, os.path.join(HERE, "cpu_bound.py")], 10)
measure("node:wasi python.wasm cpu_bound.py", NODE + ["--dir", HERE + "::/src", "/src/cpu_bound.py"], 7)
if os.access(SPRAWL, os.X_OK):
    measure("sprawl python cpu_bound.py", [SPRAWL, "python", "--dir", HERE + "::/src", "/src/cpu_bound.py"], 5)
else:
    print(f"no sprawl at {SPRAWL}: its figures are left out")
