// Checks every bf16w_gemm_nt* kernel and ISA path: against a float64 reference on the widened
// weights under the maps' tolerance; the exact-widening paths (scalar, avx2, avx512) bit for bit
// against the f32 engine on the widened weights (so they inherit every property
// f32_gemm_nt_test proves); the vdpbf16ps path (avx512bf16, M <= CKW_GEMM_ROWS_MAX) against the
// float64 product of bf16-rounded x under fp32 accumulation error alone; the AMX tile path (amx,
// M > CKW_GEMM_ROWS_MAX; M <= CKW_GEMM_ROWS_MAX is the avx512bf16 path) likewise, run only on a CPU
// with AMX (there is no emulation); M > CKW_GEMM_ROWS_MAX on the widening paths equal to an in-order fmaf chain; two row chunks of more than CKW_GEMM_ROWS_MAX rows each (the
// maps' M split) and two column chunks (the N split) giving the whole call's bits; each row of a
// few-row call as if alone; in-place residual; nothing written outside y.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/bf16.h"
#include "kernels/common/bf16w_gemm_nt_core.h"
#include "kernels/common/cpu.h"
#include "kernels/common/tolerance.h"
#include "kernels/gemm/gemm_nt_test_util.h"
#include "kernels/gemm/bf16w_gemm_nt.h"
#include "kernels/gemm/bf16w_gemm_nt_bias.h"
#include "kernels/gemm/bf16w_gemm_nt_bias_gelu.h"
#include "kernels/gemm/bf16w_gemm_nt_bias_residual.h"
#include "kernels/gemm/bf16w_gemm_nt_contract.h"

#define TOL_C CKW_BF16W_GEMM_NT_TOLERANCE_C
_Static_assert(CKW_BF16W_GEMM_NT_BIAS_TOLERANCE_C == TOL_C && CKW_BF16W_GEMM_NT_BIAS_GELU_TOLERANCE_C == TOL_C &&
                   CKW_BF16W_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == TOL_C,
               "the bf16w gemm maps state different tolerances");
// The vdpbf16ps path against the exact product of its rounded inputs: fp32 summation error only
// (the f32 gemm maps' bound).
#define ACCUM_C 8.0
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
GEMM_TEST_EMU_ENTRIES(ckw_bf16w_gemm_nt_core__avx512emu, uint16_t)
#endif

typedef struct {
  const char* isa;
  int available;
  int fused;           // SIMD (M <= CKW_GEMM_ROWS_MAX: row-wise dot products)
  int bf16x;           // M <= CKW_GEMM_ROWS_MAX rounds x to bf16 (vdpbf16ps)
  int tiles;           // M > CKW_GEMM_ROWS_MAX rounds x to bf16 too (AMX tiles)
  f32_core_fn peer;    // the f32 engine path with the same bits on widened weights, or NULL
  plain_fn plain;
  bias_fn bias, gelu;
  res_fn res;
} isa_t;


// The scratch every kernel call gets: the size the maps declare.
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

// float64 reference of the kind on (x rounded to bf16 when xr) and the widened w.
static void reference(int kind, float* ref, const float* x, const float* wf, const float* b, const float* r,
                      int64_t M, int64_t N, int64_t K, int xr) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const float xv = xr ? ckw_bf16_to_f32(ckw_f32_to_bf16(x[m * K + k])) : x[m * K + k];
        acc += (double)xv * wf[n * K + k];
      }
      if (kind != PLAIN) acc += b[n];
      if (kind == GELU) acc = gelu_ref(acc);
      if (kind == RESIDUAL) acc += r[m * N + n];
      ref[m * N + n] = (float)acc;
    }
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
  for (int64_t i = 0; i < M * K; ++i) x[i] = frand();
  for (int64_t i = 0; i < N * K; ++i) w[i] = ckw_f32_to_bf16(frand()), wf[i] = ckw_bf16_to_f32(w[i]);
  for (int64_t i = 0; i < N; ++i) b[i] = frand();
  for (int64_t i = 0; i < M * N; ++i) r[i] = 4.0f * frand();
  for (int64_t i = 0; i < M * N + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  if (in_place) memcpy(yo, r, sizeof(float) * M * N);
  call(isa, kind, yo, x, w, b, in_place ? yo : r, M, N, K, N);
  char what[160];
  snprintf(what, sizeof what, "%s %s M=%lld N=%lld K=%lld%s", isa->isa, kKindName[kind], (long long)M, (long long)N,
           (long long)K, in_place ? " in-place" : "");
  reference(kind, ref, x, wf, b, r, M, N, K, 0);
  int ok = ckw_check_close(what, yo, ref, M * N, TOL_C, K);
  const int dot = M <= CKW_GEMM_ROWS_MAX && isa->fused;
  const int xr = dot ? isa->bf16x : M > CKW_GEMM_ROWS_MAX && isa->tiles;
  if (ok && xr) {  // the rounded-x product, up to fp32 summation
    reference(kind, ref, x, wf, b, r, M, N, K, 1);
    ok = ckw_check_close(what, yo, ref, M * N, ACCUM_C, K);
  }
  for (int64_t i = 0; i < GUARD; ++i) {
    if (y[i] != SENTINEL || y[GUARD + M * N + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      ok = 0;
      break;
    }
  }
  if (ok && isa->peer) {  // exact widening: the f32 engine's bits on the widened weights
    memcpy(other, r, sizeof(float) * M * N);
    isa->peer(other, x, wf, kind == PLAIN ? NULL : b, other, NULL, 0, M, N, K, N, kEpi[kind]);
    if (memcmp(other, yo, sizeof(float) * M * N) != 0) {
      fprintf(stderr, "%s: differs from the f32 engine on the widened weights\n", what);
      ok = 0;
    }
  }
  if (ok && isa->fused && !dot && !xr) {  // one in-order fmaf chain per output, then + b (then GELU)
    for (int64_t i = 0; i < M * N && ok; ++i) {
      const int64_t m = i / N, n = i % N;
      float f = kind == RESIDUAL ? r[i] : 0.0f;
      for (int64_t k = 0; k < K; ++k) f = fmaf(x[m * K + k], wf[n * K + k], f);
      if (kind != PLAIN) f += b[n];
      if (kind != GELU && yo[i] != f) {
        fprintf(stderr, "%s: [%lld] = %.9g, in-order fmaf chain gives %.9g\n", what, (long long)i, yo[i], f);
        ok = 0;
      }
    }
  }
  if (ok && dot && M > 1) {  // each row as if alone
    for (int64_t m = 0; m < M && ok; ++m) {
      memcpy(other, r + m * N, sizeof(float) * N);
      call(isa, kind, other, x + m * K, w, b, other, 1, N, K, N);
      if (memcmp(other, yo + m * N, sizeof(float) * N) != 0) {
        fprintf(stderr, "%s: row %lld differs from a call with that row alone\n", what, (long long)m);
        ok = 0;
      }
    }
  }
  if (ok && M >= 2 * (CKW_GEMM_ROWS_MAX + 1)) {  // two row chunks, neither down to the dot-product path
    const int64_t m1 = CKW_GEMM_ROWS_MAX + 1 + (M - 2 * (CKW_GEMM_ROWS_MAX + 1)) / 3;
    memcpy(other, r, sizeof(float) * M * N);
    call(isa, kind, other, x, w, b, other, m1, N, K, N);
    call(isa, kind, other + m1 * N, x + m1 * K, w, b, other + m1 * N, M - m1, N, K, N);
    if (memcmp(other, yo, sizeof(float) * M * N) != 0) {
      fprintf(stderr, "%s: rows [0, %lld) and [%lld, %lld) computed apart differ from the whole call\n", what,
              (long long)m1, (long long)m1, (long long)M);
      ok = 0;
    }
  }
  if (ok && N > 1) {  // two column chunks into the rows of one y: the whole call's bits
    const int64_t n1 = N / 2;
    memcpy(other, r, sizeof(float) * M * N);
    call(isa, kind, other, x, w, b, other, M, n1, K, N);
    call(isa, kind, other + n1, x, w + n1 * K, b + n1, other + n1, M, N - n1, K, N);
    if (memcmp(other, yo, sizeof(float) * M * N) != 0) {
      fprintf(stderr, "%s: columns [0, %lld) and [%lld, %lld) computed apart differ from the whole call\n", what,
              (long long)n1, (long long)n1, (long long)N);
      ok = 0;
    }
  }
  free(x), free(w), free(wf), free(b), free(r), free(y), free(ref), free(other);
  return ok;
}

// The f32 engine path with a bf16w path's bits (NULL: none, the vdpbf16ps path).
static f32_core_fn peer_of(const char* isa) {
  if (!strcmp(isa, "scalar")) return ckw_f32_gemm_nt_core__scalar;
  if (!strcmp(isa, "avx2")) return ckw_f32_gemm_nt_core__avx2;
  if (!strcmp(isa, "avx512")) return ckw_cpu_has_avx512() ? ckw_f32_gemm_nt_core__avx512 : NULL;
  return NULL;
}

int main(void) {
  const int bf16_cpu = ckw_cpu_has_avx512bf16(), amx_cpu = ckw_cpu_has_amx();
  printf("amx path: %s\n", amx_cpu ? "tested on this CPU's AMX tiles" : "not tested, this CPU (or CKW_ISA) lacks AMX");
  const isa_t isas[] = {
#define ISA(isa)                                                                                                  \
  {#isa,                                                        ckw_cpu_has_##isa(),                              \
   strcmp(#isa, "scalar") != 0,                                 !strcmp(#isa, "avx512bf16") || !strcmp(#isa, "amx"), \
   !strcmp(#isa, "amx"),                                        peer_of(#isa),                                    \
   ckw_bf16w_gemm_nt__##isa,                                    ckw_bf16w_gemm_nt_bias__##isa,                    \
   ckw_bf16w_gemm_nt_bias_gelu__##isa,                          ckw_bf16w_gemm_nt_bias_residual__##isa},
      CKW_BF16W_GEMM_NT_ISAS(ISA)
#undef ISA
      {"dispatch", 1, ckw_cpu_has_avx2(), bf16_cpu, amx_cpu, bf16_cpu ? NULL : ckw_f32_gemm_nt_core,
       ckw_bf16w_gemm_nt, ckw_bf16w_gemm_nt_bias, ckw_bf16w_gemm_nt_bias_gelu, ckw_bf16w_gemm_nt_bias_residual},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, 1, 0, 0, peer_of("avx512"), emu_plain, emu_bias, emu_gelu, emu_res},
#endif
  };
  return GEMM_TEST_RUN_ALL(isas, run_case, "bf16w gemm");
}
