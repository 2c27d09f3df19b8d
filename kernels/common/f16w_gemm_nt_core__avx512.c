#include "kernels/common/f16w_gemm_nt_core.h"
#include "kernels/common/simd_avx512.h"
#define CKW_GEMM_W_F16
#include "kernels/common/gemm_nt_core__simd.inc"
