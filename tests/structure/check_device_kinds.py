#!/usr/bin/env python3
"""The runtime names no device kind: what it must know of one, the backend table says.

Fails when a file of src/runtime/ names a kind's constant (TESSERA_DEVICE_CPU, _CUDA, ...; the
count TESSERA_DEVICE_KINDS is allowed) or a backend by its folder's name in a string ("cuda",
"sim", ...), so that adding a backend stays adding a folder under src/device/ and its table.

    check_device_kinds.py SOURCE_DIR
"""
import pathlib
import re
import sys


def main(root: pathlib.Path) -> int:
    backends = sorted(p.name for p in (root / "src/device").iterdir() if p.is_dir())
    constant = re.compile(r"\bTESSERA_DEVICE_(?!KINDS\b)[A-Z0-9_]+\b")
    named = re.compile(r'"(' + "|".join(map(re.escape, backends)) + r')"', re.IGNORECASE)
    errors = []
    for path in sorted((root / "src/runtime").rglob("*")):
        if path.suffix not in (".c", ".h"):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in constant.finditer(line):
                errors.append(f"{path.relative_to(root)}:{n}: names the kind {m.group(0)}")
            for m in named.finditer(line):
                errors.append(f"{path.relative_to(root)}:{n}: names the backend {m.group(0)}")
    for e in errors:
        print(e)
    print(f"check_device_kinds: {len(errors)} place(s) in src/runtime name a device kind "
          f"(backends: {', '.join(backends)})")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(pathlib.Path(sys.argv[1])))
