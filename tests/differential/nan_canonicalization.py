#!/usr/bin/env python3
"""NaN canonicalization checked against Wasmtime: every assert_return of
tests/determinism/nan_canonicalization.wast (which `sprawl wast --nan-canonicalization` runs under
both tiers) must also hold, bit for bit, under Wasmtime with its cranelift_nan_canonicalization.
So the set of operations that canonicalize, and the canonical NaN's sign and payload, are the
engine the contract was written for's. Exits 77 (skipped) without wasmtime-py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import wasmtime
except ImportError:
    print("nan_canonicalization: wasmtime-py is not installed (see tests/differential/README.md); skipped")
    sys.exit(77)

SCRIPT = Path(__file__).resolve().parent.parent / "determinism" / "nan_canonicalization.wast"
CONST = re.compile(r"\((i32|i64)\.const ([^)\s]+)\)")
ASSERT = re.compile(r'\(assert_return \(invoke "([^"]+)"((?:\s*\((?:i32|i64)\.const [^)]+\))*)\)((?:\s*\((?:i32|i64)\.const [^)]+\))+)\)')


def signed(kind: str, value: int) -> int:
    """wasmtime-py takes i32/i64 arguments as signed Python ints."""
    bits = 32 if kind == "i32" else 64
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def main() -> int:
    text = SCRIPT.read_text()
    module = text[text.index("(module"):text.index("\n)\n") + 2]
    config = wasmtime.Config()
    config.cranelift_nan_canonicalization = True
    engine = wasmtime.Engine(config)
    store = wasmtime.Store(engine)
    exports = wasmtime.Instance(store, wasmtime.Module(engine, module), []).exports(store)
    asserts = ASSERT.findall(text)
    if len(asserts) != text.count("(assert_return"):
        print(f"nan_canonicalization: read {len(asserts)} of {text.count('(assert_return')} assertions")
        return 1
    failed = 0
    for name, args, expected in asserts:
        call = [signed(k, int(v, 0)) for k, v in CONST.findall(args)]
        want = [(k, int(v, 0)) for k, v in CONST.findall(expected)]
        got = exports[name](store, *call)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        got = [g & ((1 << (32 if k == "i32" else 64)) - 1) for g, (k, _) in zip(got, want)]
        if got != [v for _, v in want]:
            failed += 1
            print(f"nan_canonicalization: {name}{tuple(hex(a) for a in call)}: Wasmtime {[hex(g) for g in got]}, "
                  f"the script {[hex(v) for _, v in want]}")
    print(f"nan_canonicalization: Wasmtime agrees on {len(asserts) - failed} of {len(asserts)} assertions")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
