# Type stubs of the `sprawling` module (python/sprawling/__init__.py) for editors and type checkers.
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Callable, Literal, Optional, Protocol, Union

_Path = Union[str, os.PathLike[str]]
_Bytes = Union[bytes, bytearray, memoryview]
_Env = Union[Mapping[str, str], Iterable[tuple[str, str]]]
class _HasFileno(Protocol):
    def fileno(self) -> int: ...

_Stdin = Union[bytes, bytearray, memoryview, int, _HasFileno]
ExitKind = Literal["success", "failure", "fuel_exhausted", "trap"]
ErrorCode = Literal["E_TOOL_UNAVAILABLE", "E_SANDBOX_DENIED", "E_SANDBOX_HOST", "E_INVALID_MODULE", "E_INVALID_JOB"]

class SandboxError(Exception):
    code: ErrorCode
    message: str
    alternative: Optional[str]
    detail: dict[str, str]
    def __init__(self, code: str, message: str, alternative: Optional[str] = ..., detail: Optional[dict[str, str]] = ...) -> None: ...

class Mount:
    host: _Path
    guest: str
    writable: bool
    def __init__(self, host: _Path, guest: str, writable: bool = ...) -> None: ...

class Exit:
    kind: ExitKind
    code: int
    message: Optional[str]
    def __init__(self, kind: str, code: int = ..., message: Optional[str] = ...) -> None: ...

class Stats:
    fuel_consumed: int
    wall_time: float
    peak_memory_bytes: int
    stdout_truncated: bool
    stderr_truncated: bool
    disk_write_bytes: int
    from_snapshot: bool
    cancelled: bool
    def __init__(self, fuel_consumed: int, wall_time: float, peak_memory_bytes: int, stdout_truncated: bool,
                 stderr_truncated: bool, disk_write_bytes: int = ..., from_snapshot: bool = ...,
                 cancelled: bool = ...) -> None: ...

class Outcome:
    exit: Exit
    stdout: bytes
    stderr: bytes
    stats: Stats
    def __init__(self, exit: Exit, stdout: bytes, stderr: bytes, stats: Stats) -> None: ...

class Cancel:
    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

class Job:
    wasm: Union[_Path, bytes]
    argv: Optional[Sequence[str]]
    env: Optional[Union[Mapping[str, str], Sequence[tuple[str, str]]]]
    stdin: bytes
    mounts: Sequence[Mount]
    fuel: Optional[int]
    snapshot: bool
    snapshot_init_mounts: int
    training_args: Sequence[str]
    name: Optional[str]
    idempotent: bool
    def __init__(self, wasm: Union[_Path, bytes], argv: Optional[Sequence[str]] = ...,
                 env: Optional[Union[Mapping[str, str], Sequence[tuple[str, str]]]] = ..., stdin: bytes = ...,
                 mounts: Sequence[Mount] = ..., fuel: Optional[int] = ..., snapshot: bool = ...,
                 snapshot_init_mounts: int = ..., training_args: Sequence[str] = ..., name: Optional[str] = ...,
                 idempotent: bool = ...) -> None: ...
    def label(self) -> str: ...

class Precompiled:
    functions: int
    compiled: int
    def __init__(self, functions: int, compiled: int) -> None: ...

class Sandbox:
    def __init__(self, *, max_memory_bytes: Optional[int] = ..., timeout: Optional[float] = ...,
                 max_stdout_bytes: Optional[int] = ..., max_stderr_bytes: Optional[int] = ...,
                 meter_fuel: bool = ..., deterministic: bool = ..., random_seed: int = ...,
                 nan_canonicalization: bool = ...,
                 hostcall_copy_limit: Optional[int] = ..., max_table_elements: Optional[int] = ...,
                 max_tables: Optional[int] = ..., max_memories: Optional[int] = ...,
                 max_store_bytes: Optional[int] = ..., max_disk_write_bytes: Optional[int] = ...,
                 tier: Optional[str] = ..., tier_up: bool = ..., snapshot_dir: Optional[_Path] = ...,
                 code_cache_dir: Optional[_Path] = ..., code_cache_max_bytes: Optional[int] = ...,
                 compile_memory_bytes: Optional[int] = ...,
                 on_stdout: Optional[Callable[[bytes], object]] = ...,
                 on_stderr: Optional[Callable[[bytes], object]] = ...,
                 features: Optional[Mapping[str, bool]] = ...) -> None: ...
    def run(self, wasm: Union[_Path, _Bytes], *, argv: Optional[Sequence[str]] = ..., env: Optional[_Env] = ...,
            stdin: _Stdin = ..., mounts: Iterable[Mount] = ..., fuel: Optional[int] = ..., snapshot: bool = ...,
            snapshot_init_mounts: int = ..., training_args: Sequence[str] = ...,
            cancel: Optional[Cancel] = ...) -> Outcome: ...
    def run_job(self, job: Job, *, cancel: Optional[Cancel] = ...) -> Outcome: ...
    async def run_async(self, job: Job, *, on_cancelled: Optional[Callable[[Outcome], object]] = ...) -> Outcome: ...
    def map(self, jobs: Iterable[Job], *, max_workers: Optional[int] = ...,
            return_exceptions: bool = ...) -> list[Union[Outcome, SandboxError]]: ...
    def precompile(self, wasm: _Path, *, metered: bool = ..., unmetered: bool = ...) -> Precompiled: ...
    def python(self, args: Sequence[str] = ..., *, env: Optional[_Env] = ..., stdin: _Stdin = ...,
               mounts: Iterable[Mount] = ..., fuel: Optional[int] = ..., snapshot: bool = ...,
               training_args: Sequence[str] = ..., cancel: Optional[Cancel] = ...) -> Outcome: ...

def python(args: Sequence[str] = ..., *, env: Optional[_Env] = ..., stdin: _Stdin = ..., mounts: Iterable[Mount] = ...,
           fuel: Optional[int] = ..., snapshot: bool = ..., sandbox: Optional[Sandbox] = ...,
           training_args: Sequence[str] = ...) -> Outcome: ...
def python_job(args: Sequence[str] = ..., *, env: Optional[_Env] = ..., stdin: bytes = ..., mounts: Iterable[Mount] = ...,
               fuel: Optional[int] = ..., snapshot: bool = ..., training_args: Sequence[str] = ...,
               name: Optional[str] = ..., idempotent: bool = ...) -> Job: ...
def version() -> str: ...
def engine_available() -> bool: ...
def compiled_tier_available() -> bool: ...
def tiers() -> tuple[str, ...]: ...
def features() -> tuple[str, ...]: ...
def stop_tier_up() -> None: ...
def tier_up_busy() -> bool: ...
