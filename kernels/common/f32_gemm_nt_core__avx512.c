#include "kernels/common/simd_avx512.h"
#include "kernels/common/gemm_nt_core__simd.inc"
