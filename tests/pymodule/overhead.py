# Measurement, not a test: the per-job time of a short guest through the Python module, to set
# against tests/capi/overhead.cpp's C++ and C figures.
#   PYTHONPATH=build/release/python /usr/bin/python3 tests/pymodule/overhead.py GUEST.wasm [RUNS]
import sys
import time

import sprawling


def main() -> None:
    guest = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    sb = sprawling.Sandbox()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(runs):
            out = sb.run(guest, argv=["guest", "hello"], fuel=100_000_000)
            assert out.exit.kind == "success" and out.stdout
        best = min(best, (time.perf_counter() - start) / runs * 1e6)
    print(f"per job, best of 5 x {runs} runs of {guest} with argv [guest, hello]:")
    print(f"  Python (sprawling.Sandbox.run)       {best:8.1f} us")


if __name__ == "__main__":
    main()
