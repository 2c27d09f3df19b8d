// Checks every f32_gemm_nt* kernel and ISA path with the GEMM test harness
// (gemm_nt_test_harness.inc): against a float64 reference under the maps' tolerance; the SIMD
// paths bit for bit against an in-order fmaf chain (M > CKW_GEMM_ROWS_MAX) or each row as if
// alone (M <= CKW_GEMM_ROWS_MAX, the dot-product path); row and column splits giving the whole
// call's bits; column-blocked packing; in-place residual; nothing written outside y.
#include "kernels/gemm/f32_gemm_nt.h"
#include "kernels/gemm/f32_gemm_nt_bias.h"
#include "kernels/gemm/f32_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f32_gemm_nt_bias_residual.h"
#include "kernels/gemm/f32_gemm_nt_contract.h"

// One bound for the four epilogues; the maps must agree.
_Static_assert(CKW_F32_GEMM_NT_BIAS_TOLERANCE_C == CKW_F32_GEMM_NT_TOLERANCE_C &&
                   CKW_F32_GEMM_NT_BIAS_GELU_TOLERANCE_C == CKW_F32_GEMM_NT_TOLERANCE_C &&
                   CKW_F32_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == CKW_F32_GEMM_NT_TOLERANCE_C,
               "the gemm maps state different tolerances");
#define GEMM_TEST_W float
#define GEMM_TEST_WIDEN(w) (w)
#define GEMM_TEST_WEIGHT(i) frand()
#define GEMM_TEST_TOL_C CKW_F32_GEMM_NT_TOLERANCE_C
#define GEMM_TEST_LABEL "gemm"
#include "kernels/gemm/gemm_nt_test_harness.inc"

int main(void) {
  const gemm_test_isa isas[] = {
#define ISA(I)                         \
  {.isa = #I,                          \
   .available = ckw_cpu_has_##I(),     \
   .fused = strcmp(#I, "scalar") != 0, \
   .core = ckw_f32_gemm_nt_core__##I,  \
   GEMM_TEST_ENTRIES(ckw_f32_gemm_nt, __##I)},
      CKW_F32_GEMM_NT_ISAS(ISA)
#undef ISA
          {.isa = "dispatch",
           .available = 1,
           .fused = ckw_cpu_has_avx2(),
           .core = ckw_f32_gemm_nt_core,
           GEMM_TEST_ENTRIES(ckw_f32_gemm_nt, )},
  // The *_avx512emu_test build: the AVX-512 template on kernels/common/avx512_emulation.h.
#ifdef CKW_TEST_AVX512_EMULATION
      {.isa = "avx512-emulated",
       .available = 1,
       .fused = 1,
       .core = ckw_f32_gemm_nt_core__avx512emu,
       .same_bits = ckw_cpu_has_avx512() ? ckw_f32_gemm_nt_core__avx512 : NULL},
#endif
  };
  return gemm_test_run(isas, sizeof isas / sizeof isas[0]);
}
