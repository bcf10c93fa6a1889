/* The secular equation of a merge of the tridiagonal divide and conquer (cpu/laed.h), one root
 * at a time, in arithmetic that host code and device kernels share (the same header compiled as
 * C and as CUDA: TSR_HD).
 *
 * On k > 2 poles d (strictly ascending), weights w (none zero) and rho > 0, the equation
 * G(λ) = 1/rho + Σ_j w_j² / (d_j - λ) = 0 has one root in each (d_i, d_{i+1}) and the last in
 * (d_{k-1}, d_{k-1} + rho |w|²); G increases on each. Root i is sought as λ = d_o + τ from an
 * origin o, the pole nearer to it (the sign of G at the interval's middle tells which), so that
 * d_j - λ = (d_j - d_o) - τ keeps its relative accuracy however close λ comes to a pole. Each
 * step models the sums over the poles left of the root and right of it (ψ, φ) by one pole each,
 * the nearest, matching their values and derivatives at τ, and takes the model's root; a step
 * outside the bracket the signs of G have narrowed halves it instead (as does every fourth step
 * where four steps did not halve it). It stops where |G| is
 * within its rounding error, where a step no longer moves τ, or where the bracket is down to the
 * precision of τ.
 *
 * A caller drives each root: tsr_secular_start, then the sums at the state's τ
 * (tsr_secular_add over any partition of the poles, the parts added) and tsr_secular_step,
 * until the step says done. */
#ifndef TSR_KERNELS_SECULAR_H
#define TSR_KERNELS_SECULAR_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TSR_HD __host__ __device__
#else
#define TSR_HD
#endif

/** Steps a root may take before it is reported as not converged. */
enum { TSR_SECULAR_STEPS = 400 };

/** One root's iteration: order k, root i, origin o; τ and the bracket lo < root < hi in τ. */
typedef struct {
  int64_t k, i, o;
  double rhoinv, tau, lo, hi;
  double width; /* the bracket's width four steps ago */
  int phase; /* 0: τ at the interval's middle (or the last root's bound), the origin undecided */
  int steps;
} tsr_secular_t;

/** The sums at τ over the poles j <= i (psi, dpsi: ψ and its derivative in τ) and j > i (phi,
 *  dphi). */
typedef struct {
  double psi, dpsi, phi, dphi;
} tsr_secular_sums_t;

/** Root i's iteration on poles d (k > 2), rho, and wsq = Σ w_j². */
TSR_HD static inline void tsr_secular_start(tsr_secular_t *s, int64_t k, int64_t i, const double *d,
                                            double rho, double wsq) {
  s->k = k, s->i = i, s->o = i, s->rhoinv = 1 / rho, s->steps = 0, s->width = INFINITY;
  if (i < k - 1) {
    s->lo = 0, s->hi = d[i + 1] - d[i], s->tau = s->hi / 2, s->phase = 0;
  } else { /* G ≥ 0 at d_{k-1} + rho |w|² */
    s->lo = 0, s->hi = rho * wsq, s->tau = s->hi, s->phase = 1;
  }
}

/** Adds to *sum the terms j = j0, j0 + stride, ... < j1 at the state's τ. */
TSR_HD static inline void tsr_secular_add(const tsr_secular_t *s, const double *d, const double *w,
                                          int64_t j0, int64_t j1, int64_t stride,
                                          tsr_secular_sums_t *sum) {
  const double at = d[s->o], tau = s->tau;
  for (int64_t j = j0; j < j1; j += stride) {
    const double t = w[j] / ((d[j] - at) - tau), term = w[j] * t, slope = t * t;
    if (j <= s->i)
      sum->psi += term, sum->dpsi += slope;
    else
      sum->phi += term, sum->dphi += slope;
  }
}

/** The model's step from τ (sums at τ, G their value, lo < τ + step < hi wanted); NAN where the
 *  model gives none. */
TSR_HD static inline double tsr_secular_model(const tsr_secular_t *s, const double *d,
                                              const tsr_secular_sums_t *sum, double g) {
  const double left = (d[s->i] - d[s->o]) - s->tau; /* the poles about the root, from τ */
  if (s->i == s->k - 1) {                           /* one pole, left of the root */
    const double c = g - sum->dpsi * left;
    return c > 0 ? left + sum->dpsi * left * left / c : NAN;
  }
  const double right = (d[s->i + 1] - d[s->o]) - s->tau;
  /* c + a / (left - x) + b / (right - x) = 0:
   * c x² - (c (left + right) + a + b) x + g left right = 0 */
  const double a = sum->dpsi * left * left, b = sum->dphi * right * right;
  const double c = g - sum->dpsi * left - sum->dphi * right;
  const double p = c * (left + right) + a + b, q = g * left * right;
  if (c == 0) return p != 0 ? q / p : NAN;
  const double disc = p * p - 4 * c * q, r = p + copysign(sqrt(disc > 0 ? disc : 0), p);
  const double x = r != 0 ? 2 * q / r : NAN, y = r / (2 * c);
  return x > left && x < right ? x : y > left && y < right ? y : NAN;
}

/** One step from the sums at τ: 1 when the root is found (λ = d_o + τ), 0 to sum again at the
 *  state's new τ, -1 when it did not converge. */
TSR_HD static inline int tsr_secular_step(tsr_secular_t *s, const double *d,
                                          const tsr_secular_sums_t *sum) {
  const double eps = 0x1p-53, g = s->rhoinv + sum->psi + sum->phi;
  if (s->phase == 0) { /* at the middle: the origin is the nearer pole */
    s->phase = 1;
    if (g < 0) { /* the root in the right half: from d_{i+1}, τ < 0 */
      const double gap = d[s->i + 1] - d[s->i];
      s->o = s->i + 1, s->lo = s->tau - gap, s->hi = 0, s->tau = s->lo;
      return 0;
    }
    s->hi = s->tau;
  }
  if (g == 0) return 1;
  if (g < 0 && s->i == s->k - 1 && s->tau >= s->hi) { /* the bound rounded below the root */
    s->lo = s->hi, s->hi *= 2, s->tau = s->hi;
    return ++s->steps > TSR_SECULAR_STEPS ? -1 : 0;
  }
  if (g < 0)
    s->lo = s->tau;
  else
    s->hi = s->tau;
  const double err = eps * (8 * (sum->phi - sum->psi) + 2 * s->rhoinv +
                            3 * fabs(s->tau) * (sum->dpsi + sum->dphi));
  if (fabs(g) <= err) return 1;
  if (++s->steps > TSR_SECULAR_STEPS) return -1;
  /* every fourth step, a bracket not halved since the last is halved */
  const int stalled = s->steps % 4 == 0 && s->hi - s->lo > s->width / 2;
  if (s->steps % 4 == 0) s->width = s->hi - s->lo;
  double next = stalled ? NAN : s->tau + tsr_secular_model(s, d, sum, g);
  if (!(next > s->lo && next < s->hi)) next = s->lo / 2 + s->hi / 2;
  const double width = 2 * eps * fmax(fabs(s->lo), fabs(s->hi));
  const int still = fabs(next - s->tau) <= 2 * eps * fabs(next) || s->hi - s->lo <= width;
  s->tau = next;
  return still;
}

#endif
