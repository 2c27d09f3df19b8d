#include "kernels/activation/f32_sigmoid.h"

#include <math.h>

#include "kernels/common/cpu.h"

void ckw_f32_sigmoid__scalar(float* y, const float* x, int64_t T, int64_t D) {
  for (int64_t i = 0; i < T * D; ++i) {
    const float e = expf(-fabsf(x[i]));  // NaN stays NaN through every step below
    y[i] = (x[i] < 0.0f ? e : 1.0f) / (1.0f + e);
  }
}

void ckw_f32_sigmoid(float* y, const float* x, int64_t T, int64_t D) { CKW_DISPATCH(ckw_f32_sigmoid, y, x, T, D); }
