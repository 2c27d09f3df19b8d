// Checks every f32_gemm_nt* kernel and ISA path against a float64 reference under the
// tolerance policy, plus: SIMD paths equal an in-order fmaf chain bit for bit, in-place
// residual (y == r) works, and nothing is written outside y. (M <= CKW_GEMM_ROWS_MAX is a
// dot-product path: checked under the tolerance, and every row bit for bit against a call with
// that row alone.)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/cpu.h"
#include "kernels/common/f32_gemm_nt_core.h"
#include "kernels/common/tolerance.h"
#include "kernels/gemm/gemm_nt_test_util.h"
#include "kernels/gemm/f32_gemm_nt.h"
#include "kernels/gemm/f32_gemm_nt_bias.h"
#include "kernels/gemm/f32_gemm_nt_bias_gelu.h"
#include "kernels/gemm/f32_gemm_nt_bias_residual.h"
#include "kernels/gemm/f32_gemm_nt_contract.h"

// Built a second time with CKW_TEST_AVX512_EMULATION (the *_avx512emu_test target) to run the
// AVX-512 template through kernels/common/avx512_emulation.h on CPUs without AVX-512.
#ifdef CKW_TEST_AVX512_EMULATION
GEMM_TEST_EMU_ENTRIES(ckw_f32_gemm_nt_core__avx512emu, float)
#endif

// One bound for the four epilogues; the maps must agree.
#define TOL_C CKW_F32_GEMM_NT_TOLERANCE_C
_Static_assert(CKW_F32_GEMM_NT_BIAS_TOLERANCE_C == TOL_C && CKW_F32_GEMM_NT_BIAS_GELU_TOLERANCE_C == TOL_C &&
                   CKW_F32_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == TOL_C,
               "the gemm maps state different tolerances");
#define GUARD 37
#define SENTINEL 12345.0f

// The scratch every kernel call gets: the size the maps declare.
static float g_scratch[CKW_GEMM_PACK_BYTES / sizeof(float)];


typedef void (*plain_fn)(float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t);
typedef void (*bias_fn)(float*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t);
typedef void (*res_fn)(float*, const float*, const float*, const float*, const float*, float*, int64_t, int64_t,
                       int64_t, int64_t);

typedef struct {
  const char* isa;
  int available;
  int fused;  // SIMD path: expect the in-order fmaf chain exactly
  plain_fn plain;
  bias_fn bias, gelu;
  res_fn res;
} isa_t;

// Columns [n0, n0 + n) of y (rows ldy apart), as one chunk of a thread split over N computes them.
static void call_columns(const isa_t* isa, int kind, float* y, const float* x, const float* w, const float* b,
                         const float* r, int64_t M, int64_t n0, int64_t n, int64_t K, int64_t ldy);


static int run_case(const isa_t* isa, int kind, int64_t M, int64_t N, int64_t K, int in_place) {
  float* x = malloc(sizeof(float) * (M * K + 1));
  float* w = malloc(sizeof(float) * (N * K + 1));
  float* b = malloc(sizeof(float) * (N + 1));
  float* r = malloc(sizeof(float) * (M * N + 1));
  float* y = malloc(sizeof(float) * (M * N + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (M * N + 1));
  float* chain = malloc(sizeof(float) * (M * N + 1));
  for (int64_t i = 0; i < M * K; ++i) x[i] = frand();
  for (int64_t i = 0; i < N * K; ++i) w[i] = frand();
  for (int64_t i = 0; i < N; ++i) b[i] = frand();
  for (int64_t i = 0; i < M * N; ++i) r[i] = 4.0f * frand();
  for (int64_t i = 0; i < M * N + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      float f = kind == RESIDUAL ? r[m * N + n] : 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        acc += (double)x[m * K + k] * w[n * K + k];
        f = fmaf(x[m * K + k], w[n * K + k], f);
      }
      if (kind != PLAIN) f += b[n];
      chain[m * N + n] = f;
      if (kind != PLAIN) acc += b[n];
      if (kind == GELU) acc = gelu_ref(acc);
      if (kind == RESIDUAL) acc += r[m * N + n];
      ref[m * N + n] = (float)acc;
    }
  }
  if (in_place) memcpy(yo, r, sizeof(float) * M * N);
  switch (kind) {
    case PLAIN: isa->plain(yo, x, w, g_scratch, M, N, K, N); break;
    case BIAS: isa->bias(yo, x, w, b, g_scratch, M, N, K, N); break;
    case GELU: isa->gelu(yo, x, w, b, g_scratch, M, N, K, N); break;
    case RESIDUAL: isa->res(yo, x, w, b, in_place ? yo : r, g_scratch, M, N, K, N); break;
  }
  char what[160];
  snprintf(what, sizeof what, "%s %s M=%lld N=%lld K=%lld%s", isa->isa, kKindName[kind], (long long)M,
           (long long)N, (long long)K, in_place ? " in-place" : "");
  int ok = ckw_check_close(what, yo, ref, M * N, TOL_C, K);
  for (int64_t i = 0; i < GUARD; ++i) {
    if (y[i] != SENTINEL || y[GUARD + M * N + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      ok = 0;
      break;
    }
  }
  if (ok && isa->fused && M > 1 && M <= CKW_GEMM_ROWS_MAX) {  // each row as if alone
    float* one = malloc(sizeof(float) * (N + 1));
    for (int64_t m = 0; m < M && ok; ++m) {
      const float *xm = x + m * K, *rm = r + m * N;
      switch (kind) {
        case PLAIN: isa->plain(one, xm, w, g_scratch, 1, N, K, N); break;
        case BIAS: isa->bias(one, xm, w, b, g_scratch, 1, N, K, N); break;
        case GELU: isa->gelu(one, xm, w, b, g_scratch, 1, N, K, N); break;
        case RESIDUAL: isa->res(one, xm, w, b, rm, g_scratch, 1, N, K, N); break;
      }
      if (memcmp(one, yo + m * N, sizeof(float) * N) != 0) {
        fprintf(stderr, "%s: row %lld differs from the same row computed alone\n", what, (long long)m);
        ok = 0;
      }
    }
    free(one);
  }
  if (ok && isa->fused && kind != GELU && M > CKW_GEMM_ROWS_MAX && M * N > 0 &&
      memcmp(yo, chain, sizeof(float) * M * N) != 0) {
    for (int64_t i = 0; i < M * N; ++i) {
      if (yo[i] != chain[i]) {
        fprintf(stderr, "%s: [%lld] = %.9g, in-order fmaf chain gives %.9g\n", what, (long long)i, yo[i],
                chain[i]);
        break;
      }
    }
    ok = 0;
  }
  if (ok && N > 1) {  // two column chunks into the rows of one y: the whole call's bits
    float* split = malloc(sizeof(float) * M * N);
    const int64_t n1 = N / 2;
    call_columns(isa, kind, split, x, w, b, r, M, 0, n1, K, N);
    call_columns(isa, kind, split, x, w, b, r, M, n1, N - n1, K, N);
    if (memcmp(split, yo, sizeof(float) * M * N) != 0) {
      fprintf(stderr, "%s: columns [0, %lld) and [%lld, %lld) computed apart differ from the whole call\n", what,
              (long long)n1, (long long)n1, (long long)N);
      ok = 0;
    }
    free(split);
  }
  free(x), free(w), free(b), free(r), free(y), free(ref), free(chain);
  return ok;
}

static void call_columns(const isa_t* isa, int kind, float* y, const float* x, const float* w, const float* b,
                         const float* r, int64_t M, int64_t n0, int64_t n, int64_t K, int64_t ldy) {
  switch (kind) {
    case PLAIN: isa->plain(y + n0, x, w + n0 * K, g_scratch, M, n, K, ldy); break;
    case BIAS: isa->bias(y + n0, x, w + n0 * K, b + n0, g_scratch, M, n, K, ldy); break;
    case GELU: isa->gelu(y + n0, x, w + n0 * K, b + n0, g_scratch, M, n, K, ldy); break;
    case RESIDUAL: isa->res(y + n0, x, w + n0 * K, b + n0, r + n0, g_scratch, M, n, K, ldy); break;
  }
}

// Scratch too small for all of W: W packed in several column blocks (of 1, 2 or 3 panels; the
// last one partial), each reused by every row block. Must give the bits of the call without
// scratch (every panel packed per row block), for every epilogue.
static int check_pack_blocks(const char* isa, void (*core)(float*, const float*, const float*, const float*,
                                                            const float*, float*, int64_t, int64_t, int64_t, int64_t,
                                                            int64_t, int)) {
  static const int64_t shapes[][3] = {{150, 200, 100}, {290, 50, 33}, {140, 97, 300}, {129, 33, 8}};
  int ok = 1;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
    float *x = malloc(sizeof(float) * M * K), *w = malloc(sizeof(float) * N * K), *b = malloc(sizeof(float) * N);
    float *r = malloc(sizeof(float) * M * N), *want = malloc(sizeof(float) * M * N), *got = malloc(sizeof(float) * M * N);
    for (int64_t i = 0; i < M * K; ++i) x[i] = frand();
    for (int64_t i = 0; i < N * K; ++i) w[i] = frand();
    for (int64_t i = 0; i < N; ++i) b[i] = frand();
    for (int64_t i = 0; i < M * N; ++i) r[i] = frand();
    for (int epi = CKW_GEMM_EPI_PLAIN; epi <= CKW_GEMM_EPI_RESIDUAL; ++epi) {
      for (int64_t panels = 1; panels <= 3; ++panels) {
        const int64_t budget = panels * 32 * K + 5;  // whole panels of 32 (avx512) or 16 (avx2) columns
        core(want, x, w, b, r, NULL, 0, M, N, K, N, epi);
        core(got, x, w, b, r, g_scratch, budget, M, N, K, N, epi);
        if (memcmp(want, got, sizeof(float) * M * N) != 0) {
          printf("FAIL %s pack blocks M=%lld N=%lld K=%lld epi=%d budget=%lld floats: bits differ from the unpacked call\n",
                 isa, (long long)M, (long long)N, (long long)K, epi, (long long)budget);
          ok = 0;
        }
      }
    }
    free(x), free(w), free(b), free(r), free(want), free(got);
  }
  printf("%s: %s column-blocked packing\n", ok ? "ok" : "FAIL", isa);
  return ok;
}

int main(void) {
  const isa_t isas[] = {
// The SIMD paths (all but scalar) are in-order FMA chains: checked bit for bit.
#define ISA(isa)                                                                                     \
  {#isa, ckw_cpu_has_##isa(), strcmp(#isa, "scalar") != 0, ckw_f32_gemm_nt__##isa, ckw_f32_gemm_nt_bias__##isa, \
   ckw_f32_gemm_nt_bias_gelu__##isa, ckw_f32_gemm_nt_bias_residual__##isa},
      CKW_F32_GEMM_NT_ISAS(ISA)
#undef ISA
      {"dispatch", 1, ckw_cpu_has_avx2(), ckw_f32_gemm_nt, ckw_f32_gemm_nt_bias, ckw_f32_gemm_nt_bias_gelu,
       ckw_f32_gemm_nt_bias_residual},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, 1, emu_plain, emu_bias, emu_gelu, emu_res},
#endif
  };
  int failed = GEMM_TEST_RUN_ALL(isas, run_case, "gemm");
  typedef void (*core_fn)(float*, const float*, const float*, const float*, const float*, float*, int64_t, int64_t,
                          int64_t, int64_t, int64_t, int);
  const struct {
    const char* isa;
    int available;
    core_fn core;
  } cores[] = {
      {"avx2", ckw_cpu_has_avx2(), ckw_f32_gemm_nt_core__avx2},
      {"avx512", ckw_cpu_has_avx512(), ckw_f32_gemm_nt_core__avx512},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_gemm_nt_core__avx512emu},
#endif
  };
  for (size_t i = 0; i < sizeof cores / sizeof cores[0]; ++i)
    if (cores[i].available) failed |= !check_pack_blocks(cores[i].isa, cores[i].core);
  return failed;
}
