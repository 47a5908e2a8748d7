# sprawling on a Ray cluster: one long-lived actor per node holds a Sandbox; a Pool schedules
# jobs over the actors with a bound on jobs in flight, ships each module's bytes once per node and
# runs a job again on another actor when the worker process running it dies.
"""Run sprawling Jobs on a Ray cluster (``pip install 'sprawling[ray]'``).

    import ray, sprawling, sprawling.ray
    ray.init()
    with sprawling.ray.Pool(sandbox_options={"timeout": 5.0}) as pool:
        outcomes = pool.run_many([sprawling.Job("guest.wasm", argv=["guest", str(n)], fuel=10**8)
                                  for n in range(1000)])

Outcomes come back in the jobs' order (run_many, run_many_async) or as they complete
(as_completed). A job that cannot run gives its SandboxError (raised after the batch, or in place
with return_exceptions=True). When the worker process running a job dies, the job runs again on
another actor (the dead one is restarted by Ray) unless the Job says idempotent=False: then its
answer is a SandboxError E_SANDBOX_HOST naming the job. `import sprawling` never imports Ray;
this module does.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Optional, Union

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, WorkerCrashedError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import sprawling

__all__ = ["Pool", "SandboxActor"]

# What a dead or restarting worker looks like to the caller of a task on it.
_WORKER_LOST = (RayActorError, ActorDiedError, ActorUnavailableError, WorkerCrashedError)


class SandboxActor:
    """The actor: a Sandbox and the modules it was sent, by content digest, for its whole life.
    Each module is kept in a memory file of the worker process and run by its path, so the
    engine's module cache knows it by identity: a job does not pass, copy or hash the module's
    bytes again (for python.wasm's 6.7 MB that was most of a `python -c` job's cost)."""

    def __init__(self, sandbox_options: Mapping[str, Any]) -> None:
        self._sandbox = sprawling.Sandbox(**dict(sandbox_options))
        self._modules: dict[str, str] = {}  # digest -> the memory file's path
        self._jobs = 0
        self._fetches = 0

    def _module_path(self, digest: str, module: list) -> str:
        path = self._modules.get(digest)
        if path is None:
            data = ray.get(module[0])
            fd = os.memfd_create(f"sprawling-{digest[:16]}")  # closed with the worker process
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            path = f"/proc/self/fd/{fd}"
            self._modules[digest] = path
            self._fetches += 1
        return path

    def run(self, job: sprawling.Job, digest: Optional[str], module: Optional[list]) -> tuple:
        # `module` is [ObjectRef] (a list, so Ray does not resolve it at the call): fetched from the
        # object store only the first time this actor sees the digest.
        if digest is not None:
            job = replace(job, wasm=self._module_path(digest, module))
        self._jobs += 1
        try:
            return ("outcome", self._sandbox.run_job(job))
        except sprawling.SandboxError as e:
            return ("error", e.code, e.message, e.alternative, e.detail)

    def info(self) -> dict:
        """The worker's pid and node, jobs run, modules fetched and held."""
        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(), "jobs": self._jobs,
                "fetches": self._fetches, "modules": len(self._modules)}


_RemoteActor = ray.remote(max_restarts=-1, max_task_retries=0, num_cpus=1)(SandboxActor)

Result = Union[sprawling.Outcome, sprawling.SandboxError]


class Pool:
    """Actors holding a Sandbox each and the scheduling of jobs over them.

    actors            how many (default: one per alive node, each pinned to its node; a number
                      places them where Ray likes, e.g. several on one machine)
    sandbox_options   the Sandbox(...) keyword arguments every actor uses
    in_flight_per_actor   jobs sent to an actor before its answers are awaited (backpressure:
                      at most actors × this many jobs are outstanding, whatever the batch size)
    max_attempts      runs of one idempotent job before its worker losses count as its answer
    """

    def __init__(self, actors: Optional[int] = None, *, sandbox_options: Optional[Mapping[str, Any]] = None,
                 in_flight_per_actor: int = 4, max_attempts: int = 3) -> None:
        if not ray.is_initialized():
            raise RuntimeError("sprawling.ray.Pool needs a Ray connection: call ray.init() first")
        if in_flight_per_actor < 1 or max_attempts < 1:
            raise ValueError("in_flight_per_actor and max_attempts must be at least 1")
        options = dict(sandbox_options or {})
        sprawling.Sandbox(**options)  # the options are checked here, not in every actor
        if actors is None:
            nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
            self._actors = [_RemoteActor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
                            .remote(options) for node in nodes]
        else:
            if actors < 1:
                raise ValueError("actors must be at least 1")
            self._actors = [_RemoteActor.remote(options) for _ in range(actors)]
        self._in_flight = in_flight_per_actor
        self._max_attempts = max_attempts
        self._modules: dict[str, tuple[str, Any]] = {}  # key -> (digest, ObjectRef)
        self._next = 0

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        """Ends the actors (their Sandboxes and cached modules)."""
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors = []

    @property
    def actors(self) -> list:
        """The actor handles (for info() or tests)."""
        return list(self._actors)

    def info(self) -> list[dict]:
        """SandboxActor.info() of each actor."""
        return ray.get([a.info.remote() for a in self._actors])

    # ---- scheduling ----

    def _module(self, job: sprawling.Job) -> tuple[Optional[str], Optional[list]]:
        """The job's module in the object store, put there once per distinct module."""
        path: Optional[str] = None
        if isinstance(job.wasm, (bytes, bytearray, memoryview)):
            data: Optional[bytes] = bytes(job.wasm)
            key = "bytes:" + hashlib.sha256(data).hexdigest()
        else:
            path = os.path.abspath(os.fsdecode(job.wasm))
            stat = os.stat(path)  # a changed file is another module
            key = f"path:{stat.st_mtime_ns}:{stat.st_size}:{path}"
            data = None
        if key not in self._modules:
            if data is None:
                with open(path, "rb") as f:
                    data = f.read()
            self._modules[key] = (hashlib.sha256(data).hexdigest(), ray.put(data))
        digest, ref = self._modules[key]
        return digest, [ref]

    def _submit(self, job: sprawling.Job, avoid: Optional[int] = None) -> tuple[Any, int]:
        digest, module = self._module(job)
        index = self._next % len(self._actors)
        if avoid is not None and len(self._actors) > 1 and index == avoid:
            index = (index + 1) % len(self._actors)
        self._next = index + 1
        # The actor gets the bytes; argv defaults to the file's name ("module" for bytes) as
        # Sandbox.run's would.
        argv = job.argv
        if argv is None:
            is_bytes = isinstance(job.wasm, (bytes, bytearray, memoryview))
            argv = ["module"] if is_bytes else [os.path.basename(os.fsdecode(job.wasm))]
        return self._actors[index].run.remote(replace(job, wasm=b"", argv=argv), digest, module), index

    def as_completed(self, jobs: Iterable[sprawling.Job]) -> Iterator[tuple[int, Result]]:
        """Runs the jobs and yields (index in jobs, Outcome or SandboxError) as each is answered:
        every job exactly once."""
        if not self._actors:
            raise RuntimeError("the pool was shut down")
        pending_jobs = iter(enumerate(jobs))
        limit = self._in_flight * len(self._actors)
        running: dict[Any, tuple[int, sprawling.Job, int, int]] = {}  # ref -> (index, job, attempt, actor)

        def fill() -> None:
            while len(running) < limit:
                try:
                    index, job = next(pending_jobs)
                except StopIteration:
                    return
                if not isinstance(job, sprawling.Job):
                    raise TypeError(f"jobs[{index}] must be a sprawling.Job, not {type(job).__name__}")
                ref, actor = self._submit(job)
                running[ref] = (index, job, 1, actor)

        fill()
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            ref = done[0]
            index, job, attempt, actor = running.pop(ref)
            try:
                answer = ray.get(ref)
            except _WORKER_LOST as lost:
                if not job.idempotent:
                    yield index, sprawling.SandboxError(
                        "E_SANDBOX_HOST",
                        f"the worker running job {index} ({job.label()}) died, and the job is marked not idempotent "
                        f"(Job(idempotent=False)), so it was not run again: {type(lost).__name__}",
                        detail={"job": job.label(), "index": str(index)})
                elif attempt >= self._max_attempts:
                    yield index, sprawling.SandboxError(
                        "E_SANDBOX_HOST", f"job {index} ({job.label()}): its worker died on each of {attempt} attempts",
                        detail={"job": job.label(), "index": str(index)})
                else:
                    again, where = self._submit(job, avoid=actor)
                    running[again] = (index, job, attempt + 1, where)
                fill()
                continue
            if answer[0] == "outcome":
                yield index, answer[1]
            else:
                _, code, message, alternative, detail = answer
                yield index, sprawling.SandboxError(code, message, alternative, detail)
            fill()

    def run_many(self, jobs: Iterable[sprawling.Job], *, return_exceptions: bool = False) -> list[Result]:
        """Runs the jobs and returns their answers in the jobs' order; the first SandboxError (in
        order) is raised once all are answered, unless return_exceptions keeps it in place."""
        answers: dict[int, Result] = dict(self.as_completed(jobs))
        results = [answers[k] for k in range(len(answers))]
        if not return_exceptions:
            for result in results:
                if isinstance(result, sprawling.SandboxError):
                    raise result
        return results

    async def run_many_async(self, jobs: Iterable[sprawling.Job], *, return_exceptions: bool = False) -> list[Result]:
        """run_many on a thread of the event loop's default executor, so the loop keeps running."""
        job_list = list(jobs)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: self.run_many(job_list, return_exceptions=return_exceptions))
