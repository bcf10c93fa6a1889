#!/usr/bin/env python3
"""Step model of tessera's distributed tile Cholesky (right-looking, owner computes, 2D
block-cyclic over a P x Q grid of GPUs, one process per GPU, G GPUs per node).

Each step k of the tile loop costs the largest of three things that overlap (look-ahead: the next
panel is factored while the trailing update of this step runs):
  chain   the critical path through the step: the diagonal tile's potrf, its send to the panel's
          processes, the first panel tile's trsm, its send, the next diagonal tile's syrk;
  update  the most trailing-update tiles (gemm / syrk) one GPU owns, times a tile gemm, plus the
          panel tiles of the GPUs in the panel's process column (multiplied by the inverted
          diagonal tile, as tessera does on GPUs) and that inversion shared over the column;
  sends   the bytes the busiest panel owner sends: each panel tile goes to the processes of its
          row and of its column (P + Q - 2 of them) point to point as tessera sends today
          ("flat"), or down a pipelined broadcast tree costing about two tiles per link
          ("tree"); on-node destinations over NVLink, the others over the node's network.
The model's inputs are measured kernel times (bench_gpu_kernels on one H200) and link rates;
it is checked against tessera's runs on 1, 2 and 4 H200s of one node.

LU and QR (getrf.c, geqrf.c) run on column panels dealt cyclically over a 1 x P grid: a step is
one panel task on its owner's GPU (the whole column from the diagonal down), the whole panel sent
to every process holding a later panel, one update per later panel on its owner. A step costs
the largest of the chain (the panel's hop to the next panel's owner, that panel's update, its
factorization, slowed beside its GPU's other updates), the busiest process's work, and the sends.

  python3 bench/scaling_model.py                    # every table of docs/scaling.md
  python3 bench/scaling_model.py --routine getrf    # one routine's
"""
import argparse
import math

# Tile kernel times in seconds on one H200, f64 (docs/benchmarks.md, "Tile kernels on one H200").
# The panel tiles are multiplied by the inverted diagonal tile (trmm out of place, tessera's GPU
# default), the diagonal tile inverted once a step (off the critical path but on its GPU).
KERNELS = {
    2048: {"gemm": 0.291e-3, "syrk": 0.160e-3, "panel": 0.193e-3, "trsm": 0.884e-3,
           "potrf": 0.858e-3, "trtri": 1.510e-3},
    4096: {"gemm": 2.217e-3, "syrk": 1.129e-3, "panel": 1.251e-3, "trsm": 2.773e-3,
           "potrf": 1.765e-3, "trtri": 3.483e-3},
}
GEMM_PEAK = 62.0e12  # f64 dgemm rate of one H200 at large tiles (the efficiency's reference)
NVLINK = 300e9       # bytes/s a GPU sends to another of its node (NCCL bus bandwidth, 2 x H200)
NETWORK = 50e9       # bytes/s a GPU sends off its node (one 400 Gb/s NIC per GPU; assumed)
LATENCY = 10e-6      # seconds per message


def step_times(n, nb, p, q, gpus_per_node, sends):
    k_t = KERNELS[nb]
    nt = math.ceil(n / nb)
    tile_bytes = nb * nb * 8
    procs = p * q
    # of a panel tile's P + Q - 2 destinations, how many are on the sender's node (ranks are
    # row-major: rank = row * Q + col, node = rank // G)
    row_on_node = min(q, gpus_per_node) - 1
    col_on_node = max(1, gpus_per_node // q) - 1 if q < gpus_per_node else 0
    dests = p + q - 2
    on_node = min(dests, row_on_node + col_on_node)
    off_node = dests - on_node
    if sends == "tree":  # a pipelined broadcast: each link carries a tile about twice
        on_node, off_node = min(on_node, 2), min(off_node, 2)
    per_tile_send = (on_node * tile_bytes / NVLINK + off_node * tile_bytes / NETWORK +
                     (on_node + off_node) * LATENCY)
    msg = tile_bytes / (NETWORK if procs > gpus_per_node else NVLINK) + LATENCY
    if procs == 1:
        msg = 0.0
    total = 0.0
    for k in range(nt):
        m = nt - k - 1  # trailing tiles below the diagonal one
        chain = k_t["potrf"] + (k_t["trsm"] + k_t["syrk"] + 2 * msg if m else 0.0)
        rows, cols = math.ceil(m / p), math.ceil(m / q)
        update_tiles = rows * cols / 2 + min(rows, cols) / 2
        update = update_tiles * k_t["gemm"] + rows * k_t["panel"] + k_t["trtri"] / q
        send = rows * per_tile_send
        total += max(chain, update, send)
    return total


def predict(n, nb, p, q, gpus_per_node=8, sends="flat"):
    t = step_times(n, nb, p, q, gpus_per_node, sends)
    flops = n ** 3 / 3
    rate = flops / t
    return t, rate, rate / (p * q * GEMM_PEAK)


# LU's panel: cusolverDnDgetrf on an m x 2048 panel alone on one H200, rows -> seconds
# (docs/benchmarks.md, "LU"; 65536: the first panel's span in a trace, nothing beside it).
LU_PANEL = ((2048, 5.49e-3), (4096, 7.1e-3), (16384, 10.8e-3), (32768, 16.9e-3), (65536, 20.9e-3))
BESIDE = 3.0          # a panel beside the updates takes about three times its time alone
UPDATE_RATE = 50.2e12  # lu_step with L_kk^-1 on a 32768 x 2048 panel: 5.30 ms (bench_lu_panel)
QR_COLUMN = 22e-6     # geqrt: 45 ms for a 14336 x 2048 panel traced in a run (updates beside)
QR_ROWS = 14336
HBM = 141e9           # bytes of one H200


def interp(points, x):
    """Linear between the measured points, their last slope beyond, proportional below."""
    if x <= points[0][0]:
        return points[0][1] * x / points[0][0]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            break
    return y0 + (x - x0) * (y1 - y0) / (x1 - x0)


def qr_panel(m, nb):
    """The traced cost a column, the rows beyond that panel's at LU's panel rate (assumed)."""
    (x0, y0), (x1, y1) = LU_PANEL[-2:]
    per_row = (y1 - y0) / (x1 - x0) / 2048 ** 2
    return QR_COLUMN * nb + max(0, m - QR_ROWS) * 2 * nb * nb * per_row


PANELS = {  # tile width tessera picks on GPUs (tessera_tile_for_lu / _qr), flops, costs
    "getrf": {"nb": 2048, "flops": lambda n: 2 * n ** 3 / 3, "beside": BESIDE,
              "panel": lambda m, nb: interp(LU_PANEL, m),
              "update": lambda m, nb: (2 * (m - nb) * nb * nb + nb ** 3) / UPDATE_RATE},
    "geqrf": {"nb": 1024, "flops": lambda n: 4 * n ** 3 / 3, "beside": 1.0, "panel": qr_panel,
              "update": lambda m, nb: (4 * m * nb * nb + 2 * nb ** 3) / UPDATE_RATE},
}


def on_node(owner, d, procs, g):
    """How many of ranks owner + 1 .. owner + d (mod procs) share owner's node of g ranks."""
    base = owner - owner % g
    ahead = min(d, min(base + g, procs) - 1 - owner)  # the ranks after owner on its node
    return ahead + max(0, min(owner + d - procs + 1, owner) - base)  # and those wrapped to 0..


def panel_steps(routine, n, procs, g, sends):
    """Seconds of a factorization on column panels over a 1 x procs grid, and the sums over
    the steps of its chain, of the busiest process's work and of the panel owner's sends."""
    r = PANELS[routine]
    nb, nt = r["nb"], math.ceil(n / r["nb"])
    size = n * nb * 8  # a panel moves whole, its rows above the diagonal too
    first = r["panel"](n, nb)  # the first panel, alone
    total, sums = first, [first, first, 0.0]
    for k in range(nt - 1):
        m, later, owner = n - k * nb, nt - k - 1, k % procs
        update = r["update"](m, nb)
        mine = math.ceil(later / procs)  # the next panel's owner updates the most panels
        alone = r["panel"](m - nb, nb)
        same = (k + 1) % procs // g == owner // g
        hop = 0.0 if procs == 1 else size / (NVLINK if same else NETWORK) + LATENCY
        dests = min(procs - 1, later)
        on = on_node(owner, dests, procs, g)
        on, off = (min(on, 2), min(dests - on, 2)) if sends == "tree" else (on, dests - on)
        step = (hop + update + alone * (r["beside"] if mine > 1 else 1.0),  # chain
                mine * update + alone,  # work
                on * size / NVLINK + off * size / NETWORK + (on + off) * LATENCY)  # sends
        total += max(step)
        sums = [s + t for s, t in zip(sums, step)]
    return total, sums


def panel_tables(routine):
    r = PANELS[routine]
    print(f"{routine}, f64, column panels of {r['nb']} over a 1 x P grid.")
    print("Checks against tessera's measured runs (one node):")
    print(f"{'run':<52} {'model s':>8} {'measured':>9} {'model/measured':>15}")
    for label, n, p, seconds in CHECKS[routine]:
        t, _ = panel_steps(routine, n, p, 8, "flat")
        print(f"{label:<52} {t:8.3f} {seconds:9.4g} {seconds / t:15.2f}")
    print()
    print("Predictions (chain, work, sends: sums over the steps; sends, rate, eff. with the tree):")
    print(f"{'nodes':>5} {'G':>2} {'GPUs':>5} {'N':>8} {'GB/GPU':>6} {'chain':>6} {'work':>6} "
          f"{'sends':>6} {'flat s':>8} {'tree s':>7} {'TFLOP/s':>7} {'eff.':>5}")
    for n in (2 ** 18, 2 ** 19, 2 ** 20):
        nt = math.ceil(n / r["nb"])
        for g in (4, 8):
            for nodes in (8, 16, 32, 64):
                procs = nodes * g
                mem = (n * r["nb"] * 8) * (math.ceil(nt / procs) + 2)  # its panels, 2 received
                flat, _ = panel_steps(routine, n, procs, g, "flat")
                tree, (chain, work, sent) = panel_steps(routine, n, procs, g, "tree")
                rate = r["flops"](n) / tree
                print(f"{nodes:5d} {g:2d} {procs:5d} {n:8d} {mem / 1e9:6.0f} {chain:6.1f} "
                      f"{work:6.1f} {sent:6.1f} {flat:8.0f} {tree:7.1f} {rate / 1e12:7.0f} "
                      f"{rate / (procs * GEMM_PEAK):5.2f}{'' if mem <= HBM else ' > HBM'}")
    print()
    print("Against jaxmg 1.4.1 (cuSOLVERMp) measured here, one process per H200:")
    for label, n, p, jaxmg, tessera in VERSUS[routine]:
        t, _ = panel_steps(routine, n, p, 8, "flat")
        print(f"  {label}: jaxmg {jaxmg:.3f} s, tessera.jax {tessera:.3f} s, model {t:.3f} s")


CHECKS = {  # label, N, GPUs, measured seconds (docs/benchmarks.md)
    "getrf": (("1 H200, resident", 65536, 1, 4.256),
              ("one process, 2 H200, resident", 65536, 2, 2.203),
              ("2 processes x 1 H200, tessera.jax.lu_solve (fitted)", 65536, 2, 2.6632),
              ("one process, 2 H200, distributed code, CLI", 65536, 2, 3.8986),
              ("2 processes x 1 H200, CLI", 65536, 2, 6.5169)),
    "geqrf": (("1 H200, resident", 32768, 1, 1.367),
              ("one process, 2 H200, resident", 65536, 2, 5.417),
              ("one process, 4 H200, resident", 32768, 4, 0.822)),
}
VERSUS = {  # label, N, GPUs, jaxmg s, tessera.jax s (shared/reference/jaxmg.md)
    "getrf": (("lu_solve N = 32768, 2 processes", 32768, 2, 1.120, 0.490),
              ("lu_solve N = 65536, 4 processes", 65536, 4, 3.567, 1.925)),
    "geqrf": (("qr N = 16384, 2 processes (Q formed too)", 16384, 2, 0.623, 0.488),),
}


def potrf_tables():
    print("Checks against tessera's measured runs (one node, f64, N = 65536, tile 2048):")
    measured = {(1, 1): 49.5e12, (1, 2): 95.3e12, (2, 2): 194.4e12}
    print(f"{'grid':>6} {'model TFLOP/s':>14} {'measured':>9} {'model/measured':>15}")
    for (p, q), r in measured.items():
        _, rate, _ = predict(65536, 2048, p, q, gpus_per_node=8)
        print(f"{p}x{q:<4} {rate / 1e12:14.1f} {r / 1e12:9.1f} {rate / r:15.2f}")
    print()
    print("Predictions, 8 GPUs a node, f64, tile 4096:")
    print(f"{'nodes':>5} {'GPUs':>5} {'grid':>7} {'N':>8} {'sends':>5} {'seconds':>9} "
          f"{'TFLOP/s':>9} {'efficiency':>10}")
    for nodes in (8, 16, 32, 64):
        g = nodes * 8
        p2 = int(math.sqrt(g))
        while g % p2:
            p2 -= 1
        for grid in ((g, 1), (p2, g // p2)):
            for n in (262144, 524288, 1000000):
                for sends in ("flat", "tree"):
                    nb = 4096
                    t, rate, eff = predict(n, nb, grid[0], grid[1], 8, sends)
                    print(f"{nodes:5d} {g:5d} {grid[0]:>3}x{grid[1]:<3} {n:8d} {sends:>5} "
                          f"{t:9.1f} {rate / 1e12:9.0f} {eff:10.2f}")
    print()
    print("4 GPUs a node, the most square grid, tile 4096 (rate and efficiency with the tree):")
    for n in (2 ** 18, 2 ** 19, 2 ** 20):
        for nodes in (8, 16, 32, 64):
            g = nodes * 4
            p = max(d for d in range(1, int(math.sqrt(g)) + 1) if g % d == 0)
            flat, _, _ = predict(n, 4096, p, g // p, 4, "flat")
            t, rate, eff = predict(n, 4096, p, g // p, 4, "tree")
            print(f"{nodes:5d} {g:5d} {p:>3}x{g // p:<3} {n:8d} flat {flat:7.1f} s, tree "
                  f"{t:6.1f} s {rate / 1e12:6.0f} TFLOP/s {eff:5.2f}")
    print()
    print("jaxmg 1.x's published 64-GPU run (N = 1310720, 8 x 8 grid 452 s, 64 x 1 grid 3065 s):")
    for grid in ((8, 8), (64, 1)):
        for sends in ("flat", "tree"):
            t, rate, eff = predict(1310720, 4096, grid[0], grid[1], 8, sends)
            print(f"  tessera model {grid[0]}x{grid[1]} {sends}: {t:7.1f} s, "
                  f"{rate / 1e12:6.0f} TFLOP/s, efficiency {eff:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routine", choices=("potrf", "getrf", "geqrf", "all"), default="all")
    routine = parser.parse_args().routine
    if routine in ("potrf", "all"):
        potrf_tables()
    for name in ("getrf", "geqrf"):
        if routine in (name, "all"):
            print()
            panel_tables(name)


if __name__ == "__main__":
    main()
