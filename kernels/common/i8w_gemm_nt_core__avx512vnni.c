// The avx512vnni path of the int8-weight engine: vpdpbusd on zmm (contract: i8w_gemm_nt_core.h;
// the template: i8w_gemm_nt_core_simd.h). Built again on emulated intrinsics for the tests
// (__avx512vnniemu).
#include "kernels/common/simd_avx512.h"

#define I8_VNNI 1
#define I8_FEATURES "avx512f,avx512bw,avx512dq,avx512vl,fma,f16c,avx512vnni"
#define I8_MR 6
#define I8_NRV 4
#define I8_ENTRY I8_EMU_(ckw_i8w_gemm_nt_core__avx512vnni)
#include "kernels/common/i8w_gemm_nt_core_simd.h"
