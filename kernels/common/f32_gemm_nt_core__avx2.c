#include "kernels/common/simd_avx2.h"
// 6x16 tile: 12 accumulators + 2 panel vectors + 1 broadcast of the 16 ymm registers.
#define CKW_GEMM_MR 6
#define CKW_GEMM_KC 256  // 16 KiB panel, L1-resident
#define CKW_GEMM_MC 144  // 144 x 256 block of x, L2-resident
#include "kernels/common/f32_gemm_nt_core__simd.inc"
