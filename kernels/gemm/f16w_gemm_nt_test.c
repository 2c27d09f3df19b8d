// Checks the f16 conversions and every f16w_gemm_nt* kernel and ISA path: the widening of every
// f16 bit pattern (scalar helper and each ISA's vector load) against its value; then, with the
// GEMM test harness (gemm_nt_test_harness.inc), each path bit for bit against the f32 engine path
// of the same ISA on the widened weights (so it inherits every property f32_gemm_nt_test proves:
// M-independence, row and column splits, each row of a few-row call as if alone) with subnormal
// and large weights among the random ones; against a float64 reference under the maps' tolerance;
// row and column splits; column-blocked packing; in-place residual; nothing written outside y.
#include "kernels/common/f16.h"
#include "kernels/common/f16w_gemm_nt_core.h"
#include "kernels/gemm/f16w_gemm_nt.h"
#include "kernels/gemm/f16w_gemm_nt_bias.h"
#include "kernels/gemm/f16w_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f16w_gemm_nt_bias_residual.h"
#include "kernels/gemm/f16w_gemm_nt_contract.h"

_Static_assert(CKW_F16W_GEMM_NT_BIAS_TOLERANCE_C == CKW_F16W_GEMM_NT_TOLERANCE_C &&
                   CKW_F16W_GEMM_NT_BIAS_GELU_TOLERANCE_C == CKW_F16W_GEMM_NT_TOLERANCE_C &&
                   CKW_F16W_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == CKW_F16W_GEMM_NT_TOLERANCE_C,
               "the f16w gemm maps state different tolerances");
static uint16_t random_weight(int64_t i);
#define GEMM_TEST_W uint16_t
#define GEMM_TEST_WIDEN ckw_f16_to_f32
#define GEMM_TEST_WEIGHT random_weight
#define GEMM_TEST_X() (frand() * 1e-4f)  // keeps the 60000-weights' sums moderate
#define GEMM_TEST_TOL_C CKW_F16W_GEMM_NT_TOLERANCE_C
#define GEMM_TEST_LABEL "f16w gemm"
#include "kernels/gemm/gemm_nt_test_harness.inc"

// A weight: mostly f16 values near [-1, 1), every 7th a subnormal, every 11th near the largest f16
// divided down so products stay finite.
static uint16_t random_weight(int64_t i) {
  const float v = frand();
  if (i % 7 == 3) return (uint16_t)((v < 0 ? 0x8000u : 0u) | (1u + (uint16_t)((g_rng >> 20) % 0x3ffu)));
  if (i % 11 == 5) return ckw_f32_to_f16(v * 60000.0f);
  return ckw_f32_to_f16(v);
}

// Every bit pattern: ckw_f16_to_f32 against its value (sign, 2^(e-15) (1 + m/1024), subnormals
// m 2^-24, infinities, NaN), and narrowing gives every non-NaN pattern back.
static int check_conversions(void) {
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const uint32_t e = h >> 10 & 0x1fu, m = h & 0x3ffu;
    const double mag = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024.0 + m, (int)e - 25);
    const double want = h & 0x8000u ? -mag : mag;
    const float got = ckw_f16_to_f32((uint16_t)h);
    const int same = isnan(want) ? isnan(got) : (got == want && !signbit(got) == !signbit(want));
    if (!same || (!isnan(got) && ckw_f32_to_f16(got) != h)) {
      if (bad++ < 5) fprintf(stderr, "f16 0x%04x: widened %.9g, want %.9g\n", (unsigned)h, got, want);
    }
  }
  // Rounding: ties to even, overflow to infinity, the subnormal range.
  const struct {
    float f;
    uint16_t h;
  } cases[] = {{1.0f + 0x1p-11f, 0x3c00}, {1.0f + 0x3p-11f, 0x3c02}, {65504.0f, 0x7bff}, {65519.0f, 0x7bff},
               {65520.0f, 0x7c00},        {0x1p-24f, 0x0001},        {0x1p-25f, 0x0000}, {0x3p-25f, 0x0002},
               {-0x1p-14f, 0x8400},       {0x1.ffcp-15f, 0x0400}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    if (ckw_f32_to_f16(cases[i].f) != cases[i].h) {
      fprintf(stderr, "ckw_f32_to_f16(%a) = 0x%04x, want 0x%04x\n", cases[i].f, ckw_f32_to_f16(cases[i].f), cases[i].h);
      ++bad;
    }
  printf("f16 conversions: %s\n", bad ? "FAILED" : "every pattern exact");
  return bad == 0;
}

// Every finite pattern through each path's widening inside a GEMM: W = the patterns as an [N, 8]
// matrix and x = unit rows, so y[m][n] = W[n][m] exactly (packed path, M = 8 rows + 1 zero row;
// streaming path, M = 1 per unit row).
static int check_widening_in_kernel(const gemm_test_isa* isa) {
  const int64_t K = 8, N = 0x7c00 * 2 / K;  // finite patterns only (+ and -): 0x0000..0x7bff, 0x8000..0xfbff
  uint16_t* w = malloc(sizeof(uint16_t) * N * K);
  float* y = malloc(sizeof(float) * 9 * N);
  float x[9 * 8] = {0};
  for (int64_t i = 0; i < N * K; ++i) w[i] = (uint16_t)(i < 0x7c00 ? i : 0x8000 + (i - 0x7c00));
  for (int m = 0; m < 8; ++m) x[m * K + m] = 1.0f;
  int ok = 1;
  for (int pass = 0; pass < 2 && ok; ++pass) {
    if (pass == 0) {
      call(isa, PLAIN, y, x, w, NULL, NULL, 9, N, K, N);
    } else {
      for (int m = 0; m < 8; ++m) call(isa, PLAIN, y + m * N, x + m * K, w, NULL, NULL, 1, N, K, N);
    }
    for (int64_t n = 0; n < N && ok; ++n)
      for (int m = 0; m < 8; ++m) {
        const float want = ckw_f16_to_f32(w[n * K + m]);
        // + 0.0 products may turn -0 into +0 (x's zeros); compare values, and subnormals exactly.
        if (y[m * N + n] != want) {
          fprintf(stderr, "%s: f16 0x%04x widened to %a in the %s path, want %a\n", isa->isa, w[n * K + m],
                  y[m * N + n], pass ? "streaming" : "packed", want);
          ok = 0;
          break;
        }
      }
  }
  free(w), free(y);
  return ok;
}

int main(void) {
  int ok = check_conversions();
  // Not fused: the peer's bits carry f32_gemm_nt_test's chain and row checks.
  const gemm_test_isa isas[] = {
#define ISA(I)                         \
  {.isa = #I,                          \
   .available = ckw_cpu_has_##I(),     \
   .peer = ckw_f32_gemm_nt_core__##I,  \
   .core = ckw_f16w_gemm_nt_core__##I, \
   GEMM_TEST_ENTRIES(ckw_f16w_gemm_nt, __##I)},
      CKW_F16W_GEMM_NT_ISAS(ISA)
#undef ISA
          {.isa = "dispatch",
           .available = 1,
           .peer = ckw_f32_gemm_nt_core,
           .core = ckw_f16w_gemm_nt_core,
           GEMM_TEST_ENTRIES(ckw_f16w_gemm_nt, )},
#ifdef CKW_TEST_AVX512_EMULATION
      // vcvtph2ps stays real (F16C, which every AVX2 CPU here has).
      {.isa = "avx512-emulated",
       .available = ckw_cpu_has_avx2(),
       .peer = ckw_f32_gemm_nt_core__avx512emu,
       .core = ckw_f16w_gemm_nt_core__avx512emu,
       .same_bits = ckw_cpu_has_avx512() ? ckw_f16w_gemm_nt_core__avx512 : NULL},
#endif
  };
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i)
    if (isas[i].available && !check_widening_in_kernel(&isas[i])) ok = 0;
  const int failed = gemm_test_run(isas, sizeof isas / sizeof isas[0]);
  return ok && !failed ? 0 : 1;
}
