"""The file graph of the library has no cycle, and its arrows point down the layers.

Reads the object files of the library with `nm`: file A depends on file B when A uses a symbol
that B defines. Calls through function pointers (a layer calling back into a higher one) are
not edges. Prints every strongly connected set of two or more files, with the symbols on each
edge inside it, every edge from a layer to one above it (LAYERS, bottom to top: the project's
design), every edge into the distributed flows from an algorithms file that is not one of the
front doors' distributed files (a call on one process never enters distributed code: the
others reach it through a matrix's flow), and every edge from the descriptors to the tile
loops; exits 1 when there is any.

Usage: check_file_graph.py OBJECT...   (the objects of the library, as $<TARGET_OBJECTS:...>;
an argument may be a ;-separated list)"""
import collections
import re
import os
import subprocess
import sys

NM = os.environ.get("NM", "nm")

# The layers by folder, bottom to top; a file may use only files of its own layer or below.
# The generated backend registry, glue between backends and kernels, is in none.
LAYERS = ["src/device/", "src/runtime/", "src/comm/", "src/distributed/", "src/kernels/", "src/linalg/",
          "src/init/"]


# The algorithms' files that know of processes; the others reach the distributed flows only
# through a flow's table (runtime/flow.h).
DISTRIBUTED_DOORS = {"src/linalg/desc/distributed.c", "src/linalg/front/lapack_dist.c",
                     "src/linalg/front/eig_dist.c", "src/linalg/front/eig_band_dist.c",
                     "src/linalg/front/mixed_dist.c", "src/linalg/front/matrix_dist.c"}
# Folders of one layer that must not use another of it (the descriptors are the loops' ground).
FORBIDDEN = [("src/linalg/desc/", "src/linalg/loops/")]


def forbidden(a, b):
    """Why the edge a -> b breaks a rule of the algorithms layer, or None."""
    na, nb = source_name(a), source_name(b)
    if na.startswith("src/linalg/") and nb.startswith("src/distributed/") and na not in DISTRIBUTED_DOORS:
        return "into the distributed flows"
    for low, high in FORBIDDEN:
        if na.startswith(low) and nb.startswith(high):
            return f"from {low} to {high}"
    return None


def layer(obj):
    name = source_name(obj)
    return next((i for i, p in enumerate(LAYERS) if name.startswith(p)), None)


def source_name(obj):
    """src/runtime/task.c for .../tessera_objects.dir/src/runtime/task.c.o"""
    m = re.search(r"\.dir/(.*?)\.(o|obj)$", obj)
    return m.group(1) if m else obj


def read_symbols(objects):
    defined, used = {}, collections.defaultdict(set)
    for obj in objects:
        out = subprocess.run([NM, obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 3 and fields[1] in "TDBRV":
                defined[fields[2]] = obj
            elif len(fields) == 2 and fields[0] == "U":
                used[obj].add(fields[1])
    return defined, used


def cycles(nodes, edges):
    """Strongly connected components of two or more nodes (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def main(objects):
    if not objects:
        print("check_file_graph: no object files given", file=sys.stderr)
        return 2
    defined, used = read_symbols(objects)
    edges = collections.defaultdict(set)
    for obj in objects:
        for sym in used[obj]:
            if defined.get(sym, obj) != obj:
                edges[obj].add(defined[sym])
    found = cycles(sorted(objects), edges)
    for comp in found:
        print("cycle: " + " ".join(source_name(o) for o in comp))
        for a in comp:
            for b in sorted(edges[a] & set(comp)):
                syms = sorted(s for s in used[a] if defined.get(s) == b)
                print(f"  {source_name(a)} -> {source_name(b)}: {', '.join(syms[:8])}")
    upward = 0
    for a in sorted(objects):
        for b in sorted(edges[a]):
            la, lb = layer(a), layer(b)
            if la is not None and lb is not None and lb > la:
                upward += 1
                syms = sorted(s for s in used[a] if defined.get(s) == b)
                print(f"upward: {source_name(a)} -> {source_name(b)}: {', '.join(syms[:8])}")
    broken = 0
    for a in sorted(objects):
        for b in sorted(edges[a]):
            why = forbidden(a, b)
            if why:
                broken += 1
                syms = sorted(s for s in used[a] if defined.get(s) == b)
                print(f"{why}: {source_name(a)} -> {source_name(b)}: {', '.join(syms[:8])}")
    nedges = sum(len(e) for e in edges.values())
    print(f"check_file_graph: {len(objects)} files, {nedges} edges, {len(found)} cycle(s), "
          f"{upward} upward edge(s), {broken} edge(s) against the algorithms' rules")
    return 1 if found or upward or broken else 0


if __name__ == "__main__":
    sys.exit(main([o for arg in sys.argv[1:] for o in arg.split(";") if o]))
