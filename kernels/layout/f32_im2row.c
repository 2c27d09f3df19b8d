#include "kernels/layout/f32_im2row.h"

#include <string.h>

void ckw_f32_im2row(float* restrict y, const float* restrict x, int64_t B, int64_t Tin, int64_t Tout, int64_t C,
                    int64_t K, int64_t stride, int64_t padding) {
  if (B < 0 || Tin < 0 || Tout < 0 || C < 0 || K < 1 || stride < 1 || padding < 0) return;
  const int64_t span = Tin + 2 * padding - K;  // Tout == span // stride + 1, floored
  if (Tout != (span >= 0 ? span / stride + 1 : (span - stride + 1) / stride + 1)) return;
  const size_t row = sizeof(float) * (size_t)C;
  for (int64_t b = 0; b < B; ++b) {
    const float* restrict seq = x + b * Tin * C;
    for (int64_t t = 0; t < Tout; ++t) {
      float* restrict out = y + (b * Tout + t) * K * C;
      const int64_t first = t * stride - padding;  // input frame of tap 0
      // Taps k0 .. k1 - 1 read frames inside the sequence: one contiguous run of rows.
      int64_t k0 = -first, k1 = Tin - first;
      k0 = k0 < 0 ? 0 : (k0 > K ? K : k0);
      k1 = k1 > K ? K : (k1 < k0 ? k0 : k1);
      if (k0 > 0) memset(out, 0, row * (size_t)k0);  // all-zero bits are +0.0f
      if (k1 > k0) memcpy(out + k0 * C, seq + (first + k0) * C, row * (size_t)(k1 - k0));
      if (K > k1) memset(out + k1 * C, 0, row * (size_t)(K - k1));
    }
  }
}
