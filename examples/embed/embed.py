"""Embedding the sandbox from Python (the `sprawling` module): runs the wordcount guest on a file of
a host folder mounted read-only, with a fuel budget, and prints what came out.

    python3 embed.py wordcount.wasm examples/data     (guest and folder as arguments)
"""
import sys

import sprawling


def main() -> int:
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} GUEST.wasm FOLDER", file=sys.stderr)
        return 2
    guest, folder = sys.argv[1], sys.argv[2]
    sandbox = sprawling.Sandbox(timeout=5.0)  # 5 s of wall clock at most
    try:
        out = sandbox.run(guest, argv=["wordcount", "/data/poem.txt"],
                          mounts=[sprawling.Mount(folder, "/data", writable=False)],
                          fuel=100_000_000)
    except sprawling.SandboxError as e:
        # The job did not run: a stable code to act on, a message for people.
        print(f"error: {e.code}: {e.message}", file=sys.stderr)
        return 1
    # The guest ran: its output, and how it ended.
    print(out.stdout.decode(errors="replace"), end="")
    end = out.exit  # end.kind: "success", "failure", "fuel_exhausted" or "trap"
    how = {"success": "success", "failure": f"failure {end.code}",
           "fuel_exhausted": "fuel exhausted", "trap": f"trap ({end.message})"}[end.kind]
    print(f"exit: {how}, fuel used: {out.stats.fuel_consumed}")
    return 0 if end.kind == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
