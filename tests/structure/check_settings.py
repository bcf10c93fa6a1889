#!/usr/bin/env python3
"""The configuration table is the one reader of TESSERA_* variables, and the README lists it.

Fails when a C file of the library, the CLI, the benchmarks or the JAX binding reads a
TESSERA_* variable other than through the table (src/runtime/settings.c), when the binding's
Python reads one that is not a loader's (the variables that find the library before it loads),
or when the README's table of variables and the library's table name different variables.

    check_settings.py SOURCE_DIR
"""
import pathlib
import re
import sys

TABLE = pathlib.Path("src/runtime/settings.c")
# Read by Python before libtessera_jax is loaded, so they cannot ask it.
LOADER = {"TESSERA_JAX_LIBRARY", "TESSERA_BUILD_DIR"}


def main(root: pathlib.Path) -> int:
    errors = []
    c_read = re.compile(r'getenv\(\s*"(TESSERA_\w+)"')
    for folder in ("src", "tools", "bench", "python/ffi", "examples"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".c", ".h", ".cu") or path.relative_to(root) == TABLE:
                continue
            for name in c_read.findall(path.read_text(errors="replace")):
                errors.append(f"{path.relative_to(root)} reads {name} itself")
    py_read = re.compile(r'environ(?:\.get\(|\[)\s*"(TESSERA_\w+)"|getenv\(\s*"(TESSERA_\w+)"')
    for path in sorted((root / "python/tessera").rglob("*.py")):
        for m in py_read.finditer(path.read_text()):
            name = m.group(1) or m.group(2)
            if name not in LOADER:
                errors.append(f"{path.relative_to(root)} reads {name} itself")
    table = set(re.findall(r'\{\{"(TESSERA_\w+)"', (root / TABLE).read_text()))
    readme = set(re.findall(r"^\| `(TESSERA_\w+)` \|", (root / "README.md").read_text(), re.M))
    if not table:
        errors.append(f"no rows found in {TABLE}")
    for name in sorted(table - readme):
        errors.append(f"README.md's table of variables lacks {name}")
    for name in sorted(readme - table):
        errors.append(f"README.md's table of variables lists {name}, which the library has not")
    for e in errors:
        print(e)
    if not errors:
        print(f"{len(table)} variables, read through the table only, all in the README")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
