// The tolerance policy, written once: integers exact; a float kernel passes when
//   max_abs_err <= c * FLT_EPSILON * sqrt(K) * max(max|ref|, floor)
// with K the reduction length and c the constant stated in the kernel's map.
#ifndef CKW_KERNELS_COMMON_TOLERANCE_H_
#define CKW_KERNELS_COMMON_TOLERANCE_H_

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

// Smallest reference magnitude the bound scales with, so all-zero references still allow
// rounding noise.
#define CKW_TOLERANCE_FLOOR 1.0f

static inline double ckw_tolerance_bound(double c, int64_t k, double max_abs_ref) {
  double scale = max_abs_ref > CKW_TOLERANCE_FLOOR ? max_abs_ref : CKW_TOLERANCE_FLOOR;
  return c * (double)FLT_EPSILON * sqrt((double)(k > 0 ? k : 1)) * scale;
}

// Returns 1 when got matches ref under the policy; otherwise prints the worst element.
static inline int ckw_check_close(const char* what, const float* got, const float* ref, int64_t n, double c,
                                  int64_t k) {
  double max_ref = 0.0, max_err = 0.0;
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = fabs((double)ref[i]);
    if (r > max_ref) max_ref = r;
  }
  for (int64_t i = 0; i < n; ++i) {
    double e = fabs((double)got[i] - (double)ref[i]);
    if (!(e <= max_err)) {  // also catches NaN
      max_err = e;
      worst = i;
      if (e != e) break;
    }
  }
  double bound = ckw_tolerance_bound(c, k, max_ref);
  if (max_err <= bound) return 1;
  fprintf(stderr, "%s: max_abs_err %.3g > bound %.3g (c=%g, K=%lld, max|ref|=%.3g) at [%lld]: got %.9g want %.9g\n",
          what, max_err, bound, c, (long long)k, max_ref, (long long)worst, (double)got[worst], (double)ref[worst]);
  return 0;
}

#endif  // CKW_KERNELS_COMMON_TOLERANCE_H_
