// The avx2 path of the int8-weight engine: vpmaddubsw with the sign trick (contract:
// i8w_gemm_nt_core.h; the template: i8w_gemm_nt_core_simd.h).
#include "kernels/common/simd_avx2.h"

#define I8_VNNI 0
#define I8_FEATURES "avx2,fma,f16c"
#define I8_MR 4
#define I8_NRV 2
#define I8_ENTRY ckw_i8w_gemm_nt_core__avx2
#include "kernels/common/i8w_gemm_nt_core_simd.h"
