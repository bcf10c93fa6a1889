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

  python3 bench/scaling_model.py            # the tables of docs/scaling.md
"""
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
NETWORK = 50e9       # bytes/s a GPU sends off its node (one 400 Gb/s NIC per GPU)
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


def main():
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
    print("jaxmg 1.x's published 64-GPU run (N = 1310720, 8 x 8 grid 452 s, 64 x 1 grid 3065 s):")
    for grid in ((8, 8), (64, 1)):
        for sends in ("flat", "tree"):
            t, rate, eff = predict(1310720, 4096, grid[0], grid[1], 8, sends)
            print(f"  tessera model {grid[0]}x{grid[1]} {sends}: {t:7.1f} s, "
                  f"{rate / 1e12:6.0f} TFLOP/s, efficiency {eff:.2f}")


if __name__ == "__main__":
    main()
