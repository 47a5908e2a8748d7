#!/usr/bin/env python3
# Benchmark, not a test: jobs per second of the hello module (bench/hello.wat) through each layer
# of the Python API: Sandbox.run in-process, Sandbox.map over threads, sprawling.ray with 1 and 2
# actors (when Ray is installed), and `python -c` jobs when the CPython-for-WASI artifact exists;
# with each layer's cost per job above the engine's own run (Stats.wall_time). Reports figures,
# never a pass or fail.
#   python bench/python_jobs.py [--jobs 10000] [--workers 2] [--python-jobs 1000]
import argparse
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


def check(outcomes) -> None:
    for out in outcomes:
        if not isinstance(out, sprawling.Outcome) or out.stdout != b"hello\n":
            raise SystemExit(f"a hello job did not print hello: {out!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2, help="threads for map; Ray's num_cpus")
    parser.add_argument("--python-jobs", type=int, default=1_000)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()

    print(f"sprawling {sprawling.version()} from {Path(sprawling.__file__).parent}; Python {sys.version.split()[0]}; "
          f"{load()}")
    sandbox = sprawling.Sandbox(tier="interpret")
    job = sprawling.Job(str(HELLO), argv=["hello"], fuel=10_000_000)
    jobs = [job] * args.jobs
    rows: list = []

    sandbox.run_job(job)  # the module cache and the code paths, warm
    walls = []
    started = time.perf_counter()
    for one in jobs:
        out = sandbox.run_job(one)
        walls.append(out.stats.wall_time)
    elapsed = time.perf_counter() - started
    engine = statistics.median(walls)
    print(f"{'engine run (Stats.wall_time)':<34} median {engine * 1e6:.1f} us/job")
    report("Sandbox.run (in-process, serial)", args.jobs, elapsed, engine, rows)

    started = time.perf_counter()
    check(sandbox.map(jobs, max_workers=args.workers))
    report(f"Sandbox.map ({args.workers} threads)", args.jobs, time.perf_counter() - started, engine, rows)

    started = time.perf_counter()
    import asyncio

    async def gather_all():
        return await asyncio.gather(*(sandbox.run_async(one) for one in jobs))

    check(asyncio.run(gather_all()))
    report("Sandbox.run_async (asyncio.gather)", args.jobs, time.perf_counter() - started, engine, rows)

    if args.no_ray:
        print("ray: skipped (--no-ray)")
    else:
        try:
            import ray
        except ImportError:
            ray = None
            print("ray: not installed (pip install 'sprawling[ray]'), Ray figures skipped")
        if ray is not None:
            import sprawling.ray as sray

            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
            try:
                for actors in (1, 2):
                    with sray.Pool(actors=actors, sandbox_options={"tier": "interpret"}, in_flight_per_actor=64) as pool:
                        pool.run_many(jobs[:100])  # actors up, module shipped
                        started = time.perf_counter()
                        check(pool.run_many(jobs))
                        report(f"sprawling.ray ({actors} actor{'s' if actors > 1 else ''})", args.jobs,
                               time.perf_counter() - started, engine, rows)
            finally:
                ray.shutdown()

    try:
        sprawling._python_artifact()
        present = True
    except sprawling.SandboxError as e:
        present = False
        print(f"python -c jobs: skipped, no CPython-for-WASI artifact ({e.message.split('.')[0]})")
    if present:
        sandbox.python(["-c", "pass"])  # the snapshot, built once
        started = time.perf_counter()
        for _ in range(args.python_jobs):
            out = sandbox.python(["-c", "print(1)"])
            if out.stdout != b"1\n":
                raise SystemExit(f"python -c job: {out!r}")
        report("python -c (snapshot, serial)", args.python_jobs, time.perf_counter() - started, 0.0, rows)


if __name__ == "__main__":
    main()
