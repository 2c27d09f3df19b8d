// Checks every i8w_gemm_nt* kernel and ISA path (numerics: kernels/common/i8w_gemm_nt_core.h):
// - the quantizer's rounding (ties to even), clamp and out-of-range values against hand values;
// - the scalar path against a float64 reference of the stated math (x quantized in f32, exact int
//   sums, the epilogue in float64) under the maps' tolerance;
// - every other path (the kernels' entry points per ISA, the dispatching ones, and in the
//   *_avx512emu test the avxvnni, avx512vnni and amxint8 paths on emulated intrinsics) bit for bit
//   against the scalar path, so the emulated paths equal the real ones where the CPU has them;
// - per call: nothing written outside y nor past the scratch the kernel asks for (given at an odd
//   address), two row chunks, two column chunks and the first and last rows alone giving the whole
//   call's bits, and the residual in place;
// over shapes around the paths' edges (dot products up to CKW_I8W_DOT_ROWS rows, packed W, AMX
// above CKW_I8W_AMX_ROWS, K tails of 4, 32 and 64 bytes, N tails of 8, 16 and 64 columns) with
// special rows: all zero, halves that tie, values so small that 127 / max overflows, one huge.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/cpu.h"
#include "kernels/common/i8w_gemm_nt_core.h"
#include "kernels/common/test_util.h"
#include "kernels/common/tolerance.h"
#include "kernels/gemm/i8w_gemm_nt.h"
#include "kernels/gemm/i8w_gemm_nt_contract.h"

_Static_assert(CKW_I8W_GEMM_NT_BIAS_TOLERANCE_C == CKW_I8W_GEMM_NT_TOLERANCE_C &&
                   CKW_I8W_GEMM_NT_BIAS_GELU_TOLERANCE_C == CKW_I8W_GEMM_NT_TOLERANCE_C &&
                   CKW_I8W_GEMM_NT_BIAS_RESIDUAL_TOLERANCE_C == CKW_I8W_GEMM_NT_TOLERANCE_C,
               "the i8w gemm maps state different tolerances");

enum { PLAIN, BIAS, GELU, RESIDUAL, IN_PLACE, NKIND };
static const char* kKind[NKIND] = {"logits(nt)", "linear", "linear_gelu", "linear_residual", "residual in place"};
static const int kEpi[NKIND] = {CKW_GEMM_EPI_PLAIN, CKW_GEMM_EPI_PLAIN, CKW_GEMM_EPI_GELU, CKW_GEMM_EPI_RESIDUAL,
                                CKW_GEMM_EPI_RESIDUAL};
#define GUARD 64
#define SENTINEL 12345.0f

typedef CKW_I8W_GEMM_NT_CORE_DECLARE((*core_fn));
typedef void (*plain_fn)(float*, const float*, const int8_t*, const float*, void*, int64_t, int64_t, int64_t, int64_t);
typedef void (*bias_fn)(float*, const float*, const int8_t*, const float*, const float*, void*, int64_t, int64_t,
                        int64_t, int64_t);
typedef void (*res_fn)(float*, const float*, const int8_t*, const float*, const float*, const float*, void*, int64_t,
                       int64_t, int64_t, int64_t);

typedef struct {
  const char* name;
  int available;
  core_fn core;  // called with the epilogue when the row has no kernel entries
  plain_fn plain;
  bias_fn bias, gelu;
  res_fn res;
} path;

typedef struct {
  int64_t M, N, K;
  float *x, *b, *r, *w_scale;
  int8_t* w;
} problem;

// One call of `kind` on rows [m0, m0 + M) and columns [n0, n0 + N) of p into y (rows p->N apart),
// with a scratch of exactly the bytes asked for at an odd address; 0 when something past it changed.
static int call(const path* pa, int kind, float* y, const problem* p, int64_t m0, int64_t M, int64_t n0, int64_t N) {
  const int64_t bytes = ckw_i8w_gemm_nt_scratch_bytes(M, p->K), shift = 1 + (M + N) % 61;
  unsigned char* mem = malloc((size_t)(shift + bytes + GUARD));
  memset(mem, 0xa5, (size_t)(shift + bytes + GUARD));
  void* scratch = mem + shift;
  const float* x = p->x + m0 * p->K;
  const int8_t* w = p->w + n0 * p->K;
  const float *ws = p->w_scale + n0, *b = p->b + n0, *r = kind == IN_PLACE ? y : p->r + m0 * p->N + n0;
  const int64_t K = p->K, ld = p->N;
  if (!pa->plain) {
    pa->core(y, x, w, ws, kind == PLAIN ? NULL : b, r, scratch, M, N, K, ld, kEpi[kind]);
  } else {
    switch (kind) {
      case PLAIN:
        pa->plain(y, x, w, ws, scratch, M, N, K, ld);
        break;
      case BIAS:
        pa->bias(y, x, w, ws, b, scratch, M, N, K, ld);
        break;
      case GELU:
        pa->gelu(y, x, w, ws, b, scratch, M, N, K, ld);
        break;
      default:
        pa->res(y, x, w, ws, b, r, scratch, M, N, K, ld);
        break;
    }
  }
  int ok = 1;
  for (int64_t i = 0; i < GUARD; ++i) ok &= mem[shift + bytes + i] == 0xa5;
  free(mem);
  return ok;
}

// float64 reference: x quantized as stated (ckw_i8w_quantize_row), exact sums, the epilogue in float64.
static void reference(int kind, double* ref, const problem* p) {
  const int64_t K = p->K, kp = ckw_i8w_kp_(K);
  int8_t* q = malloc((size_t)kp + 1);
  for (int64_t m = 0; m < p->M; ++m) {
    const double s = ckw_i8w_quantize_row(q, p->x + m * K, K, kp);
    for (int64_t n = 0; n < p->N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (int64_t)q[k] * p->w[n * K + k];
      double v = (double)acc * s * p->w_scale[n];
      if (kind != PLAIN) v += p->b[n];
      if (kind == GELU) v = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
      if (kind >= RESIDUAL) v += p->r[m * p->N + n];
      ref[m * p->N + n] = v;
    }
  }
  free(q);
}

static void fill(problem* p, uint64_t seed) {
  const int64_t M = p->M, N = p->N, K = p->K;
  p->x = malloc(sizeof(float) * (M * K + 1)), p->w = malloc((size_t)(N * K + 1));
  p->b = malloc(sizeof(float) * (N + 1)), p->w_scale = malloc(sizeof(float) * (N + 1));
  p->r = malloc(sizeof(float) * (M * N + 1));
  for (int64_t i = 0; i < M * K; ++i) {
    const int64_t m = i / K, k = i % K;
    p->x[i] = m % 5 == 1                 ? 0.0f                                          // a zero row
              : m % 5 == 2               ? (k ? (float)(k % 255 - 127) * 0.5f : 127.0f)  // inv = 1: halves tie
              : m % 5 == 3               ? 1e-37f * test_rng_float(&seed)                // 127 / max overflows
              : m % 7 == 4 && k == K / 2 ? 3e6f                                          // one huge value
                                         : 4.0f * test_rng_float(&seed);
  }
  for (int64_t i = 0; i < N * K; ++i) {
    const uint64_t v = test_rng_next(&seed);
    p->w[i] = (int8_t)(v % 4 == 0 ? (v & 8 ? 127 : -127) : (int64_t)(v >> 8) % 255 - 127);
  }
  for (int64_t i = 0; i < N; ++i) p->b[i] = test_rng_float(&seed), p->w_scale[i] = 0.02f * test_rng_float(&seed);
  for (int64_t i = 0; i < M * N; ++i) p->r[i] = 4.0f * test_rng_float(&seed);
}

static const int64_t kShapes[][3] = {
    {1, 1, 1},    {1, 37, 19},   {1, 384, 384},  {2, 70, 513},  {3, 21, 47},    {4, 16, 64},  {4, 37, 100},
    {5, 3, 0},    {0, 5, 5},     {3, 0, 4},      {5, 385, 384}, {6, 16, 256},   {8, 32, 257}, {9, 47, 600},
    {13, 17, 19}, {16, 33, 65},  {17, 40, 64},   {33, 65, 257}, {40, 70, 0},    {41, 70, 64}, {7, 33, 1},
    {1, 13, 31},  {150, 35, 70}, {64, 129, 130}, {2, 9, 5120},  {150, 600, 300}};

// Every check of one path on one shape and kind; scalar against the float64 reference, the others
// against scalar's bits (want).
static int run(const path* pa, const problem* p, int kind, const float* want) {
  const int64_t M = p->M, N = p->N, n = M * N;
  char what[160];
  snprintf(what, sizeof what, "%s %s M=%lld N=%lld K=%lld", pa->name, kKind[kind], (long long)M, (long long)N,
           (long long)p->K);
  float* buf = malloc(sizeof(float) * (n + 2 * GUARD));
  float* other = malloc(sizeof(float) * (n + 1));
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) buf[i] = SENTINEL;
  float* y = buf + GUARD;
  if (kind == IN_PLACE) memcpy(y, p->r, sizeof(float) * n);
  int ok = call(pa, kind, y, p, 0, M, 0, N);
  if (!ok) fprintf(stderr, "%s: wrote past the scratch it asks for\n", what);
  for (int64_t i = 0; i < GUARD; ++i)
    if (buf[i] != SENTINEL || y[n + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      ok = 0;
      break;
    }
  if (!want) {
    double* ref = malloc(sizeof(double) * (n + 1));
    float* reff = malloc(sizeof(float) * (n + 1));
    reference(kind, ref, p);
    for (int64_t i = 0; i < n; ++i) reff[i] = (float)ref[i];
    for (int64_t m = 0; m < M; ++m)  // row by row: each row has its own scale
      ok &= ckw_check_close(what, y + m * N, reff + m * N, N, CKW_I8W_GEMM_NT_TOLERANCE_C, p->K);
    free(ref), free(reff);
  } else if (memcmp(y, want, sizeof(float) * n) != 0) {
    int64_t i = 0;
    while (memcmp(&y[i], &want[i], sizeof(float)) == 0) ++i;
    fprintf(stderr, "%s: [%lld] = %.9g, the scalar path gives %.9g\n", what, (long long)i, y[i], want[i]);
    ok = 0;
  }
  // Splits and single rows: the same bits as the whole call. In place, the rows a check computes start as r.
#define SAME_(desc, all, ...)                                                         \
  do {                                                                                \
    memcpy(other, y, sizeof(float) * n);                                              \
    if (kind == IN_PLACE) {                                                           \
      memcpy(other, p->r, sizeof(float) * ((all) ? n : N));                           \
      if (!(all)) memcpy(other + (M - 1) * N, p->r + (M - 1) * N, sizeof(float) * N); \
    }                                                                                 \
    __VA_ARGS__;                                                                      \
    if (ok && memcmp(other, y, sizeof(float) * n) != 0) {                             \
      fprintf(stderr, "%s: %s differ from the whole call\n", what, desc);             \
      ok = 0;                                                                         \
    }                                                                                 \
  } while (0)
  const int64_t m1 = M / 3 + 1, n1 = N / 2;
  if (M > 1)
    SAME_("two row chunks", 1,
          ok &= call(pa, kind, other, p, 0, m1, 0, N) && call(pa, kind, other + m1 * N, p, m1, M - m1, 0, N));
  if (N > 1)
    SAME_("two column chunks", 1,
          ok &= call(pa, kind, other, p, 0, M, 0, n1) && call(pa, kind, other + n1, p, 0, M, n1, N - n1));
  if (M > 1)
    SAME_("the first and last rows alone", 0,
          ok &= call(pa, kind, other, p, 0, 1, 0, N) && call(pa, kind, other + (M - 1) * N, p, M - 1, 1, 0, N));
#undef SAME_
  free(buf), free(other);
  return ok;
}

static void check_quantize1(void) {
  static const struct {
    float v;
    int want;
  } cases[] = {{0.5f, 0},        {1.5f, 2},         {2.5f, 2},     {-0.5f, 0},          {-2.5f, -2},
               {126.5f, 126},    {127.49f, 127},    {200.0f, 127}, {-1e10f, -127},      {2147483648.0f, -127},
               {INFINITY, -127}, {-INFINITY, -127}, {NAN, -127},   {2147483520.0f, 127}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    EXPECT(ckw_i8w_quantize1(cases[i].v) == cases[i].want, "quantize1(%g) = %d, want %d", cases[i].v,
           ckw_i8w_quantize1(cases[i].v), cases[i].want);
}

int main(void) {
  check_quantize1();
  const path paths[] = {
#define ISA(I)                     \
  {#I,                             \
   ckw_cpu_has_##I(),              \
   ckw_i8w_gemm_nt_core__##I,      \
   ckw_i8w_gemm_nt__##I,           \
   ckw_i8w_gemm_nt_bias__##I,      \
   ckw_i8w_gemm_nt_bias_gelu__##I, \
   ckw_i8w_gemm_nt_bias_residual__##I},
      CKW_I8W_GEMM_NT_ISAS(ISA)
#undef ISA
          {"dispatch", 1, ckw_i8w_gemm_nt_core, ckw_i8w_gemm_nt, ckw_i8w_gemm_nt_bias, ckw_i8w_gemm_nt_bias_gelu,
           ckw_i8w_gemm_nt_bias_residual},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avxvnni-emulated", 1, ckw_i8w_gemm_nt_core__avxvnniemu, NULL, NULL, NULL, NULL},
      {"avx512vnni-emulated", 1, ckw_i8w_gemm_nt_core__avx512vnniemu, NULL, NULL, NULL, NULL},
      {"amxint8-emulated", 1, ckw_i8w_gemm_nt_core__amxint8emu, NULL, NULL, NULL, NULL},
#endif
  };
  const size_t npaths = sizeof paths / sizeof paths[0];
  for (size_t i = 0; i < npaths; ++i) test_isa_runs(paths[i].name, paths[i].available);
  int checked = 0;
  for (size_t s = 0; s < sizeof kShapes / sizeof kShapes[0]; ++s) {
    problem p = {kShapes[s][0], kShapes[s][1], kShapes[s][2], NULL, NULL, NULL, NULL, NULL};
    fill(&p, 0x9e3779b97f4a7c15ull + s);
    const int64_t n = p.M * p.N;
    for (int kind = 0; kind < NKIND; ++kind) {
      float* want = malloc(sizeof(float) * (n + 1));
      if (kind == IN_PLACE) memcpy(want, p.r, sizeof(float) * n);
      call(&paths[0], kind, want, &p, 0, p.M, 0, p.N);  // scalar: the bits every path must give
      for (size_t i = 0; i < npaths; ++i) {
        if (!paths[i].available) continue;
#ifdef CKW_TEST_AVX512_EMULATION
        // Emulated intrinsics at -Og are ~100x slower: the largest shape runs on the real paths only.
        if (!paths[i].plain && n * p.K > 10000000) continue;
#endif
        ++checked;
        g_failures += !run(&paths[i], &p, kind, i ? want : NULL);
      }
      free(want);
    }
    free(p.x), free(p.w), free(p.b), free(p.w_scale), free(p.r);
  }
  printf("%d path x shape x kind cases run\n", checked);
  return test_finish("i8w_gemm_nt_test");
}
