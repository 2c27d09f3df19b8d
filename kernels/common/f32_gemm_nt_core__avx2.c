#include "kernels/common/simd_avx2.h"
#include "kernels/common/gemm_nt_core__simd.inc"
