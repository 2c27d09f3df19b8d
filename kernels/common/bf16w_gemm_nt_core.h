// Shared engine behind the bf16w_gemm_nt* kernels: y = epilogue(x W^T) with the weights W
// [N, K] stored as bf16 (uint16_t bit patterns: the top half of an fp32, rounded to nearest even
// by the packer), x [M, K] and y [M, N] (rows ldy apart, r too) fp32. Same arguments, epilogues
// (CKW_GEMM_EPI_*) and paths as f32_gemm_nt_core.h.
//
// Numerics. scalar, avx2, avx512: W is widened exactly (bf16 -> fp32 is a shift), then the f32
// engine's schedule runs unchanged (the template is shared), so every output has the bits of
// ckw_f32_gemm_nt_core__<isa> on the widened weights, for every M: the same properties (M >
// CKW_GEMM_ROWS_MAX: independent of M and tiling; M <= CKW_GEMM_ROWS_MAX: each row as if alone;
// any column split gives the whole call's bits). M > CKW_GEMM_ROWS_MAX widens while packing the
// W panel (costs what fp32 costs); M <= CKW_GEMM_ROWS_MAX streams the bf16 rows (half the
// bytes of fp32).
// avx512bf16: vdpbf16ps for every M, x rounded to bf16 too (nearest even); products are exact in
// fp32; bf16 and fp32 denormals are read as 0 and results flushed (the instruction ignores MXCSR).
// That is a looser contract (x's relative error up to 2^-8) stated in the maps' tolerance_c.
// M <= CKW_GEMM_ROWS_MAX: pairs (k, k + 1) summed into 16 lane chains along K, then a fixed-order
// horizontal sum; a row gets the bits it gets alone and any column split gives the whole call's
// bits. M > CKW_GEMM_ROWS_MAX: each output one fp32 chain seeded with 0 (r for the residual
// epilogue) over the k pairs in order, each pair adding the odd k's product, then the even k's,
// then + b, GELU: independent of M, tiling and any split of rows or columns (2x the avx512 path
// on Zen 4; a Xeon measured an earlier blocked vdpbf16ps tile slower than the avx512 path, 92
// against 140 GFLOPS at 1500x384x384, where AMX takes these shapes anyway).
// amx: M > CKW_GEMM_ROWS_MAX on AMX-BF16 tiles (TDPBF16PS; 3-4x the widening path at the encoder
// shapes): x rounded to bf16 as above, each output an fp32 tile sum over 32-k steps in K order
// from 0, then + b, GELU, r + in fp32: the same looser contract, and the bits depend only on the
// output's row of x and column of W (any split of rows or columns gives the whole call's bits).
// M <= CKW_GEMM_ROWS_MAX is the avx512bf16 path.
#ifndef CKW_KERNELS_COMMON_BF16W_GEMM_NT_CORE_H_
#define CKW_KERNELS_COMMON_BF16W_GEMM_NT_CORE_H_

#include <stdint.h>

#include "kernels/common/f32_gemm_nt_core.h"

// The paths below, oldest first, as an X-macro for CKW_DISPATCH_ISAS (cpu.h) and tests.
#define CKW_BF16W_GEMM_NT_CORE_ISAS(X, name) \
  X(scalar, name) X(avx2, name) X(avx512, name) X(avx512bf16, name) X(amx, name)

CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__scalar, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__avx2, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__avx512, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__avx512bf16, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__amx, uint16_t);
// Best available path for this CPU.
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core, uint16_t);
// The AVX-512 paths again on emulated intrinsics (test builds: kernels/common/simd_avx512bf16.h).
#if defined(CKW_EMULATE_AVX512) || defined(CKW_TEST_AVX512_EMULATION)
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__avx512emu, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__avx512bf16emu, uint16_t);
CKW_GEMM_NT_CORE_DECLARE(ckw_bf16w_gemm_nt_core__amxemu, uint16_t);
#endif

#endif  // CKW_KERNELS_COMMON_BF16W_GEMM_NT_CORE_H_
