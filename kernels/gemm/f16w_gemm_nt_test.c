// Checks the f16 conversions and every f16w_gemm_nt* kernel and ISA path: the widening of every
// f16 bit pattern (scalar helper and each ISA's vector load) against its value; each path bit
// for bit against the f32 engine path of the same ISA on the widened weights (so it inherits
// every property f32_gemm_nt_test proves: M-independence, row and column splits, each row of a
// few-row call as if alone) with subnormal and large weights among the random ones; against a
// float64 reference under the maps' tolerance; in-place residual; nothing written outside y.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/cpu.h"
#include "kernels/common/f16.h"
#include "kernels/common/f16w_gemm_nt_core.h"
#include "kernels/common/tolerance.h"
#include "kernels/gemm/f16w_gemm_nt.h"
#include "kernels/gemm/f16w_gemm_nt_bias.h"
#include "kernels/gemm/f16w_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f16w_gemm_nt_bias_residual.h"
#include "kernels/gemm/f16w_gemm_nt_contract.h"
#include "kernels/gemm/gemm_nt_test_util.h"

#define TOL_C CKW_F16W_GEMM_NT_TOLERANCE_C
_Static_assert(CKW_F16W_GEMM_NT_BIAS_TOLERANCE_C == TOL_C && CKW_F16W_GEMM_NT_BIAS_GELU_TOLERANCE_C == TOL_C &&
                   CKW_F16W_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == TOL_C,
               "the f16w gemm maps state different tolerances");
#define GUARD 37
#define SENTINEL 12345.0f

static const int kEpi[NKIND] = {CKW_GEMM_EPI_PLAIN, CKW_GEMM_EPI_PLAIN, CKW_GEMM_EPI_GELU, CKW_GEMM_EPI_RESIDUAL};

typedef void (*plain_fn)(float*, const float*, const uint16_t*, float*, int64_t, int64_t, int64_t, int64_t);
typedef void (*bias_fn)(float*, const float*, const uint16_t*, const float*, float*, int64_t, int64_t, int64_t, int64_t);
typedef void (*res_fn)(float*, const float*, const uint16_t*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                       int64_t);
typedef void (*f32_core_fn)(float*, const float*, const float*, const float*, const float*, float*, int64_t, int64_t,
                            int64_t, int64_t, int64_t, int);

#ifdef CKW_TEST_AVX512_EMULATION
GEMM_TEST_EMU_ENTRIES(ckw_f16w_gemm_nt_core__avx512emu, uint16_t)
void ckw_f32_gemm_nt_core__avx512emu(float*, const float*, const float*, const float*, const float*, float*, int64_t,
                                     int64_t, int64_t, int64_t, int64_t, int);  // the peer
#endif

typedef struct {
  const char* isa;
  int available;
  f32_core_fn peer;  // the f32 engine path these bits must equal on the widened weights
  plain_fn plain;
  bias_fn bias, gelu;
  res_fn res;
} isa_t;

static float g_scratch[CKW_GEMM_PACK_BYTES / sizeof(float)];

static void call(const isa_t* isa, int kind, float* y, const float* x, const uint16_t* w, const float* b,
                 const float* r, int64_t M, int64_t N, int64_t K, int64_t ldy) {
  switch (kind) {
    case PLAIN: isa->plain(y, x, w, g_scratch, M, N, K, ldy); break;
    case BIAS: isa->bias(y, x, w, b, g_scratch, M, N, K, ldy); break;
    case GELU: isa->gelu(y, x, w, b, g_scratch, M, N, K, ldy); break;
    case RESIDUAL: isa->res(y, x, w, b, r, g_scratch, M, N, K, ldy); break;
  }
}

// A weight: mostly f16 values near [-1, 1), every 7th a subnormal, every 11th near the largest f16
// divided down so products stay finite.
static uint16_t random_weight(int64_t i) {
  const float v = frand();
  if (i % 7 == 3) return (uint16_t)((v < 0 ? 0x8000u : 0u) | (1u + (uint16_t)((g_rng >> 20) % 0x3ffu)));
  if (i % 11 == 5) return ckw_f32_to_f16(v * 60000.0f);
  return ckw_f32_to_f16(v);
}

static int run_case(const isa_t* isa, int kind, int64_t M, int64_t N, int64_t K, int in_place) {
  float* x = malloc(sizeof(float) * (M * K + 1));
  uint16_t* w = malloc(sizeof(uint16_t) * (N * K + 1));
  float* wf = malloc(sizeof(float) * (N * K + 1));
  float* b = malloc(sizeof(float) * (N + 1));
  float* r = malloc(sizeof(float) * (M * N + 1));
  float* y = malloc(sizeof(float) * (M * N + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (M * N + 1));
  float* other = malloc(sizeof(float) * (M * N + 1));
  for (int64_t i = 0; i < M * K; ++i) x[i] = frand() * 1e-4f;  // keeps the 60000-weights' sums moderate
  for (int64_t i = 0; i < N * K; ++i) w[i] = random_weight(i), wf[i] = ckw_f16_to_f32(w[i]);
  for (int64_t i = 0; i < N; ++i) b[i] = frand();
  for (int64_t i = 0; i < M * N; ++i) r[i] = 4.0f * frand();
  for (int64_t i = 0; i < M * N + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  if (in_place) memcpy(yo, r, sizeof(float) * M * N);
  call(isa, kind, yo, x, w, b, in_place ? yo : r, M, N, K, N);
  char what[160];
  snprintf(what, sizeof what, "%s %s M=%lld N=%lld K=%lld%s", isa->isa, kKindName[kind], (long long)M, (long long)N,
           (long long)K, in_place ? " in-place" : "");
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += (double)x[m * K + k] * wf[n * K + k];
      if (kind != PLAIN) acc += b[n];
      if (kind == GELU) acc = gelu_ref(acc);
      if (kind == RESIDUAL) acc += r[m * N + n];
      ref[m * N + n] = (float)acc;
    }
  int ok = ckw_check_close(what, yo, ref, M * N, TOL_C, K);
  for (int64_t i = 0; i < GUARD; ++i) {
    if (y[i] != SENTINEL || y[GUARD + M * N + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      ok = 0;
      break;
    }
  }
  if (ok) {
    memcpy(other, r, sizeof(float) * M * N);
    isa->peer(other, x, wf, kind == PLAIN ? NULL : b, other, g_scratch, GEMM_TEST_PACK_FLOATS, M, N, K, N, kEpi[kind]);
    if (memcmp(other, yo, sizeof(float) * M * N) != 0) {
      fprintf(stderr, "%s: differs from the f32 engine on the widened weights\n", what);
      ok = 0;
    }
  }
  free(x), free(w), free(wf), free(b), free(r), free(y), free(ref), free(other);
  return ok;
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
               {65520.0f, 0x7c00}, {0x1p-24f, 0x0001}, {0x1p-25f, 0x0000}, {0x3p-25f, 0x0002}, {-0x1p-14f, 0x8400},
               {0x1.ffcp-15f, 0x0400}};
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
static int check_widening_in_kernel(const isa_t* isa) {
  const int64_t K = 8, N = 0x7c00 * 2 / K;  // finite patterns only (+ and -): 0x0000..0x7bff, 0x8000..0xfbff
  uint16_t* w = malloc(sizeof(uint16_t) * N * K);
  float* y = malloc(sizeof(float) * 9 * N);
  float x[9 * 8] = {0};
  for (int64_t i = 0; i < N * K; ++i) w[i] = (uint16_t)(i < 0x7c00 ? i : 0x8000 + (i - 0x7c00));
  for (int m = 0; m < 8; ++m) x[m * K + m] = 1.0f;
  int ok = 1;
  for (int pass = 0; pass < 2 && ok; ++pass) {
    if (pass == 0) {
      isa->plain(y, x, w, g_scratch, 9, N, K, N);
    } else {
      for (int m = 0; m < 8; ++m) isa->plain(y + m * N, x + m * K, w, g_scratch, 1, N, K, N);
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
  const isa_t isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_gemm_nt_core__##isa, ckw_f16w_gemm_nt__##isa, \
                  ckw_f16w_gemm_nt_bias__##isa, ckw_f16w_gemm_nt_bias_gelu__##isa, ckw_f16w_gemm_nt_bias_residual__##isa},
      CKW_F16W_GEMM_NT_ISAS(ISA)
#undef ISA
      {"dispatch", 1, ckw_f32_gemm_nt_core, ckw_f16w_gemm_nt, ckw_f16w_gemm_nt_bias, ckw_f16w_gemm_nt_bias_gelu,
       ckw_f16w_gemm_nt_bias_residual},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", ckw_cpu_has_avx2(), ckw_f32_gemm_nt_core__avx512emu, emu_plain, emu_bias, emu_gelu, emu_res},
#endif
  };
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i)
    if (isas[i].available && !check_widening_in_kernel(&isas[i])) ok = 0;
  const int failed = GEMM_TEST_RUN_ALL(isas, run_case, "f16w gemm");
  return ok && !failed ? 0 : 1;
}
