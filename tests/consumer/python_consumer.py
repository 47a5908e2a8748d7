# The Python twin of the package consumer: imports the installed `sprawling` module with Debian's
# python3 and runs a text module through it (scripts/check package, on the unpacked and on the
# apt-installed .deb).   /usr/bin/python3 tests/consumer/python_consumer.py EXPECTED_PACKAGE_DIR
import os
import sys

import sprawling

# Ends with proc_exit(7): an outcome only the engine can give.
EXIT7_WAT = b"""(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const 7))))
"""


def main() -> int:
    expected = os.path.realpath(sys.argv[1])
    found = os.path.realpath(os.path.dirname(os.path.dirname(sprawling.__file__)))
    if found != expected:
        print(f"python_consumer: imported sprawling from {found}, expected {expected}")
        return 1
    if not sprawling.engine_available():
        try:
            sprawling.Sandbox().run(EXIT7_WAT, fuel=1_000_000)
        except sprawling.SandboxError as e:
            ok = e.code == "E_TOOL_UNAVAILABLE"
        else:
            ok = False
    else:
        out = sprawling.Sandbox(timeout=10.0).run(EXIT7_WAT, fuel=1_000_000)
        ok = out.exit == sprawling.Exit("failure", 7) and out.stats.fuel_consumed > 0
    print(f"python_consumer: {'ok' if ok else 'FAILED'} (sprawling {sprawling.version()} from {found})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
