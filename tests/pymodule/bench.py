# Benchmark, not a test (pytest does not collect it): jobs per second serial against parallel from
# Python threads, and the per-job cost of the Python module and of the C API against the C++ seam.
#   cmake --build --preset release --target capi_overhead capi_guest
#   PYTHONPATH=build/release/python /usr/bin/python3 tests/pymodule/bench.py [--build build/release]
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import sprawling
from wat_modules import OK_WAT  # the smallest useful job: one fd_write of "ok\n"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def python_us_per_job(sb: sprawling.Sandbox, guest: str, runs: int) -> float:
    """Best of five batches, the same job as capi_overhead runs (argv [guest, hello])."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(runs):
            out = sb.run(guest, argv=["guest", "hello"], fuel=100_000_000)
            if out.exit.kind != "success" or not out.stdout:
                sys.exit(f"bench: a run of {guest} failed: {out}")
        best = min(best, (time.perf_counter() - start) / runs * 1e6)
    return best


def per_job_overhead(overhead_tool: str, guest: str, runs: int) -> None:
    print(f"\nper job, best of 5 batches of {runs} runs of {os.path.basename(guest)} (argv [guest, hello]):")
    if os.access(overhead_tool, os.X_OK):
        # C++ seam and C API, measured by the C++ program on the same machine moments before.
        lines = subprocess.run([overhead_tool, guest, str(runs)], check=True, capture_output=True,
                               text=True).stdout.splitlines()[1:]
        for line in lines:
            print(line)
        cpp_us = float(lines[0].split()[-2])
    else:
        print(f"  (no {overhead_tool}: build the target capi_overhead for the C++ and C figures)")
        cpp_us = None
    py_us = python_us_per_job(sprawling.Sandbox(), guest, runs)
    extra = f"  (+{py_us - cpp_us:.1f})" if cpp_us is not None else ""
    print(f"  Python (sprawling.Sandbox.run)       {py_us:8.1f} us{extra}")


def jobs_per_second(guest: str, argv: list[str], jobs: int, threads: int) -> tuple[float, float]:
    """Runs `jobs` jobs from `threads` threads on one shared Sandbox; returns (jobs/s, seconds
    spent inside the engine in total)."""
    sb = sprawling.Sandbox()
    per_thread = jobs // threads
    inside = [0.0] * threads

    def work(index: int) -> None:
        for _ in range(per_thread):
            out = sb.run(guest, argv=argv, fuel=None)
            if out.exit.kind != "success":
                sys.exit(f"bench: a run failed: {out}")
            inside[index] += out.stats.wall_time

    start = time.perf_counter()
    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    return per_thread * threads / elapsed, sum(inside)


def throughput(guest: str, label: str, argv: list[str], jobs: int) -> None:
    serial, inside = jobs_per_second(guest, argv, jobs, 1)
    parallel, _ = jobs_per_second(guest, argv, jobs, 2)
    print(f"  {label:24s} {inside / jobs * 1e6:10.0f} us   serial {serial:9.1f} jobs/s   "
          f"2 threads {parallel:9.1f} jobs/s   speed-up {parallel / serial:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", default="build/release", help="the build folder (default build/release)")
    parser.add_argument("--runs", type=int, default=1000, help="runs per batch of the per-job figures")
    parser.add_argument("--jobs", type=int, default=8, help="jobs per throughput figure (even)")
    args = parser.parse_args()
    guest = os.path.join(args.build, "tests/capi/capi_guest.wasm")
    tool = os.path.join(args.build, "tests/capi/capi_overhead")
    if not os.path.isfile(guest):
        sys.exit(f"bench: no {guest}: cmake --build --preset release --target capi_guest capi_overhead")

    print(f"sprawling {sprawling.version()} from {os.path.dirname(sprawling.__file__)}; {load()}")
    with tempfile.TemporaryDirectory() as scratch:
        ok = os.path.join(scratch, "ok.wat")
        with open(ok, "wb") as f:
            f.write(OK_WAT)
        print("\njobs per second on one sprawling.Sandbox, serial vs 2 Python threads "
              "(with each job's mean time inside the engine, serial):")
        throughput(guest, "C guest, spin 10000000", ["guest", "spin", "10000000"], args.jobs)
        throughput(guest, "C guest, hello", ["guest", "hello"], args.jobs * 100)
        throughput(ok, "ok.wat (one fd_write)", ["ok"], args.jobs * 500)
        per_job_overhead(tool, ok, args.runs * 2)
        per_job_overhead(tool, guest, args.runs // 2)
    print(f"\nafter: {load()}")


if __name__ == "__main__":
    main()
