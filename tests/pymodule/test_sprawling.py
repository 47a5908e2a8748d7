# pytest tests of the Python module `sprawling` (python/sprawling/__init__.py) on the built C
# library: outcome kinds, error codes, mounts, module forms, limits, tiers, snapshots, streamed
# stdin, threads, bad arguments.
import asyncio
import io
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import sprawling
from wat_modules import BIG_TABLE_WAT, DENIED_WAT, NAN_SIGN_WAT, OK_WAT, ONE_MEMORY_WAT, SNAPSHOT_WAT, TWO_TABLES_WAT

GUEST = os.environ.get("SPRAWLING_TEST_GUEST", "")

FUEL = 100_000_000


@pytest.fixture(scope="session", autouse=True)
def guest_present():
    assert GUEST and os.path.isfile(GUEST), \
        f"SPRAWLING_TEST_GUEST must name the built test guest (tests/capi/guest.c), got {GUEST!r}"
    assert sprawling.engine_available(), "these tests need a build with the engine"


def run(*args, sandbox=None, **kwargs):
    kwargs.setdefault("fuel", FUEL)
    return (sandbox or sprawling.Sandbox()).run(GUEST, argv=["guest", *args], **kwargs)


# ---- outcome kinds ----


def test_success_with_output_and_stats():
    out = run("hello")
    assert out.exit == sprawling.Exit("success")
    assert out.exit.kind == "success" and out.exit.code == 0 and out.exit.message is None
    assert out.stdout == b"hello\n" and out.stderr == b""
    assert 0 < out.stats.fuel_consumed < FUEL
    assert out.stats.wall_time > 0
    assert out.stats.peak_memory_bytes >= 65536
    assert not out.stats.stdout_truncated and not out.stats.stderr_truncated


def test_failure_carries_the_exit_code():
    out = run("exit", "7")
    assert out.exit.kind == "failure" and out.exit.code == 7


def test_fuel_exhausted_is_an_outcome_not_an_error():
    out = run("loop", fuel=100_000)
    assert out.exit.kind == "fuel_exhausted"
    assert out.stats.fuel_consumed == 100_000


def test_trap_carries_its_message():
    out = run("trap")
    assert out.exit.kind == "trap"
    assert "unreachable" in out.exit.message


def test_timeout_ends_the_run_as_a_deadline_trap():
    out = run("loop", sandbox=sprawling.Sandbox(timeout=0.05), fuel=None)
    assert out.exit == sprawling.Exit("trap", 0, "deadline exceeded")


def test_stderr_is_captured_apart():
    out = run("stderr")
    assert out.stdout == b"" and out.stderr == b"to stderr\n"


def test_stdin_reaches_the_guest_byte_for_byte():
    data = bytes(range(256)) * 10
    assert run("cat", stdin=data).stdout == data
    assert run("cat", stdin=bytearray(b"ab")).stdout == b"ab"
    assert run("cat", stdin=memoryview(b"cd")).stdout == b"cd"


def test_argv_and_env_as_mapping_or_pairs():
    assert run("args", "x", "y z", env={"K": "V"}).stdout == b"x\ny z\nK=V\n"
    assert run("args", env=[("K", "a=b"), ("OTHER", "")]).stdout == b"K=a=b\n"
    assert run("args").stdout == b"K=(unset)\n"


def test_argv_defaults_to_the_module_name():
    out = sprawling.Sandbox().run(GUEST, fuel=FUEL)  # argv == ["capi_guest.wasm"]: no command, so "hello"
    assert out.stdout == b"hello\n"


# ---- module forms ----


def test_module_from_path_str_pathlike_and_bytes():
    path = pathlib.Path(GUEST)
    sb = sprawling.Sandbox()
    assert sb.run(str(path), argv=["g", "hello"], fuel=FUEL).stdout == b"hello\n"
    assert sb.run(path, argv=["g", "hello"], fuel=FUEL).stdout == b"hello\n"
    binary = path.read_bytes()
    assert sb.run(binary, argv=["g", "hello"], fuel=FUEL).stdout == b"hello\n"
    assert sb.run(bytearray(binary), argv=["g", "hello"], fuel=FUEL).stdout == b"hello\n"
    assert sb.run(OK_WAT, fuel=FUEL).stdout == b"ok\n"


def test_text_module_from_a_file(tmp_path):
    wat = tmp_path / "ok.wat"
    wat.write_bytes(OK_WAT)
    assert sprawling.Sandbox().run(wat, fuel=FUEL).stdout == b"ok\n"


# ---- every error code of the seam ----


def test_denied_import_is_E_SANDBOX_DENIED():
    with pytest.raises(sprawling.SandboxError) as info:
        sprawling.Sandbox().run(DENIED_WAT, fuel=FUEL)
    assert info.value.code == "E_SANDBOX_DENIED"
    assert info.value.detail == {"import": "env::open_socket"}
    assert isinstance(info.value, Exception)
    assert str(info.value).startswith("E_SANDBOX_DENIED: ") and info.value.message in str(info.value)


def test_malformed_bytes_are_E_INVALID_MODULE_named_as_bytes():
    with pytest.raises(sprawling.SandboxError) as info:
        sprawling.Sandbox().run(b"\0asm\x09\x09\x09\x09", fuel=FUEL)
    assert info.value.code == "E_INVALID_MODULE"
    assert "the module bytes" in info.value.message and "/proc/" not in info.value.message


def test_missing_module_file_is_E_INVALID_JOB(tmp_path):
    with pytest.raises(sprawling.SandboxError) as info:
        sprawling.Sandbox().run(tmp_path / "absent.wasm", fuel=FUEL)
    assert info.value.code == "E_INVALID_JOB"
    assert str(tmp_path / "absent.wasm") in info.value.message


def test_missing_mount_directory_is_E_INVALID_JOB(tmp_path):
    with pytest.raises(sprawling.SandboxError) as info:
        run("hello", mounts=[sprawling.Mount(tmp_path / "absent", "/in")])
    assert info.value.code == "E_INVALID_JOB"


def test_nul_in_argv_is_E_INVALID_JOB():
    with pytest.raises(sprawling.SandboxError) as info:
        run("a\0b")
    assert info.value.code == "E_INVALID_JOB"


def test_exit_status_outside_wasi_range_is_E_SANDBOX_HOST():
    with pytest.raises(sprawling.SandboxError) as info:
        run("exit", "200")
    assert info.value.code == "E_SANDBOX_HOST"
    assert info.value.detail.get("exit_code") == "200"


def test_absent_python_artifact_is_E_TOOL_UNAVAILABLE(monkeypatch, tmp_path):
    monkeypatch.setenv("SPRAWLING_PYTHON_WASM", str(tmp_path / "python.wasm"))
    monkeypatch.setenv("SPRAWLING_PYTHON_LIB", str(tmp_path / "lib"))
    with pytest.raises(sprawling.SandboxError) as info:
        sprawling.python(["-c", "pass"])
    assert info.value.code == "E_TOOL_UNAVAILABLE"
    assert "scripts/build-python-wasi" in info.value.message


# ---- mounts ----


@pytest.fixture
def dirs(tmp_path):
    ro = tmp_path / "ro"
    rw = tmp_path / "rw"
    ro.mkdir()
    rw.mkdir()
    (ro / "in.txt").write_text("from host")
    return ro, rw


def test_read_only_mount_is_readable(dirs):
    ro, _ = dirs
    out = run("read", "/in/in.txt", mounts=[sprawling.Mount(ro, "/in", writable=False)])
    assert out.exit.kind == "success" and out.stdout == b"from host"


def test_read_only_mount_refuses_writes(dirs):
    ro, _ = dirs
    out = run("write", "/in/new.txt", "data", mounts=[sprawling.Mount(str(ro), "/in")])
    assert out.exit == sprawling.Exit("failure", 3)
    assert b"write /in/new.txt" in out.stderr
    assert not (ro / "new.txt").exists()


def test_writable_mount_takes_writes(dirs):
    _, rw = dirs
    out = run("write", "/out/new.txt", "data", mounts=[sprawling.Mount(rw, "/out", writable=True)])
    assert out.exit.kind == "success"
    assert (rw / "new.txt").read_text() == "data"


def test_unmounted_paths_are_invisible(dirs):
    out = run("read", "/in/in.txt")
    assert out.exit == sprawling.Exit("failure", 3)


# ---- limits ----


def test_memory_cap_refuses_growth():
    sb = sprawling.Sandbox(max_memory_bytes=16 << 20)
    out = run("grow", "64", sandbox=sb, fuel=None)
    assert out.exit == sprawling.Exit("failure", 4)
    assert out.stats.peak_memory_bytes <= 16 << 20
    assert run("grow", "4", sandbox=sb, fuel=None).exit.kind == "success"


def test_output_caps_truncate_and_say_so():
    out = run("hello", sandbox=sprawling.Sandbox(max_stdout_bytes=3))
    assert out.stats.stdout_truncated and len(out.stdout) <= 3
    out = run("stderr", sandbox=sprawling.Sandbox(max_stderr_bytes=2))
    assert out.stats.stderr_truncated and len(out.stderr) <= 2


def test_unmetered_fuel_ignores_the_budget():
    out = run("hello", sandbox=sprawling.Sandbox(meter_fuel=False), fuel=1)
    assert out.exit.kind == "success" and out.stats.fuel_consumed == 0


def test_deterministic_settings_are_accepted():
    sb = sprawling.Sandbox(deterministic=True, random_seed=42, hostcall_copy_limit=1 << 20)
    assert run("hello", sandbox=sb).stdout == b"hello\n"
    assert "deterministic=True" in repr(sb)


def test_nan_canonicalization_gives_the_canonical_nan_on_every_tier():
    tiers = ["interpret"] + (["compile"] if sprawling.compiled_tier_available() else [])
    for tier in tiers:
        plain = sprawling.Sandbox(tier=tier).run(NAN_SIGN_WAT, fuel=FUEL)
        assert plain.exit.kind == "failure" and plain.exit.code == 1, (tier, plain.exit)  # x86's 0xFFC00000
        for kwargs in ({"nan_canonicalization": True}, {"deterministic": True}):
            out = sprawling.Sandbox(tier=tier, **kwargs).run(NAN_SIGN_WAT, fuel=FUEL)
            assert out.exit.kind == "success", (tier, kwargs, out.exit)  # 0x7FC00000
            assert out.stats.fuel_consumed == plain.stats.fuel_consumed
    assert "nan_canonicalization=True" in repr(sprawling.Sandbox(nan_canonicalization=True))


def test_output_sinks_see_the_output_as_it_is_written():
    seen = {"out": [], "err": []}
    sb = sprawling.Sandbox(on_stdout=seen["out"].append, on_stderr=seen["err"].append)
    out = run("cat", sandbox=sb, stdin=b"x" * 100_000)
    assert b"".join(seen["out"]) == out.stdout == b"x" * 100_000
    assert seen["err"] == []
    run("stderr", sandbox=sb)
    assert b"".join(seen["err"]) == b"to stderr\n"


def test_an_exception_in_a_sink_is_raised_after_the_run():
    def refuse(_data):
        raise KeyError("sink says no")

    sb = sprawling.Sandbox(on_stdout=refuse)
    with pytest.raises(KeyError, match="sink says no"):
        run("hello", sandbox=sb)
    assert run("stderr", sandbox=sb).stderr == b"to stderr\n"  # the next run starts clean


# ---- the resource limits ----


@pytest.mark.parametrize("setting, refused, admitted, module", [
    ("max_tables", 1, 2, TWO_TABLES_WAT),
    ("max_table_elements", 999, 1000, BIG_TABLE_WAT),
    ("max_memories", 0, 1, ONE_MEMORY_WAT),
    ("max_store_bytes", 4096, 1 << 20, ONE_MEMORY_WAT),  # a 64 KiB memory does not fit 4 KiB
])
def test_resource_limits_refuse_modules_past_them(setting, refused, admitted, module):
    assert sprawling.Sandbox().run(module, fuel=FUEL).exit.kind == "success"  # the defaults admit it
    with pytest.raises(sprawling.SandboxError) as info:
        sprawling.Sandbox(**{setting: refused}).run(module, fuel=FUEL)
    assert info.value.code == "E_INVALID_MODULE"
    assert sprawling.Sandbox(**{setting: admitted}).run(module, fuel=FUEL).exit.kind == "success"
    assert f"{setting}={refused}" in repr(sprawling.Sandbox(**{setting: refused}))


def test_store_limit_refuses_memory_growth():
    out = run("grow", "64", sandbox=sprawling.Sandbox(max_store_bytes=16 << 20), fuel=None)
    assert out.exit == sprawling.Exit("failure", 4)


def test_disk_quota_fails_writes_past_it_and_is_measured(dirs):
    _, rw = dirs
    mount = [sprawling.Mount(rw, "/out", writable=True)]
    out = run("write", "/out/f.txt", "data", mounts=mount, sandbox=sprawling.Sandbox(max_disk_write_bytes=4))
    assert out.exit.kind == "success" and out.stats.disk_write_bytes == 4
    out = run("write", "/out/g.txt", "data", mounts=mount, sandbox=sprawling.Sandbox(max_disk_write_bytes=3))
    assert out.exit == sprawling.Exit("failure", 3)
    assert out.stats.disk_write_bytes <= 3
    assert run("hello").stats.disk_write_bytes == 0


# ---- tiers ----


def test_tiers_give_the_same_output_and_fuel(tmp_path):
    assert sprawling.tiers()[:3] == ("interpret", "compile", "auto")
    interpreted = sprawling.Sandbox(tier="interpret").run(OK_WAT, fuel=FUEL)
    assert interpreted.stdout == b"ok\n"
    auto = sprawling.Sandbox(tier="auto", code_cache_dir=tmp_path / "code", code_cache_max_bytes=1 << 26)
    automatic = auto.run(OK_WAT, fuel=FUEL)
    assert automatic.stdout == interpreted.stdout
    assert automatic.stats.fuel_consumed == interpreted.stats.fuel_consumed
    compiling = sprawling.Sandbox(tier="compile", compile_memory_bytes=1 << 26)
    if sprawling.compiled_tier_available():
        compiled = compiling.run(OK_WAT, fuel=FUEL)
        assert compiled.stdout == interpreted.stdout
        assert compiled.stats.fuel_consumed == interpreted.stats.fuel_consumed
    else:
        with pytest.raises(sprawling.SandboxError) as info:
            compiling.run(OK_WAT, fuel=FUEL)
        assert info.value.code == "E_TOOL_UNAVAILABLE" and info.value.alternative


# A child Python with tier-up: the spin guest's loop turns hot (1,000-call threshold, read once per
# process, hence a process of its own) and is compiled; its runs give the interpreter's outcome
# before and after; the first Sandbox(tier_up=True), and only it, registers the stop at exit; the
# child then ends right after a job that makes another function hot, without waiting for its
# compilation, which that handler must stop for the exit to be clean.
_TIER_UP_CHILD = textwrap.dedent("""
    import atexit, sys, time
    registered = []
    real_register = atexit.register
    def recording_register(function, *args, **kwargs):
        registered.append(function)
        return real_register(function, *args, **kwargs)
    atexit.register = recording_register
    import sprawling

    guest, spin = sys.argv[1], ["guest", "spin", "200000"]
    expected = sprawling.Sandbox(tier="interpret").run(guest, argv=spin)
    assert expected.exit.kind == "success", expected
    assert registered == [], registered
    sandbox = sprawling.Sandbox(tier="auto", tier_up=True)
    sprawling.Sandbox(tier_up=True)
    assert registered == [sprawling.stop_tier_up], registered
    def same(out):
        got = (out.exit, out.stdout, out.stats.fuel_consumed)
        assert got == (expected.exit, expected.stdout, expected.stats.fuel_consumed), (out, expected)
    same(sandbox.run(guest, argv=spin))  # spin turns hot: its compilation is queued
    deadline = time.monotonic() + 120  # a generous bound for one small function, not a timing test
    while sprawling.tier_up_busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not sprawling.tier_up_busy()
    same(sandbox.run(guest, argv=spin))  # spin's machine code, where the compiled tier is built
    # main's loop turns hot too; the child exits without waiting for that compilation.
    out = sandbox.run(guest, argv=["guest", "loop"], fuel=10_000_000)
    assert out.exit.kind == "fuel_exhausted" and out.stats.fuel_consumed == 10_000_000, out
    print("compiled" if sprawling.compiled_tier_available() else "interpreted", flush=True)
""")


# The plugin absent stands for a build without the compiled tier: tier_up is accepted and the
# jobs are interpreted, with the same outcome, and nothing is compiled.
@pytest.mark.parametrize("plugin", [None, "/nonexistent/libsprawling_jit_plugin.so"])
def test_tier_up_gives_the_interpreter_outcome_and_stops_at_exit(plugin):
    env = {**os.environ, "SPRAWLING_JIT_TIER_UP_CALLS": "1000", "SPRAWLING_JIT_PERFMAP": "1"}
    if plugin is not None:
        env["SPRAWLING_JIT_PLUGIN"] = plugin
    child = subprocess.Popen([sys.executable, "-c", _TIER_UP_CHILD, GUEST], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    perf_map = pathlib.Path(f"/tmp/perf-{child.pid}.map")  # SPRAWLING_JIT_PERFMAP: what tier-up compiled
    try:
        stdout, stderr = child.communicate(timeout=240)
        assert child.returncode == 0, stderr.decode(errors="replace")
        if plugin is None and sprawling.compiled_tier_available():
            assert stdout == b"compiled\n"
            assert perf_map.stat().st_size > 0
        else:
            assert stdout == b"interpreted\n"
            assert not perf_map.exists()
    finally:
        perf_map.unlink(missing_ok=True)


# ---- snapshots ----


def test_snapshot_starts_from_the_initialised_instance_and_is_kept_in_the_folder(tmp_path):
    folder = tmp_path / "snapshots"  # created by the sandbox
    sb = sprawling.Sandbox(snapshot_dir=folder)
    # argv[0] is part of the snapshot's key: this test's own, so that it builds (and saves) one.
    for _ in range(2):
        out = sb.run(SNAPSHOT_WAT, argv=["pymodule-snapshot-dir"], fuel=FUEL)
        assert out.stdout == b"snap\n" and out.stats.from_snapshot
    assert any(folder.iterdir())
    cold = sb.run(SNAPSHOT_WAT, argv=["pymodule-snapshot-dir"], fuel=FUEL, snapshot=False)
    assert cold.stdout == b"cold\n" and not cold.stats.from_snapshot
    init = sb.run(SNAPSHOT_WAT, argv=["pymodule-snapshot-dir"], fuel=FUEL, snapshot_init_mounts=1,
                  mounts=[sprawling.Mount(tmp_path, "/init")])
    assert init.stdout == b"snap\n" and init.stats.from_snapshot


# ---- streamed stdin ----


def test_stdin_streamed_from_a_pipe_and_a_file(tmp_path):
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"through a pipe\n")
        os.close(write_end)
        assert run("cat", stdin=read_end).stdout == b"through a pipe\n"
    finally:
        os.close(read_end)
    path = tmp_path / "input.bin"
    path.write_bytes(bytes(range(256)) * 100)
    with open(path, "rb") as f:
        assert run("cat", stdin=f).stdout == path.read_bytes()


# ---- threads ----

# Guest work long enough that starting two threads is small beside it: about 0.15 s interpreted on
# the machines CI runs on (3 million rounds took 8 ms there, so two threads' start-up alone could
# make four runs look serialized: 0.040 s of runs within 0.033 s).
SPIN = "60000000"


def test_jobs_from_threads_overlap_so_the_gil_is_released():
    # An ordering no serialized binding can produce, with no clock involved: job A (thread) is
    # inside the engine, waiting for its stdin; meanwhile this thread runs job B from start to
    # end and only then gives A its input. With the GIL held during a run (ctypes.PyDLL), B could
    # not start until A ended and A would wait for input forever: its deadline (30 s) then ends it
    # as a trap and the assertions below fail.
    sb = sprawling.Sandbox(timeout=30.0)  # one Sandbox shared by both threads
    ready = threading.Event()
    read_end, write_end = os.pipe()
    result = {}

    def job_a():
        inner = sprawling.Sandbox(timeout=30.0, on_stdout=lambda data: ready.set())
        result["a"] = run("ready", sandbox=inner, stdin=read_end, fuel=None)

    worker = threading.Thread(target=job_a)
    worker.start()
    try:
        assert ready.wait(30.0), "job A never started"
        # A is now blocked inside sprawling_run, reading the pipe.
        b = run("spin", "100000", sandbox=sb, fuel=None)
        assert b.exit.kind == "success"
        os.write(write_end, b"after B\n")
    finally:
        os.close(write_end)
        worker.join(60.0)
        os.close(read_end)
    a = result["a"]
    assert a.exit.kind == "success", a.exit
    assert a.stdout == b"ready\nafter B\n"


def test_parallel_jobs_from_threads_overlap():
    # Each run's wall time (measured inside the engine) spans its whole interval, so when runs
    # from two threads overlap, their wall times add up to more than the phase took; serialized
    # runs (a held GIL, a lock) could never add up to more than the elapsed time. This holds on
    # a loaded machine too: both runs are in flight whether or not a core is free. The speed-up
    # itself is a figure of tests/pymodule/bench.py, not an assertion.
    sb = sprawling.Sandbox()  # one shared Sandbox: each run gets its own engine sandbox
    jobs = 4
    outs = []
    lock = threading.Lock()

    def work():
        for _ in range(jobs // 2):
            o = run("spin", SPIN, sandbox=sb, fuel=None)
            with lock:
                outs.append(o)

    start = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    parallel_s = time.perf_counter() - start
    assert len(outs) == jobs and all(o.exit.kind == "success" for o in outs)
    assert len({o.stdout for o in outs}) == 1
    in_runs = sum(o.stats.wall_time for o in outs)
    assert in_runs > 1.3 * parallel_s, f"runs took {in_runs:.3f} s in total within {parallel_s:.3f} s: not concurrent"


# ---- bad arguments: one case (at least) per parameter ----


@pytest.mark.parametrize("kwargs, error", [
    ({"max_memory_bytes": "1G"}, TypeError),
    ({"max_memory_bytes": -1}, ValueError),
    ({"timeout": "5"}, TypeError),
    ({"timeout": 0}, ValueError),
    ({"timeout": float("nan")}, ValueError),
    ({"max_stdout_bytes": 1.5}, TypeError),
    ({"max_stderr_bytes": 1 << 64}, ValueError),
    ({"meter_fuel": 1}, TypeError),
    ({"deterministic": "yes"}, TypeError),
    ({"nan_canonicalization": 1}, TypeError),
    ({"random_seed": -3}, ValueError),
    ({"hostcall_copy_limit": "big"}, TypeError),
    ({"on_stdout": b"not callable"}, TypeError),
    ({"on_stderr": 3}, TypeError),
    ({"max_table_elements": 1 << 32}, ValueError),
    ({"max_table_elements": "many"}, TypeError),
    ({"max_tables": -1}, ValueError),
    ({"max_tables": 2.0}, TypeError),
    ({"max_memories": 1 << 32}, ValueError),
    ({"max_memories": True}, TypeError),
    ({"max_store_bytes": 1 << 64}, ValueError),
    ({"max_store_bytes": "1G"}, TypeError),
    ({"max_disk_write_bytes": -5}, ValueError),
    ({"max_disk_write_bytes": 1e9}, TypeError),
    ({"tier": "fast"}, ValueError),
    ({"tier": 1}, TypeError),
    ({"tier_up": 1}, TypeError),
    ({"tier_up": None}, TypeError),
    ({"snapshot_dir": ""}, ValueError),
    ({"snapshot_dir": 7}, TypeError),
    ({"code_cache_dir": ""}, ValueError),
    ({"code_cache_dir": 7}, TypeError),
    ({"code_cache_max_bytes": 0}, ValueError),
    ({"code_cache_max_bytes": -1}, ValueError),
    ({"code_cache_max_bytes": "1"}, TypeError),
    ({"compile_memory_bytes": -1}, ValueError),
    ({"compile_memory_bytes": "1"}, TypeError),
])
def test_bad_sandbox_arguments(kwargs, error):
    name = next(iter(kwargs))
    with pytest.raises(error, match=name):
        sprawling.Sandbox(**kwargs)


def test_sandbox_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        sprawling.Sandbox(256 << 20)  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"wasm": 123}, TypeError, "wasm"),
    ({"wasm": ""}, ValueError, "wasm"),
    ({"wasm": "a\0b"}, ValueError, "wasm"),
    ({"argv": "guest"}, TypeError, "argv"),
    ({"argv": ["guest", 1]}, TypeError, r"argv\[1\]"),
    ({"env": "K=V"}, TypeError, "env"),
    ({"env": {1: "x"}}, TypeError, "env name"),
    ({"env": {"K": 2}}, TypeError, "env"),
    ({"env": {"A=B": "x"}}, ValueError, "env name"),
    ({"env": [("K",)]}, TypeError, "env entries"),
    ({"stdin": "text"}, TypeError, "stdin"),
    ({"stdin": 5.0}, TypeError, "stdin"),
    ({"stdin": -1}, ValueError, "stdin"),
    ({"stdin": io.BytesIO(b"no fd")}, TypeError, "stdin"),
    ({"snapshot": "yes"}, TypeError, "snapshot"),
    ({"snapshot_init_mounts": -1}, ValueError, "snapshot_init_mounts"),
    ({"snapshot_init_mounts": "1"}, TypeError, "snapshot_init_mounts"),
    ({"snapshot_init_mounts": 1}, ValueError, "snapshot_init_mounts"),  # the job has no mount
    ({"mounts": sprawling.Mount("/tmp", "/t")}, TypeError, "mounts"),
    ({"mounts": ["/tmp"]}, TypeError, "mounts entries"),
    ({"fuel": -1}, ValueError, "fuel"),
    ({"fuel": 1.5}, TypeError, "fuel"),
    ({"fuel": 1 << 64}, ValueError, "fuel"),
])
def test_bad_run_arguments(kwargs, error, match):
    call = {"wasm": GUEST, "argv": ["guest", "hello"], "fuel": FUEL, **kwargs}
    wasm = call.pop("wasm")
    with pytest.raises(error, match=match):
        sprawling.Sandbox().run(wasm, **call)


def test_a_closed_stdin_fd_is_refused():
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.close(write_end)
    with pytest.raises(ValueError, match=f"stdin file descriptor {read_end} is not open"):
        run("cat", stdin=read_end)


@pytest.mark.parametrize("args, error, match", [
    (("/tmp", "relative"), ValueError, "absolute"),
    ((1, "/t"), TypeError, "host"),
    (("/tmp", b"/t"), TypeError, "guest"),
    (("/tmp", "/t", "yes"), TypeError, "writable"),
    (("/tmp", "/t\0"), ValueError, "NUL"),
])
def test_bad_mount_arguments(args, error, match):
    with pytest.raises(error, match=match):
        sprawling.Mount(*args)


def test_bad_python_arguments():
    with pytest.raises(TypeError, match="args"):
        sprawling.python("-c print(1)")
    with pytest.raises(TypeError, match="sandbox"):
        sprawling.python(["-c", "pass"], sandbox="fast")
    with pytest.raises(ValueError, match="/usr/local/lib"):
        sprawling.python(["-c", "pass"], mounts=[sprawling.Mount("/tmp", "/usr/local/lib")])
    with pytest.raises(TypeError, match="snapshot"):
        sprawling.python(["-c", "pass"], snapshot="no")
    with pytest.raises(TypeError, match="env"):
        sprawling.python(["-c", "pass"], env="PYTHONPATH=/x")


def test_version_and_engine():
    assert sprawling.version().count(".") == 2
    assert sprawling.engine_available() is True


# ---- the python arm (only when its artifact has been built) ----


def python_artifact_present():
    try:
        sprawling._python_artifact()
        return True
    except sprawling.SandboxError:
        return False


needs_python = pytest.mark.skipif(not python_artifact_present(),
                                  reason="no CPython-for-WASI artifact (scripts/build-python-wasi, or "
                                         "SPRAWLING_PYTHON_WASM/SPRAWLING_PYTHON_LIB)")


@needs_python
def test_python_arm_runs_code_and_reads_stdin(dirs):
    ro, rw = dirs
    sb = sprawling.Sandbox(timeout=60.0)
    out = sprawling.python(["-c", "import sys; print(sys.stdin.read().upper(), open('/in/in.txt').read())"],
                           stdin=b"abc", mounts=[sprawling.Mount(ro, "/in")], fuel=10**11, sandbox=sb)
    assert out.exit.kind == "success", out.stderr
    assert out.stdout == b"ABC from host\n"


@needs_python
def test_python_arm_starts_from_a_snapshot_unless_told_not_to():
    sb = sprawling.Sandbox(timeout=60.0)
    warm = [sb.python(["-c", "import sys; print(sys.argv)", "x"], fuel=10**11) for _ in range(2)]
    assert all(o.exit.kind == "success" and o.stdout == b"['-c', 'x']\n" for o in warm), warm[0].stderr
    assert warm[1].stats.from_snapshot
    cold = sb.python(["-c", "import sys; print(sys.argv)", "x"], fuel=10**11, snapshot=False)
    assert cold.stdout == warm[1].stdout and not cold.stats.from_snapshot
    assert cold.stats.fuel_consumed > warm[1].stats.fuel_consumed  # the initialisation is not paid again
    # A command line the snapshot cannot honour starts cold, as `sprawl python` does.
    assert not sb.python(["-X", "dev", "-c", "pass"], fuel=10**11).stats.from_snapshot
    assert not sb.python(["-c", "pass"], env={"PYTHONHASHSEED": "0"}, fuel=10**11).stats.from_snapshot


@needs_python
def test_python_job_is_what_sandbox_python_runs_for_map_and_run_async():
    sb = sprawling.Sandbox(timeout=60.0)
    direct = sb.python(["-c", "import sys; print(sys.stdin.read() * 2)"], stdin=b"ab", fuel=10**11)
    job = sprawling.python_job(["-c", "import sys; print(sys.stdin.read() * 2)"], stdin=b"ab", fuel=10**11)
    assert job.argv[0] == "python" and job.snapshot and job.snapshot_init_mounts == 1
    mapped = sb.map([job, job], max_workers=2)
    awaited = asyncio.run(sb.run_async(job))
    for out in (*mapped, awaited):
        assert out.exit == direct.exit and out.stdout == direct.stdout == b"abab\n", out.stderr
        assert out.stats.fuel_consumed == direct.stats.fuel_consumed and out.stats.from_snapshot
    # A command line the snapshot cannot honour makes a job that starts cold, as Sandbox.python does.
    assert not sprawling.python_job(["-X", "dev", "-c", "pass"]).snapshot
    with pytest.raises(ValueError, match="standard library"):
        sprawling.python_job(["-c", "pass"], mounts=[sprawling.Mount("/tmp", "/usr/local/lib")])


@needs_python
def test_python_arm_failure_and_fuel():
    sb = sprawling.Sandbox(timeout=60.0)
    assert sb.python(["-c", "raise SystemExit(3)"], fuel=10**11).exit == sprawling.Exit("failure", 3)
    assert sb.python(["-c", "while True: pass"], fuel=10**6).exit.kind == "fuel_exhausted"
