// Whisper's conv stem: 1-D convolution, kernel 3, padding 1, stride 1 or 2.
//   y[t, co] = b[co] + sum_{ci, j} w[co, ci, j] * x[ci, t*stride + j - 1]   (x = 0 outside [0, Tin))
// x channel_major [Cin, Tin] (log-mel, or the previous conv transposed), w [Cout, Cin, 3]
// as in the checkpoint, b [Cout]; y token_major [Tout, Cout], torch's Tout being
// (Tin - 1) / stride + 1 (any Tout >= 0 is accepted; frames past the input read zeros).
// Token-major output means conv2's result already is the encoder's [1500, d] token layout.
//
// ckw_f32_conv1d_k3       op kind "conv1d"
// ckw_f32_conv1d_k3_gelu  op kind "conv1d_gelu": y = gelu(...), exact erf (fused epilogue)
//
// A call computes output frames t0 .. t0 + Tout - 1 into y's rows 0 .. Tout - 1 (t0 = 0: the
// whole output), so callers may split the frames across threads: every frame comes out with
// the same bits whatever the split (see below), except that a call of a single frame takes the
// GEMM's M == 1 path (split into chunks of at least 2 frames).
//
// Implementation: per block of up to CKW_F32_CONV1D_K3_BLOCK frames (never a lone last frame),
// im2col into scratch (row t = the Cin*3 taps in w's (ci, j) order), then the f32_gemm_nt
// engine: one in-order FMA chain over the Cin*3 taps per output on SIMD paths, independent of
// the block. scratch: ckw_f32_conv1d_k3_scratch_bytes(Cin, Tout) bytes, at most
// 4 * Cin * 3 * (CKW_F32_CONV1D_K3_BLOCK + 1). b may be NULL.
#ifndef CKW_KERNELS_CONV_F32_CONV1D_K3_H_
#define CKW_KERNELS_CONV_F32_CONV1D_K3_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Output frames per im2col block (2 x the AVX2 GEMM row block): the block's taps stay in L2.
#define CKW_F32_CONV1D_K3_BLOCK 288

int64_t ckw_f32_conv1d_k3_scratch_bytes(int64_t Cin, int64_t Tout);
void ckw_f32_conv1d_k3(float* restrict y, const float* restrict x, const float* restrict w, const float* restrict b,
                       float* restrict scratch, int64_t Cin, int64_t Cout, int64_t Tin, int64_t t0, int64_t Tout,
                       int64_t stride);
void ckw_f32_conv1d_k3_gelu(float* restrict y, const float* restrict x, const float* restrict w,
                            const float* restrict b, float* restrict scratch, int64_t Cin, int64_t Cout, int64_t Tin,
                            int64_t t0, int64_t Tout, int64_t stride);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_CONV_F32_CONV1D_K3_H_
