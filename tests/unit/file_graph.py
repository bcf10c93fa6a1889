#!/usr/bin/env python3
"""Fails when the library's source files call each other in a ring.

Usage: file_graph.py PREFIX[,PREFIX...] OBJECT...  (an OBJECT may be a ;-separated CMake list)

Builds the graph "file A calls a function (or reads data) defined in file B" from the objects'
symbol tables (nm: what each object defines, what it leaves undefined), keeps the files whose
path contains one of the comma-separated PREFIXes (src/runtime/, ...), and prints every cycle
among them with the symbols on each edge. Exit status 1 when there is one, 0 otherwise.
Function pointers a lower file is handed are not references and make no edge.
"""
import collections
import subprocess
import sys


def source_of(obj):
    """src/runtime/task.c from .../CMakeFiles/tessera.dir/src/runtime/task.c.o"""
    name = obj.split(".dir/", 1)[-1]
    return name[:-2] if name.endswith(".o") else name


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    prefixes = argv[1].split(",")
    listed = [o for arg in argv[2:] for o in arg.split(";") if o]
    objs = [o for o in listed if any(p in source_of(o) for p in prefixes)]
    defined, used = {}, collections.defaultdict(set)
    for o in objs:
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBR":
                defined[f[2]] = o
            elif len(f) == 2 and f[0] == "U":
                used[o].add(f[1])
    edges = collections.defaultdict(set)
    for o in objs:
        for s in used[o]:
            if s in defined and defined[s] != o:
                edges[o].add(defined[s])
    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, rings, counter = {}, {}, set(), [], [], [0]
    for root in objs:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    rings.append(comp)
    for comp in rings:
        print("ring of files:", " ".join(sorted(source_of(x) for x in comp)))
        for a in sorted(comp):
            for b in sorted(edges[a] & set(comp)):
                syms = sorted(s for s in used[a] if defined.get(s) == b)
                print("  %s -> %s: %s" % (source_of(a), source_of(b), " ".join(syms)))
    print("%d files, %d rings" % (len(objs), len(rings)))
    return 1 if rings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
