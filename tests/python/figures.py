# The python arm's speed figures: start-up (`-c pass`) and cpu_bound.py, native
# python3.11 vs python.wasm under node:wasi, under Wasmtime (cold, and from its compilation cache;
# where wasmtime-py is installed, as for bench/run) vs `sprawl python` (from the snapshot, and
# cold; cpu_bound.py with an empty code cache and with the hot set three earlier jobs kept there).
# Wall and CPU (user+sys) medians.
# Usage: /usr/bin/python3.11 tests/python/figures.py [SPRAWL]   (SPRAWL: build/release/src/sprawl)
#   WASMTIME_PYTHON: a Python with wasmtime-py (default: the peers' venv, tests/differential/README.md)
# Run it on a quiet machine: under load the wall figures grow, the CPU figures much less.
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPRAWL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/release/src/sprawl")
NATIVE = "/usr/bin/python3.11"
NODE = ["node", "--no-warnings", os.path.join(ROOT, "scripts/python-wasi-node.mjs")]
HERE = os.path.join(ROOT, "tests/python")
ARTIFACTS = os.path.join(ROOT, ".artifacts/python-wasi")
PYTHON_WASM = os.environ.get("SPRAWLING_PYTHON_WASM", os.path.join(ARTIFACTS, "python.wasm"))
PYTHON_LIB = os.environ.get("SPRAWLING_PYTHON_LIB", os.path.join(ARTIFACTS, "lib"))


def wasmtime_command():
    """bench/wasmtime-wasi.py under a Python that has wasmtime-py, or None."""
    candidates = [os.environ.get("WASMTIME_PYTHON"),
                  os.path.expanduser("~/.cache/sprawling/peers-wasmtime50/bin/python"),
                  os.path.join(ROOT, "build/peers/bin/python")]
    for python in candidates:
        if python and os.access(python, os.X_OK) and \
                subprocess.run([python, "-c", "import wasmtime"], capture_output=True).returncode == 0:
            return [python, os.path.join(ROOT, "bench/wasmtime-wasi.py")]
    return None


def run(cmd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(name, cmd, n, env=None):
    """`env`: a function giving each run's environment (None: this one)."""
    runs = [run(cmd, env() if env else None) for _ in range(n)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    print(f"{name:34s} wall {wall * 1000:7.0f} ms   cpu {cpu * 1000:7.0f} ms   (median of {n})", flush=True)


print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
measure("native python3.11 -c pass", [NATIVE, "-c", "pass"], 20)
measure("node -e 0 (node alone)", ["node", "-e", "0"], 10)
measure("node:wasi python.wasm -c pass", NODE + ["-c", "pass"], 10)
if os.access(SPRAWL, os.X_OK):
    measure("sprawl python -c pass", [SPRAWL, "python", "-c", "pass"], 10)
WASMTIME = wasmtime_command()
if WASMTIME is None:
    print("no wasmtime-py (WASMTIME_PYTHON or the peers' venv): the Wasmtime figures are left out")
else:
    cache = os.path.join(ROOT, "build/wasmtime-python-cache")
    lib = ["--dir", PYTHON_LIB + "::/usr/local/lib"]
    measure("wasmtime python.wasm -c pass (cold)", WASMTIME + lib + [PYTHON_WASM, "-c", "pass"], 3)
    run(WASMTIME + ["--cache", cache] + lib + [PYTHON_WASM, "-c", "pass"])  # fills its cache
    measure("wasmtime python.wasm -c pass (cached)", WASMTIME + ["--cache", cache] + lib + [PYTHON_WASM, "-c", "pass"], 10)
if os.access(SPRAWL, os.X_OK):
    measure("sprawl python --no-snapshot -c pass", [SPRAWL, "python", "--no-snapshot", "-c", "pass"], 10)
measure("native python3.11 cpu_bound.py", [NATIVE, os.path.join(HERE, "cpu_bound.py")], 10)
measure("node:wasi python.wasm cpu_bound.py", NODE + ["--dir", HERE + "::/src", "/src/cpu_bound.py"], 7)
if WASMTIME is not None:
    src = ["--dir", PYTHON_LIB + "::/usr/local/lib", "--dir", HERE + "::/src"]
    measure("wasmtime python.wasm cpu_bound.py (cold)", WASMTIME + src + [PYTHON_WASM, "/src/cpu_bound.py"], 3)
    measure("wasmtime python.wasm cpu_bound.py (cached)",
            WASMTIME + ["--cache", os.path.join(ROOT, "build/wasmtime-python-cache")] + src + [PYTHON_WASM, "/src/cpu_bound.py"], 5)
if os.access(SPRAWL, os.X_OK):
    job = [SPRAWL, "python", "--dir", HERE + "::/src", "/src/cpu_bound.py"]
    measure("sprawl python cpu_bound.py", job, 5)
    # The code cache (SPRAWLING_CACHE_DIR): empty for every run, then holding the hot set that three
    # earlier jobs' tier-up kept (each run gets a copy, so every run starts from the same one).
    with tempfile.TemporaryDirectory() as scratch:
        empty = os.path.join(scratch, "empty")
        def empty_cache():
            shutil.rmtree(empty, ignore_errors=True)
            return dict(os.environ, SPRAWLING_CACHE_DIR=empty)
        measure("sprawl python cpu_bound.py (empty cache)", job, 5, empty_cache)
        seeded = os.path.join(scratch, "seeded")
        for _ in range(3):
            run(job, dict(os.environ, SPRAWLING_CACHE_DIR=seeded))
        copy = os.path.join(scratch, "copy")
        def hot_set():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(seeded, copy)
            return dict(os.environ, SPRAWLING_CACHE_DIR=copy)
        measure("sprawl python cpu_bound.py (hot set)", job, 5, hot_set)
else:
    print(f"no sprawl at {SPRAWL}: its figures are left out")
