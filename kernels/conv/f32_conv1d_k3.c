#include "kernels/conv/f32_conv1d_k3.h"

#include <stddef.h>

#include "kernels/common/f32_gemm_nt_core.h"

int64_t ckw_f32_conv1d_k3_scratch_bytes(int64_t Cin, int64_t Tout) {
  const int64_t rows = Tout < CKW_F32_CONV1D_K3_BLOCK + 1 ? Tout : CKW_F32_CONV1D_K3_BLOCK + 1;
  const int64_t n = (Cin > 0 ? Cin : 0) * 3 * (rows > 0 ? rows : 0);
  return (n > 0 ? n : 1) * (int64_t)sizeof(float);
}

// cols[r, ci*3 + j] = x[ci, (t0 + r)*stride + j - 1] for r < rows, zero outside the input.
static void im2col(float* restrict cols, const float* restrict x, int64_t Cin, int64_t Tin, int64_t t0, int64_t rows,
                   int64_t stride) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = cols + r * Cin * 3;
    const int64_t p0 = (t0 + r) * stride - 1;
    if (p0 >= 0 && p0 + 2 < Tin) {
      for (int64_t ci = 0; ci < Cin; ++ci) {
        const float* xr = x + ci * Tin + p0;
        row[ci * 3] = xr[0];
        row[ci * 3 + 1] = xr[1];
        row[ci * 3 + 2] = xr[2];
      }
    } else {
      for (int64_t ci = 0; ci < Cin; ++ci)
        for (int64_t j = 0; j < 3; ++j) {
          const int64_t p = p0 + j;
          row[ci * 3 + j] = p >= 0 && p < Tin ? x[ci * Tin + p] : 0.0f;
        }
    }
  }
}

static void conv(float* y, const float* x, const float* w, const float* b, float* scratch, int64_t Cin, int64_t Cout,
                 int64_t Tin, int64_t t0, int64_t Tout, int64_t stride, int epi) {
  if (Tout <= 0 || Cout <= 0) return;
  // Blocks of BLOCK frames; a remainder of up to BLOCK + 1 goes whole, so no block but a
  // single-frame call has one row (M == 1 would take the GEMM's other rounding; blocks of 2 or
  // more rows keep its in-order chains, CKW_GEMM_ONE_ROW_DOT).
  for (int64_t t = 0; t < Tout;) {
    const int64_t rows = Tout - t <= CKW_F32_CONV1D_K3_BLOCK + 1 ? Tout - t : CKW_F32_CONV1D_K3_BLOCK;
    im2col(scratch, x, Cin, Tin, t0 + t, rows, stride);
    ckw_f32_gemm_nt_core(y + t * Cout, scratch, w, b, NULL, NULL, 0, rows, Cout, Cin * 3, Cout,
                         epi | CKW_GEMM_ONE_ROW_DOT);
    t += rows;
  }
}

void ckw_f32_conv1d_k3(float* restrict y, const float* restrict x, const float* restrict w, const float* restrict b,
                       float* restrict scratch, int64_t Cin, int64_t Cout, int64_t Tin, int64_t t0, int64_t Tout,
                       int64_t stride) {
  conv(y, x, w, b, scratch, Cin, Cout, Tin, t0, Tout, stride, CKW_GEMM_EPI_PLAIN);
}

void ckw_f32_conv1d_k3_gelu(float* restrict y, const float* restrict x, const float* restrict w,
                            const float* restrict b, float* restrict scratch, int64_t Cin, int64_t Cout, int64_t Tin,
                            int64_t t0, int64_t Tout, int64_t stride) {
  conv(y, x, w, b, scratch, Cin, Cout, Tin, t0, Tout, stride, CKW_GEMM_EPI_GELU);
}
