#!/usr/bin/env python3
"""Numerical model of the mixed-precision LU solve's refinement: how many steps classical
refinement and GMRES-IR need on a random general matrix (entries uniform in (-0.5, 0.5), the
CLI's and the issue's baseline matrix) when the LU's trailing products run on tensor-core inputs.

A right-looking LU with partial pivoting in f32 (panels of 256, each factored column by column in
f32), whose trailing update A22 -= L21 U12 rounds its operands as the GPU product would: `s` f32
as it is, `tf32` / `bf16` rounded to nearest into TF32 / BF16, `tf32x3` / `bf16x3` split into
hi + lo, each rounded, and summed as hi·hi + hi·lo + lo·hi (f32 accumulation throughout). Then,
from x = M⁻¹ b, refinement in f64 until dsposv's criterion ‖b − A x‖∞ ≤ √n ‖A‖∞ ‖x‖∞ ε holds:
classical (x += M⁻¹ r) and GMRES-IR (GMRES on M⁻¹ A d = M⁻¹ r, tolerance 1e-8, basis up to 100),
each with the preconditioner M⁻¹ applied in f32 (M32: r rounded to f32, solved there, as tessera
does) and in f64 with the f32 factors (M64). Prints the factor's backward error, the condition
number, and per method the steps and the criterion after each.

  python3 bench/lu_refine_model.py N FACTOR [COND]   # FACTOR: s, tf32, bf16, tf32x3, bf16x3

With COND, A = Q1 D Q2ᵀ of that condition number instead (`tessera bench gesv --cond`'s kind:
D geometric from 1 to 1 / COND, Q1 and Q2 the Q factors of random matrices).
"""
import sys
import time

import numpy as np
import scipy.linalg as sl


def rounded(x, mode):
    """x (f32) rounded to nearest into TF32 or BF16 (kept in f32)."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    drop = 13 if mode == "tf32" else 16
    half, lsb = 1 << (drop - 1), (b >> drop) & 1
    return ((((b + half - 1 + lsb) >> drop) << drop).astype(np.uint32)).view(np.float32)


def product(x, y, mode):
    if mode == "s":
        return x @ y
    if mode.endswith("x3"):
        m = mode[:-2]
        xh, yh = rounded(x, m), rounded(y, m)
        xl, yl = rounded(x - xh, m), rounded(y - yh, m)
        return xh @ yh + (xh @ yl + xl @ yh)
    return rounded(x, mode) @ rounded(y, mode)


def lu(a, mode, nb=256):
    a = a.astype(np.float32).copy()
    n = a.shape[0]
    piv = np.arange(n)
    for k in range(0, n, nb):
        e = min(k + nb, n)
        for j in range(k, e):
            p = j + np.argmax(np.abs(a[j:, j]))
            if p != j:
                a[[j, p], :] = a[[p, j], :]
                piv[[j, p]] = piv[[p, j]]
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:e] -= np.outer(a[j + 1:, j], a[j, j + 1:e])
        if e < n:
            l11 = np.tril(a[k:e, k:e], -1) + np.eye(e - k, dtype=np.float32)
            a[k:e, e:] = sl.solve_triangular(l11, a[k:e, e:], lower=True, unit_diagonal=True)
            a[e:, e:] -= product(a[e:, k:e], a[k:e, e:], mode)
    return a, piv


def gmres(apply, z, tol=1e-8, basis=100):
    beta = np.linalg.norm(z)
    v, h, k = [z / beta], np.zeros((basis + 1, basis)), 0
    while k < basis:
        w = apply(v[k])
        for i in range(k + 1):
            h[i, k] = v[i] @ w
            w -= h[i, k] * v[i]
        h[k + 1, k] = np.linalg.norm(w)
        v.append(w / h[k + 1, k])
        k += 1
        e1 = np.zeros(k + 1)
        e1[0] = beta
        y = np.linalg.lstsq(h[:k + 1, :k], e1, rcond=None)[0]
        if np.linalg.norm(h[:k + 1, :k] @ y - e1) < tol * beta:
            break
    return np.array(v[:k]).T @ y, k


def main(n, mode, cond=None, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-0.5, 0.5, (n, n))
    if cond:
        q1 = np.linalg.qr(a)[0]
        q2 = np.linalg.qr(rng.uniform(-0.5, 0.5, (n, n)))[0]
        a = (q1 * cond ** -np.linspace(0, 1, n)) @ q2.T
    b = rng.uniform(-0.5, 0.5, n)
    t = time.time()
    f, piv = lu(a, mode)
    l = np.tril(f, -1) + np.eye(n, dtype=np.float32)
    u = np.triu(f)
    l64, u64 = l.astype(np.float64), u.astype(np.float64)
    cte = np.abs(a).sum(1).max() * 1.1e-16 * np.sqrt(n)
    print(f"{n} {mode}: LU {time.time() - t:.1f} s, backward error "
          f"{np.abs(a[piv] - l64 @ u64).max() / np.abs(a).max():.2e}, "
          f"cond_1 {np.linalg.cond(a, 1):.1e}", flush=True)

    def m32(r):
        y = sl.solve_triangular(l, r[piv].astype(np.float32), lower=True, unit_diagonal=True)
        return sl.solve_triangular(u, y).astype(np.float64)

    def m64(r):
        y = sl.solve_triangular(l64, r[piv], lower=True, unit_diagonal=True)
        return sl.solve_triangular(u64, y)

    def crit(x):
        return np.abs(b - a @ x).max() / (np.abs(x).max() * cte)

    for name, m in (("M32", m32), ("M64", m64)):
        x, hist = m(b), []
        for _ in range(30):
            hist.append(crit(x))
            if hist[-1] <= 1 or not hist[-1] < 1e30:  # converged, or diverged
                break
            x = x + m(b - a @ x)
        print(f"  classical {name}: {len(hist) - 1} steps", [f"{c:.1e}" for c in hist[:8]])
        x, hist, its = m(b), [], 0
        for _ in range(10):
            hist.append(crit(x))
            if hist[-1] <= 1:
                break
            d, k = gmres(lambda v: m(a @ v), m(b - a @ x))
            x, its = x + d, its + k
        print(f"  GMRES-IR {name}: {len(hist) - 1} steps, {its} GMRES iterations",
              [f"{c:.1e}" for c in hist], flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else None)
