#include "kernels/norm/f32_layer_norm.h"

#include <math.h>

#include "kernels/common/cpu.h"

void ckw_f32_layer_norm__scalar(float* y, const float* x, const float* gamma, const float* beta, int64_t T, int64_t D,
                                float eps) {
  if (D <= 0) return;
  for (int64_t t = 0; t < T; ++t) {
    const float* xr = x + t * D;
    float* yr = y + t * D;
    // Same shifted statistics as the SIMD paths (see f32_layer_norm__simd.inc).
    const float x0 = xr[0];
    float sum = 0.0f;
    for (int64_t i = 0; i < D; ++i) sum += xr[i] - x0;
    const float m = sum / (float)D;
    float ss = 0.0f;
    for (int64_t i = 0; i < D; ++i) ss += (xr[i] - x0 - m) * (xr[i] - x0 - m);
    const float rstd = 1.0f / sqrtf(ss / (float)D + eps);
    for (int64_t i = 0; i < D; ++i) yr[i] = (xr[i] - x0 - m) * rstd * gamma[i] + beta[i];
  }
}

void ckw_f32_layer_norm(float* y, const float* x, const float* gamma, const float* beta, int64_t T, int64_t D,
                        float eps) {
  if (ckw_cpu_has_avx512()) {
    ckw_f32_layer_norm__avx512(y, x, gamma, beta, T, D, eps);
  } else if (ckw_cpu_has_avx2()) {
    ckw_f32_layer_norm__avx2(y, x, gamma, beta, T, D, eps);
  } else {
    ckw_f32_layer_norm__scalar(y, x, gamma, beta, T, D, eps);
  }
}
