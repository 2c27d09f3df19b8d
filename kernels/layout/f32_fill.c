#include "kernels/layout/f32_fill.h"

void ckw_f32_fill(float* restrict y, int64_t N, float value) {
  for (int64_t i = 0; i < N; ++i) y[i] = value;  // a float store copies the bits as they are
}
