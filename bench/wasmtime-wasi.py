#!/usr/bin/env python3
# Runs a wasip1 command module under Wasmtime (wasmtime-py, Cranelift): bench/run's Wasmtime
# columns. Usage: wasmtime-wasi.py [--cache DIR] [--fuel] [--dir HOST::GUEST]... MODULE.wasm [ARGS...]; the guest's
# stdout and stderr are this process's, and it exits with the guest's exit code (a trap: 134).
# --cache DIR: Wasmtime's compilation cache in DIR (a first run fills it, later runs load the
# machine code from it); without it every run compiles the module (cold). --fuel: fuel metering
# on with a budget no workload reaches (as bench/run's sprawl fuel-on runs). --dir: a host folder
# preopened read-only at GUEST (as `sprawl run --dir`; the python arm's standard library).
import argparse
import sys
import tempfile
from pathlib import Path

import wasmtime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--fuel", action="store_true")
    ap.add_argument("--dir", action="append", default=[], metavar="HOST::GUEST")
    ap.add_argument("module", type=Path)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()

    config = wasmtime.Config()
    if a.cache is not None:
        a.cache.mkdir(parents=True, exist_ok=True)
        toml = a.cache / "cache.toml"
        if not toml.exists():
            toml.write_text(f'[cache]\ndirectory = "{a.cache.resolve() / "entries"}"\n')
        config.cache = str(toml)
    if a.fuel:
        config.consume_fuel = True
    engine = wasmtime.Engine(config)
    store = wasmtime.Store(engine)
    if a.fuel:
        store.set_fuel(10**15)
    wasi = wasmtime.WasiConfig()
    wasi.argv = [a.module.name] + a.args
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    for spec in a.dir:
        host, sep, guest = spec.partition("::")
        if not sep:
            ap.error(f"--dir wants HOST::GUEST, got {spec!r}")
        wasi.preopen_dir(host, guest, fs_mutable=False)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    module = wasmtime.Module.from_file(engine, str(a.module))
    instance = linker.instantiate(store, module)
    start = instance.exports(store)["_start"]
    try:
        start(store)
    except wasmtime.ExitTrap as e:
        return e.code
    except wasmtime.Trap as e:
        print(f"Error: {e}", file=sys.stderr)
        return 134
    return 0


if __name__ == "__main__":
    sys.exit(main())
