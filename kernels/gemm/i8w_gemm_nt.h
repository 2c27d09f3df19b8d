// The four int8-weight GEMM kernels (one header for their four maps), y = epilogue(x W^T):
//   ckw_i8w_gemm_nt               (op kind "logits"; with W = the int8 token table and w_scale its
//                                  row scales, Whisper's tied-embedding logits)
//   ckw_i8w_gemm_nt_bias          ("linear"):          y = x W^T + b
//   ckw_i8w_gemm_nt_bias_gelu     ("linear_gelu"):     y = gelu(x W^T + b)
//   ckw_i8w_gemm_nt_bias_residual ("linear_residual"): y = r + (x W^T + b); y may be r (in place)
// x [M, K] and y [M, N] (rows ldy >= N floats apart, r too) fp32; w [N, K] int8 in [-127, 127],
// row-major as in the checkpoint; w_scale [N] f32, W's values being w * w_scale; b may be NULL; any
// M, N, K >= 0 (K < 133000). x is quantized per row at run time; numerics (the same bits on every
// ISA path, for any M and any split of rows or columns): kernels/common/i8w_gemm_nt_core.h.
// scratch: ckw_i8w_gemm_nt_scratch_bytes(M, K) bytes (the maps' scratch: bind covers it). The
// un-suffixed entries pick the best ISA at run time; the suffixed ones are for tests.
#ifndef CKW_KERNELS_GEMM_I8W_GEMM_NT_H_
#define CKW_KERNELS_GEMM_I8W_GEMM_NT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_I8W_GEMM_NT_PLAIN_(sfx)                                                                                 \
  void ckw_i8w_gemm_nt##sfx(float* restrict y, const float* restrict x, const int8_t* restrict w,                   \
                            const float* restrict w_scale, void* restrict scratch, int64_t M, int64_t N, int64_t K, \
                            int64_t ldy)
#define CKW_I8W_GEMM_NT_BIAS_(kind, sfx)                                                                          \
  void ckw_i8w_gemm_nt##kind##sfx(float* restrict y, const float* restrict x, const int8_t* restrict w,           \
                                  const float* restrict w_scale, const float* restrict b, void* restrict scratch, \
                                  int64_t M, int64_t N, int64_t K, int64_t ldy)
// y may be r (the residual stream updated in place): neither is restrict.
#define CKW_I8W_GEMM_NT_RESIDUAL_(sfx)                                                                            \
  void ckw_i8w_gemm_nt_bias_residual##sfx(float* y, const float* restrict x, const int8_t* restrict w,            \
                                          const float* restrict w_scale, const float* restrict b, const float* r, \
                                          void* restrict scratch, int64_t M, int64_t N, int64_t K, int64_t ldy)
// The four kernels' entry points with suffix sfx: "" (dispatching) or __<isa>.
#define CKW_I8W_GEMM_NT_DECLARE_(sfx)     \
  CKW_I8W_GEMM_NT_PLAIN_(sfx);            \
  CKW_I8W_GEMM_NT_BIAS_(_bias, sfx);      \
  CKW_I8W_GEMM_NT_BIAS_(_bias_gelu, sfx); \
  CKW_I8W_GEMM_NT_RESIDUAL_(sfx)

CKW_I8W_GEMM_NT_DECLARE_();
CKW_I8W_GEMM_NT_DECLARE_(__scalar);
CKW_I8W_GEMM_NT_DECLARE_(__avx2);
CKW_I8W_GEMM_NT_DECLARE_(__avxvnni);
CKW_I8W_GEMM_NT_DECLARE_(__avx512vnni);
CKW_I8W_GEMM_NT_DECLARE_(__amxint8);

// The scratch bytes a call of M rows of K asks for (any N; the maps' contract.scratch_query).
int64_t ckw_i8w_gemm_nt_scratch_bytes(int64_t M, int64_t K);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_GEMM_I8W_GEMM_NT_H_
