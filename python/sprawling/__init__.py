# The `sprawling` Python module: runs wasip1 command modules in the sprawling-runtime sandbox,
# through the C API (libsprawling.so.0) with the standard library's ctypes.
"""Run WebAssembly (wasip1) command modules in the sprawling-runtime sandbox.

    import sprawling
    sb = sprawling.Sandbox(max_memory_bytes=256 << 20, timeout=5.0)
    out = sb.run(wasm="guest.wasm", argv=["guest", "x"], fuel=100_000_000)
    out.exit.kind, out.stdout, out.stats.fuel_consumed

Every call into the library releases the GIL (ctypes.CDLL does so for each foreign call), so
jobs run in parallel from several Python threads, on one Sandbox or several.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, Optional, Union

__all__ = [
    "Exit",
    "Mount",
    "Outcome",
    "Sandbox",
    "SandboxError",
    "Stats",
    "engine_available",
    "python",
    "version",
]

_U64_MAX = (1 << 64) - 1


class SandboxError(Exception):
    """The job did not run. `code` is the stable code (test on it, never on the message):
    E_TOOL_UNAVAILABLE, E_SANDBOX_DENIED, E_SANDBOX_HOST, E_INVALID_MODULE or E_INVALID_JOB."""

    def __init__(self, code: str, message: str, alternative: Optional[str] = None,
                 detail: Optional[dict[str, str]] = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.alternative = alternative
        self.detail: dict[str, str] = dict(detail or {})


@dataclass(frozen=True)
class Mount:
    """A host directory the guest sees at an absolute guest path; read-only unless writable."""

    host: Union[str, os.PathLike]
    guest: str
    writable: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.host, (str, os.PathLike)):
            raise TypeError(f"Mount host must be a str or os.PathLike path, not {type(self.host).__name__}")
        if not isinstance(self.guest, str):
            raise TypeError(f"Mount guest must be a str, not {type(self.guest).__name__}")
        if "\0" in self.guest or b"\0" in os.fsencode(self.host):
            raise ValueError(f"Mount paths must hold no NUL character: {self.host!r}, {self.guest!r}")
        if not self.guest.startswith("/"):
            raise ValueError(f"Mount guest path must be absolute (start with '/'): {self.guest!r}")
        if not isinstance(self.writable, bool):
            raise TypeError(f"Mount writable must be a bool, not {type(self.writable).__name__}")


@dataclass(frozen=True)
class Exit:
    """How the guest ended: kind is "success", "failure", "fuel_exhausted" or "trap"; code is the
    exit status for "failure" (0 otherwise); message is the trap's text for "trap" (else None)."""

    kind: str
    code: int = 0
    message: Optional[str] = None


@dataclass(frozen=True)
class Stats:
    """Measurements of the run: fuel consumed (exact), wall time in seconds, peak linear memory."""

    fuel_consumed: int
    wall_time: float
    peak_memory_bytes: int
    stdout_truncated: bool
    stderr_truncated: bool


@dataclass(frozen=True)
class Outcome:
    """What a guest that ran produced."""

    exit: Exit
    stdout: bytes
    stderr: bytes
    stats: Stats


# ---- the library --------------------------------------------------------------------------


class _Handle(ctypes.c_void_p):
    """An opaque handle (sprawling_config*, sprawling_job* …)."""


# sprawling_output_sink: void (*)(void* user, const uint8_t* bytes, size_t len)
_SINK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t)


def _library_candidates() -> list[str]:
    explicit = os.environ.get("SPRAWLING_LIBRARY")
    if explicit:
        return [explicit]  # a wrong setting must fail, not fall back silently
    candidates = []
    try:
        from . import _paths  # written by `cmake --install`: where the library went

        candidates.append(os.path.normpath(os.path.join(os.path.dirname(__file__), _paths.LIBRARY)))
    except ImportError:
        pass
    candidates.append("libsprawling.so.0")  # the dynamic loader's search (ld.so.conf, LD_LIBRARY_PATH)
    return candidates


def _load() -> ctypes.CDLL:
    problems = []
    for candidate in _library_candidates():
        try:
            lib = ctypes.CDLL(candidate)
            break
        except OSError as e:
            problems.append(f"{candidate}: {e}")
    else:
        raise ImportError("sprawling: cannot load the C library libsprawling.so.0 (tried " + "; ".join(problems) +
                          "); install sprawling-runtime or set SPRAWLING_LIBRARY to its path")
    h, u64, i, sz, cp, st = _Handle, ctypes.c_uint64, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int
    bp = ctypes.POINTER(ctypes.c_uint8)
    signatures = {
        "sprawling_version": (cp, []),
        "sprawling_engine_available": (i, []),
        "sprawling_config_new": (st, [ctypes.POINTER(h)]),
        "sprawling_config_free": (None, [h]),
        "sprawling_config_set_max_memory_bytes": (st, [h, u64]),
        "sprawling_config_set_timeout_ns": (st, [h, u64]),
        "sprawling_config_clear_timeout": (st, [h]),
        "sprawling_config_set_max_stdout_bytes": (st, [h, u64]),
        "sprawling_config_set_max_stderr_bytes": (st, [h, u64]),
        "sprawling_config_set_meter_fuel": (st, [h, i]),
        "sprawling_config_set_deterministic": (st, [h, i]),
        "sprawling_config_set_random_seed": (st, [h, u64]),
        "sprawling_config_set_hostcall_copy_limit": (st, [h, u64]),
        "sprawling_config_set_stdout_sink": (st, [h, _SINK, ctypes.c_void_p]),
        "sprawling_config_set_stderr_sink": (st, [h, _SINK, ctypes.c_void_p]),
        "sprawling_sandbox_new": (st, [h, ctypes.POINTER(h)]),
        "sprawling_sandbox_free": (None, [h]),
        "sprawling_job_new": (st, [ctypes.POINTER(h)]),
        "sprawling_job_free": (None, [h]),
        "sprawling_job_set_module_path": (st, [h, cp]),
        "sprawling_job_set_module_bytes": (st, [h, cp, sz]),
        "sprawling_job_add_arg": (st, [h, cp, sz]),
        "sprawling_job_add_env": (st, [h, cp, sz, cp, sz]),
        "sprawling_job_set_stdin": (st, [h, cp, sz]),
        "sprawling_job_add_mount": (st, [h, cp, cp, i]),
        "sprawling_job_set_fuel": (st, [h, u64]),
        "sprawling_run": (st, [h, h, ctypes.POINTER(h), ctypes.POINTER(h)]),
        "sprawling_outcome_free": (None, [h]),
        "sprawling_outcome_exit_kind": (i, [h]),
        "sprawling_outcome_exit_code": (u64, [h]),
        "sprawling_outcome_trap_message": (cp, [h]),
        "sprawling_outcome_stdout": (bp, [h, ctypes.POINTER(sz)]),
        "sprawling_outcome_stderr": (bp, [h, ctypes.POINTER(sz)]),
        "sprawling_outcome_fuel_consumed": (u64, [h]),
        "sprawling_outcome_wall_time_ns": (u64, [h]),
        "sprawling_outcome_peak_memory_bytes": (u64, [h]),
        "sprawling_outcome_stdout_truncated": (i, [h]),
        "sprawling_outcome_stderr_truncated": (i, [h]),
        "sprawling_error_free": (None, [h]),
        "sprawling_error_code": (cp, [h]),
        "sprawling_error_message": (cp, [h]),
        "sprawling_error_alternative": (cp, [h]),
        "sprawling_error_detail_count": (sz, [h]),
        "sprawling_error_detail_key": (cp, [h, sz]),
        "sprawling_error_detail_value": (cp, [h, sz]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_lib = _load()
_OK, _ERROR, _EINVAL, _ENOMEM = 0, 1, 2, 3
_KINDS = {0: "success", 1: "failure", 2: "fuel_exhausted", 3: "trap"}


def _check(status: int, what: str) -> None:
    if status == _OK:
        return
    if status == _ENOMEM:
        raise MemoryError(f"sprawling: {what}: out of memory")
    # Arguments are validated here before they reach C, so EINVAL is the library's own fault.
    raise RuntimeError(f"sprawling: {what} refused its arguments (status {status})")


def version() -> str:
    """The C library's version, e.g. "0.1.0"."""
    return _lib.sprawling_version().decode()


def engine_available() -> bool:
    """False when the library was built without the engine (every run: E_TOOL_UNAVAILABLE)."""
    return bool(_lib.sprawling_engine_available())


# ---- argument checks ----------------------------------------------------------------------


def _u64(name: str, value: object, *, allow_none: bool = False) -> Optional[int]:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {expected}, not {type(value).__name__}")
    if value < 0 or value > _U64_MAX:
        raise ValueError(f"{name} must be between 0 and 2**64-1, got {value}")
    return value


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
    return value


def _text(name: str, value: object) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value.encode("utf-8", "surrogateescape")


def _bytes_like(name: str, value: object) -> bytes:
    if isinstance(value, str):
        raise TypeError(f"{name} must be bytes, not str (encode it first, e.g. text.encode())")
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, bytearray or memoryview, not {type(value).__name__}")
    return bytes(value)


# ---- sandbox ------------------------------------------------------------------------------


class Sandbox:
    """A sandbox configuration; run() runs one job under it. Safe to share between threads: each
    run gets its own engine sandbox, so runs from several threads proceed in parallel.

    max_memory_bytes   cap on the guest's linear memory (default 4 GiB, wasm32's whole space)
    timeout            wall-clock limit of one run in seconds (None: none); reaching it ends the
                       run with exit kind "trap" and message "deadline exceeded"
    max_stdout_bytes, max_stderr_bytes   caps on captured output (default 64 MiB each)
    meter_fuel         False: fuel is not metered at all (benchmarks only)
    deterministic, random_seed   reproducible runs: fixed clocks, seeded randomness
    hostcall_copy_limit  what one WASI call may take from guest memory (default 128 MiB)
    on_stdout, on_stderr   called with each piece of output (bytes) as the guest writes it, on
                       the thread running the job; an exception it raises is raised by run()
                       once the job has ended (the outcome still holds the whole output)
    """

    def __init__(self, *, max_memory_bytes: Optional[int] = None, timeout: Optional[float] = None,
                 max_stdout_bytes: Optional[int] = None, max_stderr_bytes: Optional[int] = None,
                 meter_fuel: bool = True, deterministic: bool = False, random_seed: int = 0,
                 hostcall_copy_limit: Optional[int] = None, on_stdout: Optional[Callable[[bytes], object]] = None,
                 on_stderr: Optional[Callable[[bytes], object]] = None) -> None:
        # Checked in full before anything is allocated, so a bad argument leaks nothing.
        u64_settings = {
            "max_memory_bytes": _u64("max_memory_bytes", max_memory_bytes, allow_none=True),
            "max_stdout_bytes": _u64("max_stdout_bytes", max_stdout_bytes, allow_none=True),
            "max_stderr_bytes": _u64("max_stderr_bytes", max_stderr_bytes, allow_none=True),
            "random_seed": _u64("random_seed", random_seed),
            "hostcall_copy_limit": _u64("hostcall_copy_limit", hostcall_copy_limit, allow_none=True),
        }
        timeout_ns = None
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
            if not math.isfinite(timeout) or timeout <= 0:
                raise ValueError(f"timeout must be a positive, finite number of seconds, got {timeout!r}")
            timeout_ns = max(1, round(timeout * 1e9))
            if timeout_ns > (1 << 63) - 1:
                raise ValueError(f"timeout is too large: {timeout!r} seconds")
        flags = {"meter_fuel": _flag("meter_fuel", meter_fuel), "deterministic": _flag("deterministic", deterministic)}
        for name, callback in (("on_stdout", on_stdout), ("on_stderr", on_stderr)):
            if callback is not None and not callable(callback):
                raise TypeError(f"{name} must be callable (it receives bytes) or None, not {type(callback).__name__}")

        self._config = _Handle()
        _check(_lib.sprawling_config_new(ctypes.byref(self._config)), "sprawling_config_new")
        for name, value in u64_settings.items():
            if value is not None:
                _check(getattr(_lib, "sprawling_config_set_" + name)(self._config, value), name)
        if timeout_ns is not None:
            _check(_lib.sprawling_config_set_timeout_ns(self._config, timeout_ns), "timeout")
        for name, value in flags.items():
            _check(getattr(_lib, "sprawling_config_set_" + name)(self._config, int(value)), name)
        # Sink exceptions are kept per thread (a sink runs on the thread running the job) and
        # raised once the job is over; the ctypes callbacks live as long as the config.
        self._sink_errors = threading.local()
        self._sinks = []
        for name, callback in (("stdout", on_stdout), ("stderr", on_stderr)):
            if callback is not None:
                sink = _SINK(_sink_calling(callback, self._sink_errors))
                self._sinks.append(sink)
                _check(getattr(_lib, f"sprawling_config_set_{name}_sink")(self._config, sink, None), "on_" + name)
        self._settings = {**{k: v for k, v in u64_settings.items() if v is not None}, **flags, "timeout": timeout}

    def __del__(self) -> None:
        config = getattr(self, "_config", None)
        if config and _lib is not None:  # _lib may already be gone at interpreter exit
            _lib.sprawling_config_free(config)
            self._config = None

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self._settings.items())
        return f"sprawling.Sandbox({settings})"

    def run(self, wasm: Union[str, os.PathLike, bytes, bytearray, memoryview], *,
            argv: Optional[Sequence[str]] = None, env: Optional[Union[Mapping[str, str], Iterable[tuple[str, str]]]] = None,
            stdin: Union[bytes, bytearray, memoryview] = b"", mounts: Iterable[Mount] = (),
            fuel: Optional[int] = None) -> Outcome:
        """Runs the module `wasm` (a path to a .wasm or .wat file, or the module's bytes) and
        returns its Outcome; raises SandboxError when the job cannot run. argv defaults to
        [the file's name] ("module" for bytes); fuel None means no budget (set one, or a timeout,
        for untrusted code)."""
        job = _Job()
        try:
            if isinstance(wasm, (bytes, bytearray, memoryview)):
                module = bytes(wasm)
                _check(_lib.sprawling_job_set_module_bytes(job.handle, module, len(module)), "wasm")
                default_name = "module"
            elif isinstance(wasm, (str, os.PathLike)):
                path = os.fsencode(wasm)
                if not path:
                    raise ValueError("wasm must be a non-empty path or the module's bytes")
                if b"\0" in path:
                    raise ValueError(f"wasm path holds a NUL character: {wasm!r}")
                _check(_lib.sprawling_job_set_module_path(job.handle, path), "wasm")
                default_name = os.path.basename(os.fsdecode(path))
            else:
                raise TypeError(f"wasm must be a path (str or os.PathLike) or the module's bytes, "
                                f"not {type(wasm).__name__}")
            job.fill(argv=argv if argv is not None else [default_name], env=env, stdin=stdin, mounts=mounts, fuel=fuel)
            return self._run(job)
        finally:
            job.free()

    def _run(self, job: "_Job") -> Outcome:
        self._sink_errors.first = None
        sandbox = _Handle()
        _check(_lib.sprawling_sandbox_new(self._config, ctypes.byref(sandbox)), "sprawling_sandbox_new")
        outcome, error = _Handle(), _Handle()
        try:
            status = _lib.sprawling_run(sandbox, job.handle, ctypes.byref(outcome), ctypes.byref(error))
        finally:
            _lib.sprawling_sandbox_free(sandbox)
        if status == _ERROR:
            raise _take_error(error)
        _check(status, "sprawling_run")
        try:
            result = _read_outcome(outcome)
        finally:
            _lib.sprawling_outcome_free(outcome)
        sink_error, self._sink_errors.first = self._sink_errors.first, None
        if sink_error is not None:
            raise sink_error
        return result

    def python(self, args: Sequence[str] = (), *, env: Optional[Union[Mapping[str, str], Iterable[tuple[str, str]]]] = None,
               stdin: Union[bytes, bytearray, memoryview] = b"", mounts: Iterable[Mount] = (),
               fuel: Optional[int] = None) -> Outcome:
        """Runs CPython for WASI (the python arm) with `args` as Python's own arguments (e.g.
        ["-c", "print(1)"]), its standard library mounted read-only at /usr/local/lib. The
        interpreter is found as `sprawl python` finds it: SPRAWLING_PYTHON_WASM and
        SPRAWLING_PYTHON_LIB, else the build's .artifacts/python-wasi; absent, the call raises
        SandboxError E_TOOL_UNAVAILABLE saying how to build it."""
        if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
            raise TypeError(f"args must be a sequence of str (Python's arguments), not {type(args).__name__}")
        user_mounts = _mount_list(mounts)
        for mount in user_mounts:
            if mount.guest.rstrip("/") == _PYTHON_STDLIB_GUEST:
                raise ValueError(f"mounts: {_PYTHON_STDLIB_GUEST} is where the standard library is mounted")
        wasm, lib = _python_artifact()
        stdlib = Mount(lib, _PYTHON_STDLIB_GUEST, writable=False)
        return self.run(wasm, argv=["python", *args], env=env, stdin=stdin, mounts=[stdlib, *user_mounts], fuel=fuel)


class _Job:
    """Owns one sprawling_job*."""

    def __init__(self) -> None:
        self.handle = _Handle()
        _check(_lib.sprawling_job_new(ctypes.byref(self.handle)), "sprawling_job_new")

    def free(self) -> None:
        if self.handle:
            _lib.sprawling_job_free(self.handle)
            self.handle = _Handle()

    def fill(self, *, argv, env, stdin, mounts, fuel) -> None:
        if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence):
            raise TypeError(f"argv must be a sequence of str (argv[0] first), not {type(argv).__name__}")
        for i, arg in enumerate(argv):
            data = _text(f"argv[{i}]", arg)
            _check(_lib.sprawling_job_add_arg(self.handle, data, len(data)), "argv")

        if env is None:
            pairs: Iterable = ()
        elif isinstance(env, Mapping):
            pairs = env.items()
        elif isinstance(env, (str, bytes)) or not isinstance(env, Iterable):
            raise TypeError(f"env must be a mapping of str to str or an iterable of (name, value) pairs, "
                            f"not {type(env).__name__}")
        else:
            pairs = env
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError(f"env entries must be (name, value) pairs of str, not {pair!r}")
            key = _text("env name", pair[0])
            value = _text(f"env[{pair[0]!r}]", pair[1])
            if not key or b"=" in key:
                raise ValueError(f"env name must be non-empty and hold no '=': {pair[0]!r}")
            _check(_lib.sprawling_job_add_env(self.handle, key, len(key), value, len(value)), "env")

        data = _bytes_like("stdin", stdin)
        _check(_lib.sprawling_job_set_stdin(self.handle, data, len(data)), "stdin")

        for mount in _mount_list(mounts):
            host = os.fsencode(mount.host)
            _check(_lib.sprawling_job_add_mount(self.handle, host, _text("Mount guest", mount.guest), int(mount.writable)),
                   "mounts")

        units = _u64("fuel", fuel, allow_none=True)
        _check(_lib.sprawling_job_set_fuel(self.handle, _U64_MAX if units is None else units), "fuel")


def _sink_calling(callback: Callable[[bytes], object], errors: threading.local):
    def sink(_user, data, length):
        try:
            callback(ctypes.string_at(data, length))
        except BaseException as e:  # noqa: B036 - kept, raised by run() on this thread
            if getattr(errors, "first", None) is None:
                errors.first = e

    return sink


def _mount_list(mounts: object) -> list[Mount]:
    if isinstance(mounts, (Mount, str, bytes)) or not isinstance(mounts, Iterable):
        raise TypeError(f"mounts must be an iterable of sprawling.Mount, not {type(mounts).__name__}")
    result = list(mounts)
    for mount in result:
        if not isinstance(mount, Mount):
            raise TypeError(f"mounts entries must be sprawling.Mount, not {type(mount).__name__}")
    return result


def _take_error(error: _Handle) -> SandboxError:
    try:
        code = _lib.sprawling_error_code(error).decode()
        message = _lib.sprawling_error_message(error).decode("utf-8", "replace")
        alternative = _lib.sprawling_error_alternative(error)
        detail = {}
        for i in range(_lib.sprawling_error_detail_count(error)):
            detail[_lib.sprawling_error_detail_key(error, i).decode("utf-8", "replace")] = \
                _lib.sprawling_error_detail_value(error, i).decode("utf-8", "replace")
        return SandboxError(code, message, alternative.decode() if alternative is not None else None, detail)
    finally:
        _lib.sprawling_error_free(error)


def _read_bytes(getter, outcome: _Handle) -> bytes:
    length = ctypes.c_size_t(0)
    pointer = getter(outcome, ctypes.byref(length))
    return ctypes.string_at(pointer, length.value) if length.value else b""


def _read_outcome(outcome: _Handle) -> Outcome:
    kind = _KINDS[_lib.sprawling_outcome_exit_kind(outcome)]
    message = _lib.sprawling_outcome_trap_message(outcome)
    exit_ = Exit(kind=kind, code=_lib.sprawling_outcome_exit_code(outcome),
                 message=message.decode("utf-8", "replace") if message is not None else None)
    stats = Stats(fuel_consumed=_lib.sprawling_outcome_fuel_consumed(outcome),
                  wall_time=_lib.sprawling_outcome_wall_time_ns(outcome) / 1e9,
                  peak_memory_bytes=_lib.sprawling_outcome_peak_memory_bytes(outcome),
                  stdout_truncated=bool(_lib.sprawling_outcome_stdout_truncated(outcome)),
                  stderr_truncated=bool(_lib.sprawling_outcome_stderr_truncated(outcome)))
    return Outcome(exit=exit_, stdout=_read_bytes(_lib.sprawling_outcome_stdout, outcome),
                   stderr=_read_bytes(_lib.sprawling_outcome_stderr, outcome), stats=stats)


# ---- the python arm -----------------------------------------------------------------------

_PYTHON_STDLIB_GUEST = "/usr/local/lib"


def _python_artifact() -> tuple[str, str]:
    default_dir = None
    try:
        from . import _paths

        default_dir = _paths.PYTHON_ARTIFACTS
    except ImportError:
        pass
    wasm = os.environ.get("SPRAWLING_PYTHON_WASM") or (os.path.join(default_dir, "python.wasm") if default_dir else None)
    lib = os.environ.get("SPRAWLING_PYTHON_LIB") or (os.path.join(default_dir, "lib") if default_dir else None)
    if wasm is None or lib is None or not os.path.isfile(wasm) or not os.path.isdir(os.path.join(lib, "python3.11")):
        looked = f"{wasm} and {lib}/python3.11" if wasm and lib else "SPRAWLING_PYTHON_WASM and SPRAWLING_PYTHON_LIB (unset)"
        raise SandboxError("E_TOOL_UNAVAILABLE",
                           f"no CPython-for-WASI artifact (looked for {looked}). Build it with "
                           "scripts/build-python-wasi (a few minutes), or point SPRAWLING_PYTHON_WASM and "
                           "SPRAWLING_PYTHON_LIB at an existing build.",
                           detail={"wasm": str(wasm), "lib": str(lib)})
    return wasm, lib


def python(args: Sequence[str] = (), *, env: Optional[Union[Mapping[str, str], Iterable[tuple[str, str]]]] = None,
           stdin: Union[bytes, bytearray, memoryview] = b"", mounts: Iterable[Mount] = (),
           fuel: Optional[int] = None, sandbox: Optional[Sandbox] = None) -> Outcome:
    """Runs the python arm (CPython for WASI) like `sprawl python ARGS…`; see Sandbox.python.
    `sandbox` gives the limits (default: a Sandbox with the defaults)."""
    if sandbox is not None and not isinstance(sandbox, Sandbox):
        raise TypeError(f"sandbox must be a sprawling.Sandbox or None, not {type(sandbox).__name__}")
    return (sandbox if sandbox is not None else Sandbox()).python(args, env=env, stdin=stdin, mounts=mounts, fuel=fuel)
