// The rows a 1-D convolution's GEMM reads (im2col, token-major): for each sequence of a batch,
// output frame t's row is the K input frames it covers, zeros where they fall in the
// padding. A conv weight [Cout, Cin, K] permuted to [Cout, K, Cin] is then a [Cout, K * Cin]
// GEMM weight over these rows.
#ifndef CKW_KERNELS_LAYOUT_F32_IM2ROW_H_
#define CKW_KERNELS_LAYOUT_F32_IM2ROW_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// x [B * Tin, C] (sequence b's frames at rows b * Tin ..), y [B * Tout, K * C], K the kernel
// size:
//   y[b * Tout + t, k * C + c] = x[b * Tin + s, c]  with s = t * stride + k - padding (k < K),
// 0 when s < 0 or s >= Tin (+0.0f). Dims: B, Tin, C >= 0, K, stride >= 1, padding >= 0,
// Tout == (Tin + 2 * padding - K) // stride + 1 (>= 0); other dims write nothing. y and x must
// not overlap.
void ckw_f32_im2row(float* y, const float* x, int64_t B, int64_t Tin, int64_t Tout, int64_t C, int64_t K,
                    int64_t stride, int64_t padding);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F32_IM2ROW_H_
