"""A shared library exports its public API only.

Lists the dynamic symbols a shared library defines (`nm -D --defined-only`) and fails when one
does not start with an allowed prefix: internal names (`tsr_*`) and third-party code must stay
hidden. Prints the offenders.

Usage: check_exports.py LIBRARY PREFIX..."""
import os
import subprocess
import sys

NM = os.environ.get("NM", "nm")


def main(argv):
    if len(argv) < 2:
        print("usage: check_exports.py LIBRARY PREFIX...", file=sys.stderr)
        return 2
    lib, prefixes = argv[0], tuple(argv[1:])
    out = subprocess.run([NM, "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    names = [f[2] for f in (line.split() for line in out.splitlines())
             if len(f) == 3 and f[1] in "TDBRVWi"]
    public = [n for n in names if n.startswith(prefixes)]
    others = sorted(n for n in names if not n.startswith(prefixes))
    for n in others:
        print(f"exported but not public: {n}")
    print(f"check_exports: {lib}: {len(public)} public symbols, {len(others)} others")
    return 1 if others or not public else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
