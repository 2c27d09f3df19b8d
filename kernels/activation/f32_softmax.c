#include "kernels/activation/f32_softmax.h"

#include <math.h>

#include "kernels/common/cpu.h"

void ckw_f32_softmax__scalar(float* y, const float* x, int64_t T, int64_t D) {
  for (int64_t t = 0; t < T; ++t) {
    const float* xr = x + t * D;
    float* yr = y + t * D;
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t i = 0; i < D; ++i) mx = xr[i] > mx ? xr[i] : mx;
    for (int64_t i = 0; i < D; ++i) {
      yr[i] = expf(xr[i] - mx);
      sum += yr[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < D; ++i) yr[i] *= inv;
  }
}

void ckw_f32_softmax(float* y, const float* x, int64_t T, int64_t D) { CKW_DISPATCH(ckw_f32_softmax, y, x, T, D); }
