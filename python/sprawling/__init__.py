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

import atexit
import ctypes
import math
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, Optional, Protocol, Union

__all__ = [
    "Cancel",
    "Exit",
    "Job",
    "Mount",
    "Outcome",
    "Precompiled",
    "Sandbox",
    "SandboxError",
    "Stats",
    "compiled_tier_available",
    "engine_available",
    "features",
    "python",
    "python_job",
    "stop_tier_up",
    "tier_up_busy",
    "tiers",
    "version",
]

_U64_MAX = (1 << 64) - 1


class _HasFileno(Protocol):
    """What run() takes as streamed stdin besides an fd: a file, a pipe, a socket."""

    def fileno(self) -> int: ...


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
    """Measurements of the run: fuel consumed (exact), wall time in seconds, peak linear memory,
    whether an output cap cut the output, bytes charged to the disk write quota, whether the
    job started from a snapshot (fuel consumed then excludes the initialisation), and whether a
    Cancel stopped it (the exit is then a trap with message "cancelled")."""

    fuel_consumed: int
    wall_time: float
    peak_memory_bytes: int
    stdout_truncated: bool
    stderr_truncated: bool
    disk_write_bytes: int = 0
    from_snapshot: bool = False
    cancelled: bool = False


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
        "sprawling_status_name": (cp, [i]),
        "sprawling_exit_kind_name": (cp, [i]),
        "sprawling_compiled_tier_available": (i, []),
        "sprawling_tier_name": (cp, [i]),
        "sprawling_stop_tier_up": (None, []),
        "sprawling_tier_up_busy": (i, []),
        "sprawling_feature_name": (cp, [sz]),
        "sprawling_config_set_feature": (st, [h, cp, i]),
        "sprawling_job_add_training_arg": (st, [h, cp, sz]),
        "sprawling_job_set_cancel": (st, [h, h]),
        "sprawling_cancel_new": (st, [ctypes.POINTER(h)]),
        "sprawling_cancel_free": (None, [h]),
        "sprawling_cancel_request": (None, [h]),
        "sprawling_cancel_requested": (i, [h]),
        "sprawling_precompile": (st, [h, cp, i, i, ctypes.POINTER(sz), ctypes.POINTER(sz), ctypes.POINTER(h)]),
        "sprawling_outcome_cancelled": (i, [h]),
        "sprawling_config_new": (st, [ctypes.POINTER(h)]),
        "sprawling_config_free": (None, [h]),
        "sprawling_config_set_max_memory_bytes": (st, [h, u64]),
        "sprawling_config_set_timeout_ns": (st, [h, u64]),
        "sprawling_config_clear_timeout": (st, [h]),
        "sprawling_config_set_max_stdout_bytes": (st, [h, u64]),
        "sprawling_config_set_max_stderr_bytes": (st, [h, u64]),
        "sprawling_config_set_meter_fuel": (st, [h, i]),
        "sprawling_config_set_deterministic": (st, [h, i]),
        "sprawling_config_set_nan_canonicalization": (st, [h, i]),
        "sprawling_config_set_random_seed": (st, [h, u64]),
        "sprawling_config_set_hostcall_copy_limit": (st, [h, u64]),
        "sprawling_config_set_max_table_elements": (st, [h, u64]),
        "sprawling_config_set_max_tables": (st, [h, u64]),
        "sprawling_config_set_max_memories": (st, [h, u64]),
        "sprawling_config_set_max_store_bytes": (st, [h, u64]),
        "sprawling_config_clear_max_store_bytes": (st, [h]),
        "sprawling_config_set_max_disk_write_bytes": (st, [h, u64]),
        "sprawling_config_set_tier": (st, [h, i]),
        "sprawling_config_set_tier_up": (st, [h, i]),
        "sprawling_config_set_snapshot_dir": (st, [h, cp]),
        "sprawling_config_set_code_cache_dir": (st, [h, cp]),
        "sprawling_config_set_code_cache_max_bytes": (st, [h, u64]),
        "sprawling_config_set_compile_memory_bytes": (st, [h, u64]),
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
        "sprawling_job_set_stdin_fd": (st, [h, i]),
        "sprawling_job_set_snapshot": (st, [h, i, sz]),
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
        "sprawling_outcome_disk_write_bytes": (u64, [h]),
        "sprawling_outcome_from_snapshot": (i, [h]),
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


def _list_tiers() -> dict[str, int]:
    # The library names its tiers from 0 up (NULL past the last), so a tier added in C needs no
    # change here.
    found = {}
    while (name := _lib.sprawling_tier_name(len(found))) is not None:
        found[name.decode()] = len(found)
    return found


_TIERS = _list_tiers()


def _list_features() -> tuple[str, ...]:
    found: list[str] = []
    while (name := _lib.sprawling_feature_name(len(found))) is not None:
        found.append(name.decode())
    return tuple(found)


_FEATURES = _list_features()


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


def compiled_tier_available() -> bool:
    """True when this build carries the compiled tier (tier="compile" can run)."""
    return bool(_lib.sprawling_compiled_tier_available())


def tiers() -> tuple[str, ...]:
    """The execution tiers this library knows, e.g. ("interpret", "compile")."""
    return tuple(_TIERS)


def features() -> tuple[str, ...]:
    """The WebAssembly features Sandbox(features=…) can turn off, by their `sprawl run -W` names
    ("simd", "tail-call", "exceptions", "function-references", "gc", …); all on by default."""
    return _FEATURES


def stop_tier_up() -> None:
    """Ends tier-up's background compilation (Sandbox(tier_up=True)) for the rest of the process:
    drops the functions queued and waits for the one being compiled (cancelled at its next phase).
    Called at interpreter exit (atexit) once a Sandbox with tier_up=True was made, so a program
    need not call it; it may, to stop compiling earlier. Jobs may still run afterwards, with the
    machine code compiled so far. Repeatable; a no-op without the compiled tier."""
    _lib.sprawling_stop_tier_up()


def tier_up_busy() -> bool:
    """True while tier-up compiles a function or has some queued (False without the compiled tier)."""
    return bool(_lib.sprawling_tier_up_busy())


_tier_up_stop_lock = threading.Lock()
_tier_up_stop_registered = False


def _stop_tier_up_at_exit() -> None:
    # The C library requires the stop before the process exits, while LLVM's static state still
    # exists: Python runs atexit handlers in Py_Finalize, before the C runtime's exit() destroys
    # it. Registered once, by the first Sandbox that turns tier-up on, so a process that never
    # does has no handler (and no LLVM work at all).
    global _tier_up_stop_registered
    with _tier_up_stop_lock:
        if not _tier_up_stop_registered:
            atexit.register(stop_tier_up)
            _tier_up_stop_registered = True


# ---- argument checks ----------------------------------------------------------------------


def _u64(name: str, value: object, *, allow_none: bool = False, bits: int = 64) -> Optional[int]:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {expected}, not {type(value).__name__}")
    if value < 0 or value >= 1 << bits:
        raise ValueError(f"{name} must be between 0 and 2**{bits}-1, got {value}")
    return value


def _path(name: str, value: object) -> bytes:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")
    path = os.fsencode(value)
    if not path or b"\0" in path:
        raise ValueError(f"{name} must be a non-empty path without NUL characters, got {value!r}")
    return path


def _stdin(value: object) -> Union[bytes, int]:
    """The job's stdin: bytes (copied) or a host fd the guest reads on demand (borrowed)."""
    if isinstance(value, (bytes, bytearray, memoryview)) or isinstance(value, str):
        return _bytes_like("stdin", value)
    if isinstance(value, int) and not isinstance(value, bool):
        fd = value
    elif callable(getattr(value, "fileno", None)):
        try:
            fd = value.fileno()
        except (OSError, ValueError) as e:  # io.UnsupportedOperation is both
            raise TypeError(f"stdin {value!r} has no file descriptor ({e}); pass its bytes instead") from None
    else:
        raise TypeError(f"stdin must be bytes, bytearray, memoryview, a file descriptor (int) or an object with "
                        f"fileno(), not {type(value).__name__}")
    if fd < 0:
        raise ValueError(f"stdin file descriptor must be >= 0, got {fd}")
    try:
        os.fstat(fd)
    except OSError as e:
        raise ValueError(f"stdin file descriptor {fd} is not open ({e.strerror})") from None
    return fd


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


class Cancel:
    """A flag that stops jobs from another thread: pass it to run(…, cancel=) (or hold it in a
    Job); once cancel() is called, the jobs holding it end at their next deadline check (on entry,
    then every 1,048,576 fuel units, 4,194,304 in a compiled loop that took its fuel ahead) with
    exit kind "trap", message "cancelled" and Stats.cancelled. Needs fuel metering
    (Sandbox(meter_fuel=True), the default)."""

    def __init__(self) -> None:
        self._handle = _Handle()
        _check(_lib.sprawling_cancel_new(ctypes.byref(self._handle)), "sprawling_cancel_new")

    def cancel(self) -> None:
        """Sets the flag (any thread, any time, repeatable)."""
        _lib.sprawling_cancel_request(self._handle)

    @property
    def cancelled(self) -> bool:
        """True once cancel() was called."""
        return bool(_lib.sprawling_cancel_requested(self._handle))

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and _lib is not None:
            _lib.sprawling_cancel_free(handle)
            self._handle = _Handle()


@dataclass(frozen=True)
class Job:
    """One job, as Sandbox.run's arguments in a value: for run_job, run_async, map and
    sprawling.ray. `name` labels it in errors (default: argv[0] or the module's file name);
    `idempotent` False tells sprawling.ray not to run it again on another worker when the worker
    running it dies (it raises instead)."""

    wasm: Union[str, os.PathLike, bytes]
    argv: Optional[Sequence[str]] = None
    env: Optional[Union[Mapping[str, str], Sequence[tuple[str, str]]]] = None
    stdin: bytes = b""
    mounts: Sequence[Mount] = ()
    fuel: Optional[int] = None
    snapshot: bool = True
    snapshot_init_mounts: int = 0
    training_args: Sequence[str] = ()
    name: Optional[str] = None
    idempotent: bool = True

    def label(self) -> str:
        """What names the job in messages."""
        if self.name is not None:
            return self.name
        if self.argv:
            return " ".join(self.argv)
        if isinstance(self.wasm, (str, os.PathLike)):
            return os.path.basename(os.fsdecode(self.wasm))
        return "module bytes"


@dataclass(frozen=True)
class Precompiled:
    """What Sandbox.precompile wrote: defined functions and how many got machine code (summed
    over the fuel variants written)."""

    functions: int
    compiled: int


class Sandbox:
    """A sandbox configuration; run() runs one job under it. Safe to share between threads: each
    run gets its own engine sandbox, so runs from several threads proceed in parallel.

    max_memory_bytes   cap on the guest's linear memory (default 4 GiB, wasm32's whole space)
    timeout            wall-clock limit of one run in seconds (None: none); reaching it ends the
                       run with exit kind "trap" and message "deadline exceeded"
    max_stdout_bytes, max_stderr_bytes   caps on captured output (default 64 MiB each)
    meter_fuel         False: fuel is not metered at all (benchmarks only)
    deterministic, random_seed   reproducible runs: fixed clocks, seeded randomness, canonical NaNs
    nan_canonicalization   True: every float operation that may make a NaN makes the canonical one
                       (the same bits on every CPU and tier; Wasmtime's option); implied by
                       deterministic; default False
    hostcall_copy_limit  what one WASI call may take from guest memory (default 128 MiB)
    max_table_elements cap on each table's elements (default 10,000,000; at most 2**32-1)
    max_tables, max_memories   how many tables / memories the module may define (default 100
                       each; at most 2**32-1); past a limit the module is refused (E_INVALID_MODULE)
    max_store_bytes    one account of everything the guest makes the host allocate (default None:
                       max_memory_bytes + 256 MiB)
    max_disk_write_bytes   write quota of a job on its writable mounts (default 1 GiB); past it
                       the guest's writes fail with EDQUOT (Stats.disk_write_bytes says how much)
    tier               "interpret", "compile" or "auto" (sprawling.tiers() lists them; None:
                       the library's default, auto: machine code when code_cache_dir holds the
                       module (`sprawl compile` fills it), else the interpreter); "compile" runs
                       only where sprawling.compiled_tier_available(), else E_TOOL_UNAVAILABLE
    tier_up            True: under "auto" without cached code, functions the interpreter finds hot
                       are compiled on a background thread and run as machine code from their next
                       call; output, exit and fuel are the same. False (the default): no
                       compilation during runs. The module stops that thread at interpreter exit
                       (sprawling.stop_tier_up); without the compiled tier it changes nothing
    code_cache_dir     the compiled-code cache folder (created 0700; None: no cache)
    code_cache_max_bytes   its size bound (default 1 GiB); past it the least recently used
                       entries are removed
    compile_memory_bytes   under "compile", when a module is compiled on first use: how far the
                       process's heap may grow while it is; a function that would pass it stays
                       interpreted (same output, exit and fuel). 0: no limit; default 1 GiB
    snapshot_dir       a folder where start-up snapshots are also kept between processes
                       (created 0700; None: the process's in-memory cache only)
    features           {name: bool} turning WebAssembly features on or off, by `sprawl run -W`'s
                       names (sprawling.features() lists them; all on by default); a module using
                       one that is off is refused with E_INVALID_MODULE naming it
    on_stdout, on_stderr   called with each piece of output (bytes) as the guest writes it, on
                       the thread running the job; an exception it raises is raised by run()
                       once the job has ended (the outcome still holds the whole output)
    """

    def __init__(self, *, max_memory_bytes: Optional[int] = None, timeout: Optional[float] = None,
                 max_stdout_bytes: Optional[int] = None, max_stderr_bytes: Optional[int] = None,
                 meter_fuel: bool = True, deterministic: bool = False, random_seed: int = 0,
                 nan_canonicalization: bool = False,
                 hostcall_copy_limit: Optional[int] = None, max_table_elements: Optional[int] = None,
                 max_tables: Optional[int] = None, max_memories: Optional[int] = None,
                 max_store_bytes: Optional[int] = None, max_disk_write_bytes: Optional[int] = None,
                 tier: Optional[str] = None, tier_up: bool = False,
                 snapshot_dir: Optional[Union[str, os.PathLike]] = None,
                 code_cache_dir: Optional[Union[str, os.PathLike]] = None,
                 code_cache_max_bytes: Optional[int] = None,
                 compile_memory_bytes: Optional[int] = None,
                 on_stdout: Optional[Callable[[bytes], object]] = None,
                 on_stderr: Optional[Callable[[bytes], object]] = None,
                 features: Optional[Mapping[str, bool]] = None) -> None:
        # Checked in full before anything is allocated, so a bad argument leaks nothing. Each
        # integer setting is sprawling_config_set_<name>; None keeps the library's default.
        u64_settings = {
            "max_memory_bytes": _u64("max_memory_bytes", max_memory_bytes, allow_none=True),
            "max_stdout_bytes": _u64("max_stdout_bytes", max_stdout_bytes, allow_none=True),
            "max_stderr_bytes": _u64("max_stderr_bytes", max_stderr_bytes, allow_none=True),
            "random_seed": _u64("random_seed", random_seed),
            "hostcall_copy_limit": _u64("hostcall_copy_limit", hostcall_copy_limit, allow_none=True),
            "max_table_elements": _u64("max_table_elements", max_table_elements, allow_none=True, bits=32),
            "max_tables": _u64("max_tables", max_tables, allow_none=True, bits=32),
            "max_memories": _u64("max_memories", max_memories, allow_none=True, bits=32),
            "max_store_bytes": _u64("max_store_bytes", max_store_bytes, allow_none=True),
            "max_disk_write_bytes": _u64("max_disk_write_bytes", max_disk_write_bytes, allow_none=True),
            "code_cache_max_bytes": _u64("code_cache_max_bytes", code_cache_max_bytes, allow_none=True),
            "compile_memory_bytes": _u64("compile_memory_bytes", compile_memory_bytes, allow_none=True),
        }
        if code_cache_max_bytes == 0:
            raise ValueError("code_cache_max_bytes must be positive, got 0")
        if tier is not None:
            if not isinstance(tier, str):
                raise TypeError(f"tier must be a str ({', '.join(map(repr, _TIERS))}) or None, "
                                f"not {type(tier).__name__}")
            if tier not in _TIERS:
                raise ValueError(f"tier must be one of {', '.join(map(repr, _TIERS))}, got {tier!r}")
        snapshot_path = _path("snapshot_dir", snapshot_dir) if snapshot_dir is not None else None
        code_cache_path = _path("code_cache_dir", code_cache_dir) if code_cache_dir is not None else None
        timeout_ns = None
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
            if not math.isfinite(timeout) or timeout <= 0:
                raise ValueError(f"timeout must be a positive, finite number of seconds, got {timeout!r}")
            timeout_ns = max(1, round(timeout * 1e9))
            if timeout_ns > (1 << 63) - 1:
                raise ValueError(f"timeout is too large: {timeout!r} seconds")
        flags = {"meter_fuel": _flag("meter_fuel", meter_fuel), "deterministic": _flag("deterministic", deterministic),
                 "nan_canonicalization": _flag("nan_canonicalization", nan_canonicalization),
                 "tier_up": _flag("tier_up", tier_up)}
        feature_settings: dict[str, bool] = {}
        if features is not None:
            if not isinstance(features, Mapping):
                raise TypeError(f"features must be a mapping of feature name to bool, not {type(features).__name__}")
            for feature, enabled in features.items():
                if feature not in _FEATURES:
                    raise ValueError(f"features: unknown feature {feature!r} (known: {', '.join(_FEATURES)})")
                feature_settings[feature] = _flag(f"features[{feature!r}]", enabled)
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
        if tier is not None:
            _check(_lib.sprawling_config_set_tier(self._config, _TIERS[tier]), "tier")
        for feature, enabled in feature_settings.items():
            _check(_lib.sprawling_config_set_feature(self._config, feature.encode(), int(enabled)), "features")
        if tier_up:
            _stop_tier_up_at_exit()
        if snapshot_path is not None:
            _check(_lib.sprawling_config_set_snapshot_dir(self._config, snapshot_path), "snapshot_dir")
        if code_cache_path is not None:
            _check(_lib.sprawling_config_set_code_cache_dir(self._config, code_cache_path), "code_cache_dir")
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
        if tier is not None:
            self._settings["tier"] = tier
        if snapshot_dir is not None:
            self._settings["snapshot_dir"] = os.fsdecode(snapshot_dir)
        if code_cache_dir is not None:
            self._settings["code_cache_dir"] = os.fsdecode(code_cache_dir)
        if feature_settings:
            self._settings["features"] = feature_settings

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
            stdin: Union[bytes, bytearray, memoryview, int, _HasFileno] = b"", mounts: Iterable[Mount] = (),
            fuel: Optional[int] = None, snapshot: bool = True, snapshot_init_mounts: int = 0,
            training_args: Sequence[str] = (), cancel: Optional[Cancel] = None) -> Outcome:
        """Runs the module `wasm` (a path to a .wasm or .wat file, or the module's bytes) and
        returns its Outcome; raises SandboxError when the job cannot run. argv defaults to
        [the file's name] ("module" for bytes); fuel None means no budget (set one, or a timeout,
        for untrusted code). stdin is bytes, or a file descriptor / an object with fileno()
        (a pipe, a file, a socket) that the guest reads on demand, borrowed for the run (data a
        Python file object has already buffered is not seen). snapshot: a module exporting
        `wizer.initialize` may start from a snapshot of its initialised instance; the first
        `snapshot_init_mounts` mounts are all the initialisation sees; `training_args` (Python's
        arguments after argv[0]) run once from a snapshot being built, so that the code they call
        is kept in it. cancel: a Cancel that stops the job from another thread."""
        if cancel is not None and not isinstance(cancel, Cancel):
            raise TypeError(f"cancel must be a sprawling.Cancel or None, not {type(cancel).__name__}")
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
            job.fill(argv=argv if argv is not None else [default_name], env=env, stdin=stdin, mounts=mounts, fuel=fuel,
                     snapshot=snapshot, snapshot_init_mounts=snapshot_init_mounts, training_args=training_args)
            if cancel is not None:
                _check(_lib.sprawling_job_set_cancel(job.handle, cancel._handle), "cancel")
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

    def run_job(self, job: Job, *, cancel: Optional[Cancel] = None) -> Outcome:
        """Runs a Job (see run)."""
        if not isinstance(job, Job):
            raise TypeError(f"job must be a sprawling.Job, not {type(job).__name__}")
        return self.run(job.wasm, argv=job.argv, env=job.env, stdin=job.stdin, mounts=job.mounts, fuel=job.fuel,
                        snapshot=job.snapshot, snapshot_init_mounts=job.snapshot_init_mounts,
                        training_args=job.training_args, cancel=cancel)

    async def run_async(self, job: Job, *, on_cancelled: Optional[Callable[[Outcome], object]] = None) -> Outcome:
        """Runs a Job on a thread of the event loop's default executor and returns its Outcome
        (or raises SandboxError). Cancelling the awaiting task stops the job at its next deadline
        check (see Cancel); the task then raises asyncio.CancelledError once the job has ended,
        and `on_cancelled`, when given, is called first with the stopped job's Outcome (exit
        "trap", message "cancelled", stats.cancelled True) unless the job ended otherwise first."""
        if not isinstance(job, Job):
            raise TypeError(f"job must be a sprawling.Job, not {type(job).__name__}")
        if on_cancelled is not None and not callable(on_cancelled):
            raise TypeError(f"on_cancelled must be callable or None, not {type(on_cancelled).__name__}")
        import asyncio  # here, not at import: asyncio brings logging, whose atexit handler a
        # program that never runs a job asynchronously should not get

        cancel = Cancel()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, lambda: self.run_job(job, cancel=cancel))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            cancel.cancel()
            # Waiting for the thread keeps the job's end inside the task: nothing keeps running,
            # unseen, after the task is done.
            while not future.done():
                try:
                    await asyncio.shield(future)
                except asyncio.CancelledError:
                    continue
                except SandboxError:
                    break
            if on_cancelled is not None and future.exception() is None and future.result().stats.cancelled:
                on_cancelled(future.result())
            raise

    def map(self, jobs: Iterable[Job], *, max_workers: Optional[int] = None,
            return_exceptions: bool = False) -> list[Union[Outcome, SandboxError]]:
        """Runs the jobs on `max_workers` threads (default: os.cpu_count()) and returns their
        Outcomes in the jobs' order. A job that cannot run raises its SandboxError (the first in
        order) once every job has ended, unless return_exceptions puts it in the list instead."""
        job_list = list(jobs)
        for k, job in enumerate(job_list):
            if not isinstance(job, Job):
                raise TypeError(f"jobs[{k}] must be a sprawling.Job, not {type(job).__name__}")
        workers = _u64("max_workers", max_workers, allow_none=True)
        if workers == 0:
            raise ValueError("max_workers must be at least 1")

        def one(job: Job) -> Union[Outcome, SandboxError]:
            try:
                return self.run_job(job)
            except SandboxError as e:
                return e

        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            results = list(pool.map(one, job_list))
        if not return_exceptions:
            for result in results:
                if isinstance(result, SandboxError):
                    raise result
        return results

    def precompile(self, wasm: Union[str, os.PathLike], *, metered: bool = True, unmetered: bool = False) -> Precompiled:
        """Compiles the module file `wasm` ahead of time into this Sandbox's code_cache_dir (as
        `sprawl compile`), for the fuel-metered variant (jobs under meter_fuel=True), the
        unmetered one, or both; later runs with tier "auto" or "compile" start on that machine
        code. Raises SandboxError: E_INVALID_MODULE, E_TOOL_UNAVAILABLE (no compiled tier),
        E_INVALID_JOB (no code_cache_dir) or E_SANDBOX_HOST."""
        path = _path("wasm", wasm)
        if not (_flag("metered", metered) or _flag("unmetered", unmetered)):
            raise ValueError("precompile: at least one of metered and unmetered must be True")
        functions, compiled, error = ctypes.c_size_t(0), ctypes.c_size_t(0), _Handle()
        status = _lib.sprawling_precompile(self._config, path, int(metered), int(unmetered), ctypes.byref(functions),
                                           ctypes.byref(compiled), ctypes.byref(error))
        if status == _ERROR:
            raise _take_error(error)
        _check(status, "sprawling_precompile")
        return Precompiled(functions=functions.value, compiled=compiled.value)

    def python(self, args: Sequence[str] = (), *, env: Optional[Union[Mapping[str, str], Iterable[tuple[str, str]]]] = None,
               stdin: Union[bytes, bytearray, memoryview, int, _HasFileno] = b"", mounts: Iterable[Mount] = (),
               fuel: Optional[int] = None, snapshot: bool = True, training_args: Sequence[str] = (),
               cancel: Optional[Cancel] = None) -> Outcome:
        """Runs CPython for WASI (the python arm) with `args` as Python's own arguments (e.g.
        ["-c", "print(1)"]), its standard library mounted read-only at /usr/local/lib. The
        interpreter is found as `sprawl python` finds it: SPRAWLING_PYTHON_WASM and
        SPRAWLING_PYTHON_LIB, else the build's .artifacts/python-wasi; absent, the call raises
        SandboxError E_TOOL_UNAVAILABLE saying how to build it. snapshot (as `sprawl python`,
        whose --no-snapshot is snapshot=False): a job of the form -c CMD, -m MOD, SCRIPT or -
        with no PYTHON* variable starts from a snapshot of an initialised interpreter (built by
        the process's first such job, kept in snapshot_dir when the Sandbox has one); any other
        command line starts cold, as `python` would. training_args: Python's arguments for the
        training job run once when the snapshot is built (e.g. ["-c", "import json"]), whose code
        is kept in it; cancel: as run's. sprawling.python_job makes the same job a Job (for map,
        run_async and sprawling.ray)."""
        wasm, argv, pairs, all_mounts, from_snapshot = _python_command(args, env, mounts, snapshot)
        return self.run(wasm, argv=argv, env=pairs, stdin=stdin, mounts=all_mounts, fuel=fuel, snapshot=from_snapshot,
                        snapshot_init_mounts=1, training_args=training_args, cancel=cancel)


class _Job:
    """Owns one sprawling_job*."""

    def __init__(self) -> None:
        self.handle = _Handle()
        _check(_lib.sprawling_job_new(ctypes.byref(self.handle)), "sprawling_job_new")

    def free(self) -> None:
        if self.handle:
            _lib.sprawling_job_free(self.handle)
            self.handle = _Handle()

    def fill(self, *, argv, env, stdin, mounts, fuel, snapshot, snapshot_init_mounts, training_args=()) -> None:
        if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence):
            raise TypeError(f"argv must be a sequence of str (argv[0] first), not {type(argv).__name__}")
        for i, arg in enumerate(argv):
            data = _text(f"argv[{i}]", arg)
            _check(_lib.sprawling_job_add_arg(self.handle, data, len(data)), "argv")

        for key, value in _env_pairs(env):
            _check(_lib.sprawling_job_add_env(self.handle, key, len(key), value, len(value)), "env")

        data = _stdin(stdin)
        if isinstance(data, int):
            _check(_lib.sprawling_job_set_stdin_fd(self.handle, data), "stdin")
        else:
            _check(_lib.sprawling_job_set_stdin(self.handle, data, len(data)), "stdin")

        mount_list = _mount_list(mounts)
        for mount in mount_list:
            host = os.fsencode(mount.host)
            _check(_lib.sprawling_job_add_mount(self.handle, host, _text("Mount guest", mount.guest), int(mount.writable)),
                   "mounts")

        units = _u64("fuel", fuel, allow_none=True)
        _check(_lib.sprawling_job_set_fuel(self.handle, _U64_MAX if units is None else units), "fuel")

        _flag("snapshot", snapshot)
        init_mounts = _u64("snapshot_init_mounts", snapshot_init_mounts)
        if snapshot and init_mounts > len(mount_list):
            raise ValueError(f"snapshot_init_mounts ({init_mounts}) is more than the job's mounts ({len(mount_list)}): "
                             "it counts the first mounts the initialisation sees")
        _check(_lib.sprawling_job_set_snapshot(self.handle, int(snapshot), init_mounts), "snapshot")

        if isinstance(training_args, (str, bytes)) or not isinstance(training_args, Sequence):
            raise TypeError(f"training_args must be a sequence of str, not {type(training_args).__name__}")
        for i, arg in enumerate(training_args):
            data = _text(f"training_args[{i}]", arg)
            _check(_lib.sprawling_job_add_training_arg(self.handle, data, len(data)), "training_args")


def _env_pairs(env: object) -> list[tuple[bytes, bytes]]:
    """The environment, checked and encoded, in order."""
    if env is None:
        pairs: Iterable = ()
    elif isinstance(env, Mapping):
        pairs = env.items()
    elif isinstance(env, (str, bytes)) or not isinstance(env, Iterable):
        raise TypeError(f"env must be a mapping of str to str or an iterable of (name, value) pairs, "
                        f"not {type(env).__name__}")
    else:
        pairs = env
    result = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"env entries must be (name, value) pairs of str, not {pair!r}")
        key = _text("env name", pair[0])
        value = _text(f"env[{pair[0]!r}]", pair[1])
        if not key or b"=" in key:
            raise ValueError(f"env name must be non-empty and hold no '=': {pair[0]!r}")
        result.append((key, value))
    return result


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
                  stderr_truncated=bool(_lib.sprawling_outcome_stderr_truncated(outcome)),
                  disk_write_bytes=_lib.sprawling_outcome_disk_write_bytes(outcome),
                  from_snapshot=bool(_lib.sprawling_outcome_from_snapshot(outcome)),
                  cancelled=bool(_lib.sprawling_outcome_cancelled(outcome)))
    return Outcome(exit=exit_, stdout=_read_bytes(_lib.sprawling_outcome_stdout, outcome),
                   stderr=_read_bytes(_lib.sprawling_outcome_stderr, outcome), stats=stats)


# ---- the python arm -----------------------------------------------------------------------

_PYTHON_STDLIB_GUEST = "/usr/local/lib"


def _snapshot_can_run(args: list, env: list[tuple[str, str]]) -> bool:
    # The command lines python.wasm's `wizer.resume` honours exactly as `python` would (the same
    # rule as `sprawl python`, src/cli/python.cpp): everything else was fixed at initialisation.
    if any(name.startswith("PYTHON") for name, _ in env):
        return False
    if not args:
        return True
    first = args[0]
    if first in ("-c", "-m"):
        return len(args) >= 2
    return isinstance(first, str) and (first == "-" or not first.startswith("-"))


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


def _python_command(args: Sequence[str], env: object, mounts: Iterable[Mount],
                    snapshot: bool) -> tuple[str, list[str], list[tuple[str, str]], list[Mount], bool]:
    """The python arm's job as run()'s arguments: python.wasm, argv, env, the mounts (the
    standard library first, which is all the snapshot's initialisation sees) and whether it may
    start from the snapshot."""
    _flag("snapshot", snapshot)
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise TypeError(f"args must be a sequence of str (Python's arguments), not {type(args).__name__}")
    user_mounts = _mount_list(mounts)
    for mount in user_mounts:
        if mount.guest.rstrip("/") == _PYTHON_STDLIB_GUEST:
            raise ValueError(f"mounts: {_PYTHON_STDLIB_GUEST} is where the standard library is mounted")
    pairs = [(k.decode("utf-8", "surrogateescape"), v.decode("utf-8", "surrogateescape")) for k, v in _env_pairs(env)]
    wasm, lib = _python_artifact()
    stdlib = Mount(lib, _PYTHON_STDLIB_GUEST, writable=False)
    return (wasm, ["python", *args], pairs, [stdlib, *user_mounts],
            snapshot and _snapshot_can_run(list(args), pairs))


def python_job(args: Sequence[str] = (), *, env: Optional[Union[Mapping[str, str], Iterable[tuple[str, str]]]] = None,
               stdin: bytes = b"", mounts: Iterable[Mount] = (), fuel: Optional[int] = None, snapshot: bool = True,
               training_args: Sequence[str] = (), name: Optional[str] = None, idempotent: bool = True) -> Job:
    """The python arm's job (what Sandbox.python runs) as a Job, for run_job, run_async, map and
    sprawling.ray: python.wasm and its standard library are found here, on this machine, as
    Sandbox.python finds them, so the machines that run the Job need them at the same paths."""
    wasm, argv, pairs, all_mounts, from_snapshot = _python_command(args, env, mounts, snapshot)
    return Job(wasm, argv=argv, env=tuple(pairs), stdin=bytes(stdin), mounts=tuple(all_mounts), fuel=fuel,
               snapshot=from_snapshot, snapshot_init_mounts=1, training_args=tuple(training_args), name=name,
               idempotent=idempotent)


def python(args: Sequence[str] = (), *, env: Optional[Union[Mapping[str, str], Iterable[tuple[str, str]]]] = None,
           stdin: Union[bytes, bytearray, memoryview, int, _HasFileno] = b"", mounts: Iterable[Mount] = (),
           fuel: Optional[int] = None, snapshot: bool = True, sandbox: Optional[Sandbox] = None,
           training_args: Sequence[str] = ()) -> Outcome:
    """Runs the python arm (CPython for WASI) like `sprawl python ARGS…`; see Sandbox.python.
    `sandbox` gives the limits (default: a Sandbox with the defaults)."""
    if sandbox is not None and not isinstance(sandbox, Sandbox):
        raise TypeError(f"sandbox must be a sprawling.Sandbox or None, not {type(sandbox).__name__}")
    return (sandbox if sandbox is not None else Sandbox()).python(args, env=env, stdin=stdin, mounts=mounts, fuel=fuel,
                                                                  snapshot=snapshot, training_args=training_args)
