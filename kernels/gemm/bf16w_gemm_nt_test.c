// Checks every bf16w_gemm_nt* kernel and ISA path with the GEMM test harness
// (gemm_nt_test_harness.inc): against a float64 reference on the widened weights under the maps'
// tolerance; the exact-widening paths (scalar, avx2, avx512) bit for bit against the f32 engine on
// the widened weights (so they inherit every property f32_gemm_nt_test proves) and, M >
// CKW_GEMM_ROWS_MAX, against an in-order fmaf chain; the vdpbf16ps path (avx512bf16, any M) and
// the AMX tile path (amx, M > CKW_GEMM_ROWS_MAX; fewer rows take the avx512bf16 path) against the
// float64 product of bf16-rounded x under fp32 accumulation error alone, and the vdpbf16ps tiles
// (avx512bf16, M > CKW_GEMM_ROWS_MAX) against the instruction's lane chain on the rounded x; row and column splits
// giving the whole call's bits; each row of a few-row call as if alone; in-place residual; nothing written outside y.
// The *_avx512emu_test build adds the three AVX-512 paths on emulated intrinsics (kernels/common/avx512_emulation.h
// and, for vdpbf16ps and the AMX tiles, avx512bf16_amx_emulation.h), so all five paths run on any x86-64 with AVX2, and
// each bit for bit against the real path where the CPU has it.
#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/gemm/bf16w_gemm_nt.h"
#include "kernels/gemm/bf16w_gemm_nt_bias.h"
#include "kernels/gemm/bf16w_gemm_nt_bias_gelu.h"
#include "kernels/gemm/bf16w_gemm_nt_bias_residual.h"
#include "kernels/gemm/bf16w_gemm_nt_contract.h"

_Static_assert(CKW_BF16W_GEMM_NT_BIAS_TOLERANCE_C == CKW_BF16W_GEMM_NT_TOLERANCE_C &&
                   CKW_BF16W_GEMM_NT_BIAS_GELU_TOLERANCE_C == CKW_BF16W_GEMM_NT_TOLERANCE_C &&
                   CKW_BF16W_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == CKW_BF16W_GEMM_NT_TOLERANCE_C,
               "the bf16w gemm maps state different tolerances");
#define GEMM_TEST_W uint16_t
#define GEMM_TEST_WIDEN ckw_bf16_to_f32
#define GEMM_TEST_WEIGHT(i) ckw_f32_to_bf16(frand())
#define GEMM_TEST_TOL_C CKW_BF16W_GEMM_NT_TOLERANCE_C
#define GEMM_TEST_LABEL "bf16w gemm"
#include "kernels/gemm/gemm_nt_test_harness.inc"

// The f32 engine path with a bf16w path's bits (NULL: none, the x-rounding paths).
static gemm_test_f32_core peer_of(const char* isa) {
  if (!strcmp(isa, "scalar")) return ckw_f32_gemm_nt_core__scalar;
  if (!strcmp(isa, "avx2")) return ckw_f32_gemm_nt_core__avx2;
  if (!strcmp(isa, "avx512")) return ckw_cpu_has_avx512() ? ckw_f32_gemm_nt_core__avx512 : NULL;
  return NULL;
}

int main(void) {
  const int bf16_cpu = ckw_cpu_has_avx512bf16(), amx_cpu = ckw_cpu_has_amx();
  printf("amx path: %s\n", amx_cpu ? "tested on this CPU's AMX tiles" : "not tested, this CPU (or CKW_ISA) lacks AMX");
  const gemm_test_isa isas[] = {
#define ISA(I)                                               \
  {.isa = #I,                                                \
   .available = ckw_cpu_has_##I(),                           \
   .fused = strcmp(#I, "scalar") != 0,                       \
   .bf16x = !strcmp(#I, "avx512bf16") || !strcmp(#I, "amx"), \
   .tiles = !strcmp(#I, "avx512bf16") || !strcmp(#I, "amx"), \
   .pair_chain = !strcmp(#I, "avx512bf16"),                  \
   .unpacked = !strcmp(#I, "amx"),                           \
   .peer = peer_of(#I),                                      \
   .core = ckw_bf16w_gemm_nt_core__##I,                      \
   GEMM_TEST_ENTRIES(ckw_bf16w_gemm_nt, __##I)},
      CKW_BF16W_GEMM_NT_ISAS(ISA)
#undef ISA
          {.isa = "dispatch",
           .available = 1,
           .fused = ckw_cpu_has_avx2(),
           .bf16x = bf16_cpu,
           .tiles = bf16_cpu,
           .pair_chain = bf16_cpu && !amx_cpu,
           .unpacked = amx_cpu,
           .peer = bf16_cpu ? NULL : ckw_f32_gemm_nt_core,
           .core = ckw_bf16w_gemm_nt_core,
           GEMM_TEST_ENTRIES(ckw_bf16w_gemm_nt, )},
#ifdef CKW_TEST_AVX512_EMULATION
      {.isa = "avx512-emulated",
       .available = 1,
       .fused = 1,
       .peer = ckw_f32_gemm_nt_core__avx512emu,
       .core = ckw_bf16w_gemm_nt_core__avx512emu,
       .same_bits = ckw_cpu_has_avx512() ? ckw_bf16w_gemm_nt_core__avx512 : NULL},
      {.isa = "avx512bf16-emulated",
       .available = 1,
       .fused = 1,
       .bf16x = 1,
       .tiles = 1,
       .pair_chain = 1,
       .core = ckw_bf16w_gemm_nt_core__avx512bf16emu,
       .same_bits = bf16_cpu ? ckw_bf16w_gemm_nt_core__avx512bf16 : NULL},
      {.isa = "amx-emulated",
       .available = 1,
       .fused = 1,
       .bf16x = 1,
       .tiles = 1,
       .unpacked = 1,
       .core = ckw_bf16w_gemm_nt_core__amxemu,
       .same_bits = amx_cpu ? ckw_bf16w_gemm_nt_core__amx : NULL},
#endif
  };
  return gemm_test_run(isas, sizeof isas / sizeof isas[0]);
}
