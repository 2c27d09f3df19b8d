// ckw_f32_complex_magnitude bit for bit against the four float32 roundings done one at a time in
// float64 (each exact product or sum rounded once to float: double has 2 * 24 + 2 bits, so the
// double step never changes a float rounding), which an FMA contraction would not give; within
// the map's tolerance of the true magnitude; special values (zeros, infinities, NaN, a square
// overflowing to inf or underflowing to 0); edge sizes; nothing written past y.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/audio/f32_complex_magnitude.h"
#include "kernels/audio/f32_complex_magnitude_contract.h"
#include "kernels/common/test_util.h"
#include "kernels/common/tolerance.h"

// onnxruntime's Sqrt(Pow(re, 2) + Pow(im, 2)): every step rounded to float on its own.
static float separate_roundings(float re, float im) {
  const float re2 = (float)((double)re * (double)re);
  const float im2 = (float)((double)im * (double)im);
  const float sum = (float)((double)re2 + (double)im2);
  return (float)sqrt((double)sum);
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

static void check_random(int64_t R, int64_t NB, float scale) {
  enum { GUARD = 4 };
  float* x = malloc(sizeof(float) * (size_t)(R * 2 * NB + 1));
  float* y = malloc(sizeof(float) * (size_t)(R * NB + GUARD));
  float* want = malloc(sizeof(float) * (size_t)(R * NB + 1));
  double max_ref = 0.0, max_err = 0.0;
  for (int64_t i = 0; i < R * 2 * NB; ++i) x[i] = frand() * scale;
  for (int64_t i = 0; i < R * NB + GUARD; ++i) y[i] = -3.0f;
  ckw_f32_complex_magnitude(y, x, R, NB);
  int64_t bad = 0;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t i = 0; i < NB; ++i) {
      const float re = x[r * 2 * NB + i], im = x[r * 2 * NB + NB + i];
      want[r * NB + i] = separate_roundings(re, im);
      const double exact = sqrt((double)re * re + (double)im * im);  // the true magnitude (rounded once)
      max_ref = fmax(max_ref, exact);
      max_err = fmax(max_err, fabs((double)y[r * NB + i] - exact));
      bad += !same_bits(y[r * NB + i], want[r * NB + i]);
    }
  EXPECT(bad == 0, "R %lld NB %lld scale %g: %lld outputs differ from the separate roundings", (long long)R,
         (long long)NB, (double)scale, (long long)bad);
  const double bound = ckw_tolerance_bound(CKW_F32_COMPLEX_MAGNITUDE_TOLERANCE_C, 1, max_ref);
  EXPECT(max_err <= bound, "R %lld NB %lld scale %g: max_abs_err %.3g > bound %.3g", (long long)R, (long long)NB,
         (double)scale, max_err, bound);
  for (int64_t i = R * NB; i < R * NB + GUARD; ++i)
    EXPECT(y[i] == -3.0f, "R %lld NB %lld: wrote past y", (long long)R, (long long)NB);
  free(x), free(y), free(want);
}

int main(void) {
  _Static_assert(!CKW_F32_COMPLEX_MAGNITUDE_EXACT, "f32_complex_magnitude.json states a float contract");
  const int64_t sizes[][2] = {{1, 1}, {1, 2}, {3, 7}, {4, 129}, {37, 129}, {2, 1000}, {0, 129}, {5, 0}};
  const float scales[] = {1.0f, 1e-3f, 3e3f};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; ++k) check_random(sizes[s][0], sizes[s][1], scales[k]);

  // The test tells the two apart: a fused re * re + im * im differs from the separate roundings
  // on many random inputs.
  int fused_differs = 0;
  for (int i = 0; i < 100000; ++i) {
    const float re = frand(), im = frand();
    fused_differs += !same_bits(sqrtf(fmaf(re, re, im * im)), separate_roundings(re, im));
  }
  EXPECT(fused_differs > 100, "only %d of 100000 inputs tell an FMA from separate roundings", fused_differs);

  // Special values, one row: re then im.
  const float inf = INFINITY, nan = NAN;
  const float cases[][3] = {
      // re, im, want
      {0.0f, 0.0f, 0.0f},
      {-0.0f, -0.0f, 0.0f},
      {3.0f, -4.0f, 5.0f},
      {-inf, 1.0f, inf},
      {1.0f, inf, inf},
      {nan, 1.0f, nan},
      {inf, nan, nan},
      {1e20f, 0.0f, inf},  // re * re overflows
      {3e19f, 4e19f, inf},
      {1e-30f, 0.0f, 0.0f},  // re * re underflows to 0
      {1e-20f, 1e-20f, 1.4142135e-20f},
  };
  const int n = (int)(sizeof cases / sizeof cases[0]);
  float x[2 * sizeof cases / sizeof cases[0]], y[sizeof cases / sizeof cases[0]];
  for (int i = 0; i < n; ++i) x[i] = cases[i][0], x[n + i] = cases[i][1];
  ckw_f32_complex_magnitude(y, x, 1, n);
  for (int i = 0; i < n; ++i) {
    EXPECT(same_bits(y[i], separate_roundings(cases[i][0], cases[i][1])), "case %d: %g vs separate roundings", i,
           (double)y[i]);
    if (isnan(cases[i][2]))
      EXPECT(isnan(y[i]), "case %d: %g, want NaN", i, (double)y[i]);
    else if (cases[i][2] == 0.0f || isinf(cases[i][2]))
      EXPECT(same_bits(y[i], cases[i][2]), "case %d: %g, want %g", i, (double)y[i], (double)cases[i][2]);
    else
      EXPECT(fabsf(y[i] - cases[i][2]) <= 1e-5f * cases[i][2], "case %d: %g, want %g", i, (double)y[i],
             (double)cases[i][2]);
  }
  return test_finish("f32_complex_magnitude_test");
}
