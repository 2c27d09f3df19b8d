#include "kernels/common/simd_avx512.h"
// 8x32 tile: 16 accumulators + 2 panel vectors + 1 broadcast of the 32 zmm registers.
#define CKW_GEMM_MR 8
#define CKW_GEMM_KC 256  // 32 KiB panel
#define CKW_GEMM_MC 128
#include "kernels/common/f32_gemm_nt_core__simd.inc"
