// Shared engine behind the i8w_gemm_nt* kernels: y = epilogue(x W^T) with W [N, K] int8
// (symmetric, values in [-127, 127]) and a scale per output channel w_scale [N] (f32), x [M, K]
// and y [M, N] (rows ldy >= N floats apart, r too) fp32; epilogues as f32_gemm_nt_core.h
// (CKW_GEMM_EPI_*; b may be NULL).
//
// Numerics, the same bits on every path (scalar, avx2, avxvnni, avx512vnni, amxint8):
// - each row m of x is quantized on its own: a = max_k |x[m, k]|; a == 0 gives q = 0 and s = 0;
//   else inv = 127.0f / a (one f32 division), q[m, k] = the f32 product x[m, k] * inv rounded to
//   nearest even (vcvtps2dq under the default MXCSR; a product beyond int32, or NaN, is INT32_MIN
//   as that instruction gives it), clamped to [-127, 127]; s[m] = a / 127.0f.
// - acc[m, n] = sum_k q[m, k] W[n, k] in int32: exact for K * 127 * 127 < 2^31 (K < 133000),
//   whatever the order or instruction (vpmaddubsw pairs cannot saturate: 2 * 127 * 127 < 2^15).
// - y[m, n] = (float)acc * (s[m] * w_scale[n]) in f32 (two roundings, no FMA), then + b[n]; then
//   GELU (the vector exact-erf GELU of simd_math.inc, evaluated on one lane by the scalar path so
//   it shares the bits), or r[m, n] + that.
// Integer sums are exact and the epilogue is the same f32 operations per element, so an output
// depends only on its row of x, its row of W and its w_scale, b and r: any M, any split of rows or
// columns, and every ISA path give the same bits (x finite; a NaN or infinity in a row makes that
// row's outputs unspecified).
//
// Paths: scalar, the reference. avx2: vpmaddubsw of |q| (u8) with W carrying q's sign (vpsignb),
// vpmaddwd to int32. avxvnni (VEX, 256-bit) and avx512vnni: vpdpbusd of W + 128 (u8, an xor per W
// vector, shared by every row) with q, less 128 * sum_k q[m, k] (summed by the quantizer): one
// instruction per 4 k; the correction is exact in wrapping int32 arithmetic. M <=
// CKW_I8W_DOT_ROWS streams W rows as stored (dot products along K); more rows pack W per call, 64
// columns at a time, as 4-byte k groups per column (the VNNI layout) and broadcast q. amxint8: M >
// CKW_I8W_AMX_ROWS on AMX-INT8 tiles (tdpbssd, signed x signed, no offset): the quantized rows are
// the A tiles as stored, W packed as above is B; fewer rows take the avx512vnni path.
//
// scratch: ckw_i8w_scratch_bytes(M, K) bytes: s and the row sums (M each), the quantized rows (M
// rounded up to 32 rows of K rounded up to 64 bytes) and one packed block of W (64 columns); any
// alignment (the engine aligns inside).
#ifndef CKW_KERNELS_COMMON_I8W_GEMM_NT_CORE_H_
#define CKW_KERNELS_COMMON_I8W_GEMM_NT_CORE_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/common/f32_gemm_nt_core.h"  // CKW_GEMM_EPI_*

// The paths below, oldest first, as an X-macro for CKW_DISPATCH_ISAS (cpu.h) and tests.
#define CKW_I8W_GEMM_NT_CORE_ISAS(X, name) \
  X(scalar, name) X(avx2, name) X(avxvnni, name) X(avx512vnni, name) X(amxint8, name)

// M <= this: the SIMD paths' dot products along K on W as stored (decode, beams).
#define CKW_I8W_DOT_ROWS 16
// M > this: the amxint8 path's tiles (below: its avx512vnni path).
#define CKW_I8W_AMX_ROWS 8
// Columns of W packed at a time by the SIMD and AMX paths.
#define CKW_I8W_PANEL 64

#define CKW_I8W_GEMM_NT_CORE_DECLARE(name)                                                                   \
  void name(float* y, const float* x, const int8_t* w, const float* w_scale, const float* b, const float* r, \
            void* scratch, int64_t M, int64_t N, int64_t K, int64_t ldy, int epi)

CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__scalar);
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__avx2);
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__avxvnni);
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__avx512vnni);
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__amxint8);
// Best available path for this CPU.
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core);
// The VNNI and AMX paths again on emulated intrinsics (test builds: vnni_amx_int8_emulation.h).
#if defined(CKW_EMULATE_AVX512) || defined(CKW_TEST_AVX512_EMULATION)
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__avxvnniemu);
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__avx512vnniemu);
CKW_I8W_GEMM_NT_CORE_DECLARE(ckw_i8w_gemm_nt_core__amxint8emu);
#endif

// Where the scratch's parts are: sx (rows' scales), rs (sums of the rows' q), q (quantized rows, kp
// bytes apart) and wp (a packed block of W), 64-byte aligned.
typedef struct {
  float* sx;
  int32_t* rs;
  int8_t* q;
  int8_t* wp;
  int64_t kp;
} ckw_i8w_scratch;

static inline int64_t ckw_i8w_rows_(int64_t M) { return (M + 31) / 32 * 32; }
static inline int64_t ckw_i8w_kp_(int64_t K) { return (K + 63) / 64 * 64; }

static inline int64_t ckw_i8w_scratch_bytes(int64_t M, int64_t K) {
  const int64_t rows = ckw_i8w_rows_(M), kp = ckw_i8w_kp_(K);
  return 63 + 8 * rows + rows * kp + CKW_I8W_PANEL * kp;
}

static inline ckw_i8w_scratch ckw_i8w_scratch_at(void* scratch, int64_t M, int64_t K) {
  const int64_t rows = ckw_i8w_rows_(M), kp = ckw_i8w_kp_(K);
  char* p = (char*)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  const ckw_i8w_scratch s = {(float*)p, (int32_t*)(p + 4 * rows), (int8_t*)(p + 8 * rows),
                             (int8_t*)(p + 8 * rows + rows * kp), kp};
  return s;
}

// One activation times inv as the SIMD paths quantize it: nearest even, INT32_MIN beyond int32
// (vcvtps2dq), then clamped to [-127, 127].
static inline int8_t ckw_i8w_quantize1(float v) {
  const int32_t i = fabsf(v) < 2147483648.0f ? (int32_t)nearbyintf(v) : INT32_MIN;
  return (int8_t)(i < -127 ? -127 : i > 127 ? 127 : i);
}

// Row x[0, K) quantized into q[0, kp) (0 from K on); returns its scale s = a / 127.
static inline float ckw_i8w_quantize_row(int8_t* q, const float* x, int64_t K, int64_t kp) {
  float a = 0.0f;
  for (int64_t k = 0; k < K; ++k) a = fabsf(x[k]) > a ? fabsf(x[k]) : a;
  memset(q, 0, (size_t)kp);
  if (a == 0.0f) return 0.0f;
  const float inv = 127.0f / a;
  for (int64_t k = 0; k < K; ++k) q[k] = ckw_i8w_quantize1(x[k] * inv);
  return a / 127.0f;
}

#endif  // CKW_KERNELS_COMMON_I8W_GEMM_NT_CORE_H_
