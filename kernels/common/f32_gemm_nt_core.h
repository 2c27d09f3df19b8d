// Shared engine behind the f32_gemm_nt* kernels: y = epilogue(x W^T), x [M, K] row-major,
// W [N, K] row-major (the checkpoint's nn.Linear layout), y [M, N] with rows ldy >= N floats
// apart (r too): a caller can compute columns [n0, n0 + n) of a wider y, so a thread split over
// N works for any M.
//
// Numerics of the SIMD paths for M > CKW_GEMM_ROWS_MAX: each output is one fused multiply-add
// chain over k = 0..K-1 in order (seeded with 0, or with r for the residual epilogue), then
// + b, then GELU. The result is independent of tiling, of M (> CKW_GEMM_ROWS_MAX) and of how a
// caller splits the outputs, and bit-identical between the AVX2 and AVX-512 paths. M <=
// CKW_GEMM_ROWS_MAX (decode: one row, or one per beam) takes a streaming dot-product path
// instead (lanes along K, then r + (dot + b)), W read once for all rows and every row
// computed exactly as a call with that row alone: same contract, different rounding, so a
// thread split must be over N (never M down to so few rows) to keep the bits. The scalar
// path uses separate multiply and add.
//
// pack: NULL, or scratch for pack_floats floats. A SIMD call of more than one row block (M >
// 128 or 144) then transposes each column block of W into it once instead of once per row
// block (f32_gemm_nt_bench, one AVX-512 core, encoder shapes: 4-10% more GFLOPS). Same bits
// either way.
#ifndef CKW_KERNELS_COMMON_F32_GEMM_NT_CORE_H_
#define CKW_KERNELS_COMMON_F32_GEMM_NT_CORE_H_

#include <stdint.h>

// M <= this: the row-wise dot-product path (see above).
#define CKW_GEMM_ROWS_MAX 8
// Or-ed into epi: only M == 1 takes the dot-product path, so the bits of every row do not
// depend on how a caller groups rows into calls of 2 or more (the conv stem's frame blocks).
#define CKW_GEMM_ONE_ROW_DOT 8
// Or-ed into epi: every M takes the dot-product path, so each row gets the bits of a call with
// that row alone however many rows share the call (the rows_alone attr of the maps: a decoder
// step over many independent sequences, each sequence's logits independent of its batch). W is
// still read once per call: the rows' output blocks go to pack (M x CKW_VW floats) when it holds
// them, else the rows run CKW_GEMM_ROWS_MAX at a time.
#define CKW_GEMM_ROWS_ALONE 16
// The path flags above, stripped from epi before the epilogue is read.
#define CKW_GEMM_PATH_FLAGS (CKW_GEMM_ONE_ROW_DOT | CKW_GEMM_ROWS_ALONE)
// The most rows a call takes the dot-product path for, from the flags in epi.
#define CKW_GEMM_DOT_ROWS(epi) \
  (((epi)&CKW_GEMM_ROWS_ALONE) ? INT64_MAX : ((epi)&CKW_GEMM_ONE_ROW_DOT) ? 1 : CKW_GEMM_ROWS_MAX)

enum {
  CKW_GEMM_EPI_PLAIN = 0,     // y = x W^T (+ b)
  CKW_GEMM_EPI_GELU = 1,      // y = gelu(x W^T (+ b))
  CKW_GEMM_EPI_RESIDUAL = 2,  // y = r + x W^T (+ b); y may be the same buffer as r
};

// The scratch the kernels declare for pack (their maps' scratch: bind says the same number).
#define CKW_GEMM_PACK_BYTES (1024 * 1024)

// An engine entry on weights of type w_t: the f32, bf16w and f16w engines' paths all take these
// arguments. b may be NULL (no bias); r is read only by CKW_GEMM_EPI_RESIDUAL and may equal y.
#define CKW_GEMM_NT_CORE_DECLARE(name, w_t)                                                                           \
  void name(float* y, const float* x, const w_t* w, const float* b, const float* r, float* pack, int64_t pack_floats, \
            int64_t M, int64_t N, int64_t K, int64_t ldy, int epi)

CKW_GEMM_NT_CORE_DECLARE(ckw_f32_gemm_nt_core__scalar, float);
CKW_GEMM_NT_CORE_DECLARE(ckw_f32_gemm_nt_core__avx2, float);
CKW_GEMM_NT_CORE_DECLARE(ckw_f32_gemm_nt_core__avx512, float);
// Best available path for this CPU.
CKW_GEMM_NT_CORE_DECLARE(ckw_f32_gemm_nt_core, float);
// The avx512 path again on emulated intrinsics (test builds: kernels/common/avx512_emulation.h).
#if defined(CKW_EMULATE_AVX512) || defined(CKW_TEST_AVX512_EMULATION)
CKW_GEMM_NT_CORE_DECLARE(ckw_f32_gemm_nt_core__avx512emu, float);
#endif

#endif  // CKW_KERNELS_COMMON_F32_GEMM_NT_CORE_H_
