# Sandbox.run_async, Sandbox.map, Cancel, features, training arguments and precompile, on small
# text-format modules (no guest build needed).
import asyncio
import os
import threading
import time

import pytest

import sprawling
from wat_modules import DENIED_WAT, EXIT3_WAT, OK_WAT, SPIN_WAT, TAIL_CALL_WAT, TRAP_WAT

FUEL = 10_000_000


def job(wat, **kwargs):
    return sprawling.Job(wat, argv=["g"], **kwargs)


def test_run_async_gives_the_outcome_of_run():
    out = asyncio.run(sprawling.Sandbox().run_async(job(OK_WAT, fuel=FUEL)))
    assert out.exit.kind == "success" and out.stdout == b"ok\n"
    assert out.stats.fuel_consumed == sprawling.Sandbox().run(OK_WAT, fuel=FUEL).stats.fuel_consumed


def test_many_concurrent_async_jobs_all_finish_in_order_given():
    sandbox = sprawling.Sandbox()

    async def main():
        kinds = [OK_WAT, EXIT3_WAT, TRAP_WAT] * 40
        return kinds, await asyncio.gather(*(sandbox.run_async(job(k, fuel=FUEL)) for k in kinds))

    kinds, outs = asyncio.run(main())
    expected = {OK_WAT: "success", EXIT3_WAT: "failure", TRAP_WAT: "trap"}
    assert [o.exit.kind for o in outs] == [expected[k] for k in kinds]
    assert all(o.exit.code == 3 for k, o in zip(kinds, outs) if k is EXIT3_WAT)


def test_cancelling_the_task_stops_the_job_and_reports_it():
    sandbox = sprawling.Sandbox()  # no timeout: only the cancel can stop the spin

    stopped = []

    async def main():
        task = asyncio.create_task(sandbox.run_async(job(SPIN_WAT), on_cancelled=stopped.append))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    took = asyncio.run(main())
    assert took < 2.0, f"the cancelled job ran {took:.2f}s more"
    assert len(stopped) == 1
    outcome = stopped[0]
    assert outcome.exit.kind == "trap" and outcome.exit.message == "cancelled" and outcome.stats.cancelled
    assert outcome.stats.fuel_consumed > 0  # it ran until the cancel stopped it


def test_a_deadline_in_an_async_job_is_a_deadline_trap_not_a_cancel():
    out = asyncio.run(sprawling.Sandbox(timeout=0.2).run_async(job(SPIN_WAT)))
    assert out.exit.kind == "trap" and out.exit.message == "deadline exceeded" and not out.stats.cancelled


def test_an_error_in_an_async_job_is_raised_as_sandbox_error():
    with pytest.raises(sprawling.SandboxError) as raised:
        asyncio.run(sprawling.Sandbox().run_async(job(DENIED_WAT)))
    assert raised.value.code == "E_SANDBOX_DENIED"


def test_cancel_from_another_thread_stops_a_synchronous_run():
    cancel = sprawling.Cancel()
    assert not cancel.cancelled
    timer = threading.Timer(0.2, cancel.cancel)
    timer.start()
    out = sprawling.Sandbox().run(SPIN_WAT, cancel=cancel)
    timer.join()
    assert cancel.cancelled and out.stats.cancelled and out.exit.message == "cancelled"


def test_a_job_started_with_a_set_cancel_stops_on_entry():
    cancel = sprawling.Cancel()
    cancel.cancel()
    out = sprawling.Sandbox().run(OK_WAT, fuel=FUEL, cancel=cancel)
    assert out.stats.cancelled and out.stdout == b""


def test_map_returns_outcomes_in_order():
    jobs = [job(OK_WAT if k % 2 else EXIT3_WAT, fuel=FUEL) for k in range(50)]
    outs = sprawling.Sandbox().map(jobs, max_workers=4)
    assert [o.exit.kind for o in outs] == ["success" if k % 2 else "failure" for k in range(50)]


def test_map_raises_the_first_error_or_returns_it_in_place():
    jobs = [job(OK_WAT, fuel=FUEL), job(DENIED_WAT), job(OK_WAT, fuel=FUEL)]
    with pytest.raises(sprawling.SandboxError) as raised:
        sprawling.Sandbox().map(jobs, max_workers=2)
    assert raised.value.code == "E_SANDBOX_DENIED"
    outs = sprawling.Sandbox().map(jobs, max_workers=2, return_exceptions=True)
    assert outs[0].exit.kind == "success" and isinstance(outs[1], sprawling.SandboxError) and outs[2].stdout == b"ok\n"
    with pytest.raises(ValueError):
        sprawling.Sandbox().map(jobs, max_workers=0)


def test_features_switch_like_sprawl_run_W():
    assert "tail-call" in sprawling.features() and "simd" in sprawling.features()
    assert sprawling.Sandbox().run(TAIL_CALL_WAT, fuel=FUEL).exit.kind == "success"
    with pytest.raises(sprawling.SandboxError) as raised:
        sprawling.Sandbox(features={"tail-call": False}).run(TAIL_CALL_WAT, fuel=FUEL)
    assert raised.value.code == "E_INVALID_MODULE"
    with pytest.raises(ValueError):
        sprawling.Sandbox(features={"tail-calls": False})
    with pytest.raises(TypeError):
        sprawling.Sandbox(features={"simd": 0})


def test_training_args_are_checked_and_change_nothing_the_job_sees():
    out = sprawling.Sandbox().run(OK_WAT, fuel=FUEL, training_args=["x", "y"])
    assert out.stdout == b"ok\n"
    with pytest.raises(TypeError):
        sprawling.Sandbox().run(OK_WAT, training_args="x")


def test_precompile_fills_the_code_cache_or_says_why_not(tmp_path):
    module = tmp_path / "ok.wat"
    module.write_bytes(OK_WAT)
    with pytest.raises(sprawling.SandboxError) as raised:
        sprawling.Sandbox().precompile(module)  # no code_cache_dir
    assert raised.value.code in ("E_INVALID_JOB", "E_TOOL_UNAVAILABLE")
    if not sprawling.compiled_tier_available():
        return
    cache = tmp_path / "cache"
    sandbox = sprawling.Sandbox(code_cache_dir=cache, tier="auto")
    done = sandbox.precompile(module)
    assert done.functions == 1 and done.compiled == 1
    assert any(cache.rglob("*")) and sandbox.run(module, fuel=FUEL).stdout == b"ok\n"
    with pytest.raises(sprawling.SandboxError) as raised:
        sandbox.precompile(os.fspath(tmp_path / "absent.wasm"))
