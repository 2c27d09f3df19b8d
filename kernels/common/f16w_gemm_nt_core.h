// Shared engine behind the f16w_gemm_nt* kernels: y = epilogue(x W^T) with the weights W [N, K]
// stored as IEEE f16 (uint16_t bit patterns), x [M, K] and y [M, N] (rows ldy apart, r too) fp32.
// Same arguments, epilogues (CKW_GEMM_EPI_*) and paths as f32_gemm_nt_core.h.
//
// Numerics: W is widened exactly (every f16 is an fp32; vcvtph2ps on the SIMD paths), then the
// f32 engine's schedule runs unchanged (the template is shared), so every output has the bits of
// ckw_f32_gemm_nt_core__<isa> on the widened weights, for every M, with all of its properties.
// The checkpoint stores a weight as f16 only when that widening gives back its fp32 values, so
// the fp32 build computes the same numbers from half the bytes: M <= CKW_GEMM_ROWS_MAX (decode)
// streams the f16 rows, M > CKW_GEMM_ROWS_MAX widens while packing the W panel.
#ifndef CKW_KERNELS_COMMON_F16W_GEMM_NT_CORE_H_
#define CKW_KERNELS_COMMON_F16W_GEMM_NT_CORE_H_

#include <stdint.h>

#include "kernels/common/f32_gemm_nt_core.h"

#define CKW_F16W_GEMM_NT_CORE_ISAS(X, name) X(scalar, name) X(avx2, name) X(avx512, name)

CKW_GEMM_NT_CORE_DECLARE(ckw_f16w_gemm_nt_core__scalar, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_f16w_gemm_nt_core__avx2, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_f16w_gemm_nt_core__avx512, uint16_t);
// Best available path for this CPU.
CKW_GEMM_NT_CORE_DECLARE(ckw_f16w_gemm_nt_core, uint16_t);
// The avx512 path again on emulated intrinsics (test builds: kernels/common/avx512_emulation.h).
#if defined(CKW_EMULATE_AVX512) || defined(CKW_TEST_AVX512_EMULATION)
CKW_GEMM_NT_CORE_DECLARE(ckw_f16w_gemm_nt_core__avx512emu, uint16_t);
#endif

#endif  // CKW_KERNELS_COMMON_F16W_GEMM_NT_CORE_H_
