#!/usr/bin/env python3
# Benchmark, not a test: jobs per second of the hello module (bench/hello.wat), and of `python -c`
# jobs when the CPython-for-WASI artifact exists, through each layer of the Python API:
# Sandbox.run_job in-process, Sandbox.map over threads, run_async under asyncio.gather, and
# sprawling.ray with 1 and 2 actors (when Ray is installed);
# with each layer's cost per job above the engine's own run (Stats.wall_time). Reports figures,
# never a pass or fail.
#   python bench/python_jobs.py [--jobs 10000] [--workers 2] [--python-jobs 1000]
import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import sprawling

HELLO = Path(__file__).resolve().with_name("hello.wat")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def report(name: str, jobs: int, seconds: float, engine_seconds: float, rows: list) -> None:
    per_job = seconds / jobs * 1e6
    overhead = per_job - engine_seconds * 1e6
    rows.append((name, jobs, jobs / seconds, per_job, overhead))
    print(f"{name:<34} {jobs:>6} jobs  {jobs / seconds:>9.0f} jobs/s  {per_job:>8.1f} us/job  "
          f"{overhead:>8.1f} us/job above the engine's run", flush=True)


def check(outcomes, expected: bytes) -> None:
    for out in outcomes:
        if not isinstance(out, sprawling.Outcome) or out.stdout != expected:
            raise SystemExit(f"a job did not print {expected!r}: {out!r}")


def layers(kind: str, sandbox: sprawling.Sandbox, jobs: list, expected: bytes, args, ray, rows: list) -> None:
    """Times the same jobs through each layer: serial, map over threads, asyncio, Ray 1 and 2 actors."""
    sandbox.run_job(jobs[0])  # the module cache, the snapshot and the code paths, warm
    walls = []
    started = time.perf_counter()
    for one in jobs:
        out = sandbox.run_job(one)
        if out.stdout != expected:
            raise SystemExit(f"a {kind} job did not print {expected!r}: {out!r}")
        walls.append(out.stats.wall_time)
    elapsed = time.perf_counter() - started
    engine = statistics.median(walls)
    print(f"{kind}: engine run (Stats.wall_time) median {engine * 1e6:.1f} us/job")
    report(f"{kind}: Sandbox.run_job (serial)", len(jobs), elapsed, engine, rows)

    started = time.perf_counter()
    check(sandbox.map(jobs, max_workers=args.workers), expected)
    report(f"{kind}: Sandbox.map ({args.workers} threads)", len(jobs), time.perf_counter() - started, engine, rows)

    async def gather_all():
        return await asyncio.gather(*(sandbox.run_async(one) for one in jobs))

    started = time.perf_counter()
    check(asyncio.run(gather_all()), expected)
    report(f"{kind}: Sandbox.run_async (gather)", len(jobs), time.perf_counter() - started, engine, rows)

    if ray is None:
        return
    import sprawling.ray as sray

    for actors in (1, 2):
        with sray.Pool(actors=actors, sandbox_options={"tier": "interpret"}, in_flight_per_actor=64) as pool:
            pool.run_many(jobs[:20 * actors])  # actors up, module shipped, snapshots built
            started = time.perf_counter()
            check(pool.run_many(jobs), expected)
            report(f"{kind}: sprawling.ray ({actors} actor{'s' if actors > 1 else ''})", len(jobs),
                   time.perf_counter() - started, engine, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2, help="threads for map; Ray's num_cpus")
    parser.add_argument("--python-jobs", type=int, default=1_000)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()

    print(f"sprawling {sprawling.version()} from {Path(sprawling.__file__).parent}; Python {sys.version.split()[0]}; "
          f"{load()}")
    ray = None
    if args.no_ray:
        print("ray: skipped (--no-ray)")
    else:
        try:
            import ray
        except ImportError:
            print("ray: not installed (pip install 'sprawling[ray]'), Ray figures skipped")
        if ray is not None:
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    rows: list = []
    sandbox = sprawling.Sandbox(tier="interpret")
    try:
        hello = sprawling.Job(str(HELLO), argv=["hello"], fuel=10_000_000)
        layers("hello", sandbox, [hello] * args.jobs, b"hello\n", args, ray, rows)
        try:
            python = sprawling.python_job(["-c", "print(1)"], fuel=10**11)
        except sprawling.SandboxError as e:
            print(f"python -c jobs: skipped, no CPython-for-WASI artifact ({e.message.split('.')[0]})")
        else:
            layers("python -c", sandbox, [python] * args.python_jobs, b"1\n", args, ray, rows)
    finally:
        if ray is not None:
            ray.shutdown()


if __name__ == "__main__":
    main()
