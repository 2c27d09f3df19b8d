#include "kernels/audio/f32_complex_magnitude.h"

#include <math.h>

// Each square is its own statement rounded to a float, and the build compiles with
// -ffp-contract=off at the x86-64 baseline (no FMA instructions outside target attributes):
// nothing fuses re * re + im * im into one rounding.
void ckw_f32_complex_magnitude(float* restrict y, const float* restrict x, int64_t R, int64_t NB) {
  if (R <= 0 || NB <= 0) return;
  for (int64_t r = 0; r < R; ++r) {
    const float* restrict re = x + r * 2 * NB;
    const float* restrict im = re + NB;
    float* restrict out = y + r * NB;
    for (int64_t i = 0; i < NB; ++i) {
      const float re2 = re[i] * re[i];
      const float im2 = im[i] * im[i];
      const float sum = re2 + im2;
      out[i] = sqrtf(sum);
    }
  }
}
