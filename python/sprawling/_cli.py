# The `sprawl` console command of a pip-installed `sprawling`: execs the `sprawl` binary the wheel
# carries in this package folder (beside libsprawling.so and the compiled tier's plugin).
from __future__ import annotations

import os
import sys


def main() -> None:
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sprawl")
    if not os.access(binary, os.X_OK):
        sys.stderr.write(f"sprawl: no sprawl binary in the installed package ({binary}); this installation of "
                         "`sprawling` was not made from its wheel (Debian's package installs /usr/bin/sprawl)\n")
        raise SystemExit(127)
    os.execv(binary, ["sprawl", *sys.argv[1:]])


if __name__ == "__main__":
    main()
