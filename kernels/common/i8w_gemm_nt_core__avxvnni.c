// The avxvnni path of the int8-weight engine: VEX vpdpbusd on ymm, for AVX2 CPUs with AVX-VNNI
// (contract: i8w_gemm_nt_core.h; the template: i8w_gemm_nt_core_simd.h). Built again on emulated
// vpdpbusd for the tests (__avxvnniemu).
#include "kernels/common/simd_avx2.h"

#define I8_VNNI 1
#define I8_FEATURES "avx2,fma,f16c,avxvnni"
#define I8_MR 6
#define I8_NRV 2
#define I8_ENTRY I8_EMU_(ckw_i8w_gemm_nt_core__avxvnni)
#include "kernels/common/i8w_gemm_nt_core_simd.h"
