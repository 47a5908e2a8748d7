# sprawling.ray on a local Ray cluster the test starts: answers equal to local runs, a worker
# killed mid-batch, a job that must not run twice, warm actors on a second batch.
import os
import signal
import threading
import time

import pytest

import sprawling
from wat_modules import DENIED_WAT, EXIT3_WAT, OK_WAT, SPIN_WAT, TRAP_WAT

SKIP = "Ray is not installed (pip install 'sprawling[ray]'): the sprawling.ray tests skip"
REQUIRED = os.environ.get("SPRAWLING_REQUIRE_RAY") == "1"  # CI's wheel check: an absent Ray fails
if REQUIRED:
    import ray
else:
    ray = pytest.importorskip("ray", reason=SKIP)
if not hasattr(ray, "init"):  # a folder named ray (such as the session folder Ray leaves behind) in the working directory
    if REQUIRED:
        raise ImportError(f"'ray' is {ray!r}, not Ray: a folder named ray shadows the package")
    pytest.skip(SKIP, allow_module_level=True)
import sprawling.ray as sray  # noqa: E402

FUEL = 10_000_000


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def mixed_jobs():
    jobs = []
    for k in range(4):
        jobs += [sprawling.Job(OK_WAT, argv=["ok", str(k)], fuel=FUEL),
                 sprawling.Job(EXIT3_WAT, argv=["exit3"], fuel=FUEL),
                 sprawling.Job(SPIN_WAT, argv=["spin"], fuel=5_000 + k),
                 sprawling.Job(TRAP_WAT, argv=["trap"], fuel=FUEL),
                 sprawling.Job(DENIED_WAT, argv=["denied"], fuel=FUEL)]
    return jobs


def same(remote, local):
    if isinstance(local, sprawling.SandboxError):
        assert isinstance(remote, sprawling.SandboxError) and remote.code == local.code and remote.message == local.message
        return
    assert remote.exit == local.exit and remote.stdout == local.stdout and remote.stderr == local.stderr
    assert remote.stats.fuel_consumed == local.stats.fuel_consumed


def test_a_mixed_batch_gives_what_local_runs_give(cluster):
    jobs = mixed_jobs()
    local = sprawling.Sandbox().map(jobs, max_workers=2, return_exceptions=True)
    kinds = {o.exit.kind for o in local if isinstance(o, sprawling.Outcome)}
    assert kinds == {"success", "failure", "fuel_exhausted", "trap"}
    with sray.Pool(actors=2) as pool:
        remote = pool.run_many(jobs, return_exceptions=True)
        assert len(remote) == len(local)
        for r, l in zip(remote, local):
            same(r, l)
        with pytest.raises(sprawling.SandboxError) as raised:
            pool.run_many(jobs)
        assert raised.value.code == "E_SANDBOX_DENIED"


def test_as_completed_and_async_answer_every_job_once(cluster):
    import asyncio

    jobs = mixed_jobs()
    with sray.Pool(actors=2, in_flight_per_actor=1) as pool:
        indices = [k for k, _ in pool.as_completed(jobs)]
        assert sorted(indices) == list(range(len(jobs)))
        answers = asyncio.run(pool.run_many_async(jobs, return_exceptions=True))
        assert [type(a) for a in answers] == [type(a) for a in pool.run_many(jobs, return_exceptions=True)]


def test_a_worker_killed_mid_batch_leaves_every_job_answered_exactly_once(cluster):
    budget = 30_000_000
    jobs = [sprawling.Job(SPIN_WAT, argv=["spin", str(k)], fuel=budget) for k in range(24)]
    with sray.Pool(actors=2, in_flight_per_actor=2) as pool:
        victim = pool.info()[0]["pid"]
        seen = []
        for index, answer in pool.as_completed(jobs):
            if not seen:
                os.kill(victim, signal.SIGKILL)
            seen.append(index)
            assert isinstance(answer, sprawling.Outcome), answer
            assert answer.exit.kind == "fuel_exhausted" and answer.stats.fuel_consumed == budget
        assert sorted(seen) == list(range(len(jobs)))
        assert victim not in {i["pid"] for i in pool.info()}, "the killed worker was not replaced"


def test_a_job_marked_not_idempotent_is_not_run_again_and_is_named(cluster):
    with sray.Pool(actors=1) as pool:
        victim = pool.info()[0]["pid"]
        killer = threading.Timer(1.5, os.kill, (victim, signal.SIGKILL))
        killer.start()
        started = time.monotonic()
        answers = pool.run_many([sprawling.Job(SPIN_WAT, argv=["spin"], name="payment-42", idempotent=False)],
                                return_exceptions=True)
        killer.join()
        assert time.monotonic() - started < 60
        error = answers[0]
        assert isinstance(error, sprawling.SandboxError) and error.code == "E_SANDBOX_HOST"
        assert "payment-42" in error.message and error.detail["job"] == "payment-42"


def test_a_second_batch_reuses_warm_actors_and_their_modules(cluster):
    jobs = [sprawling.Job(OK_WAT, argv=["ok"], fuel=FUEL) for _ in range(20)]
    with sray.Pool(actors=2) as pool:
        pool.run_many(jobs)
        first = pool.info()
        assert sum(i["jobs"] for i in first) == 20 and all(i["fetches"] <= 1 for i in first)
        pool.run_many(jobs)
        second = pool.info()
        assert [i["pid"] for i in second] == [i["pid"] for i in first]
        assert [i["fetches"] for i in second] == [i["fetches"] for i in first]
        assert sum(i["jobs"] for i in second) == 40


def test_importing_sprawling_does_not_import_ray():
    import subprocess
    import sys

    code = "import sys, sprawling; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.strip() == "False"
