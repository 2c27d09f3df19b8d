// gelu, sigmoid, softmax, add and relu, every ISA path, against float64 references under the
// tolerance policy (c from the kernel maps; add and relu bit for bit); odd lengths, in-place calls,
// special values (signed zeros, NaN, infinities, saturating sigmoid arguments), and nothing written
// past y.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0x9E3779B97F4A7C15ull  // frand()
#include "kernels/common/cpu.h"
#include "kernels/activation/f32_add.h"
#include "kernels/activation/f32_gelu.h"
#include "kernels/activation/f32_relu.h"
#include "kernels/activation/f32_sigmoid.h"
#include "kernels/activation/f32_softmax.h"
#include "kernels/activation/f32_activation_contract.h"
#include "kernels/common/tolerance.h"
#include "kernels/common/test_util.h"

// Built a second time with CKW_TEST_AVX512_EMULATION (the *_avx512emu_test target) to run the
// AVX-512 template through kernels/common/avx512_emulation.h on CPUs without AVX-512.
#ifdef CKW_TEST_AVX512_EMULATION
void ckw_f32_gelu__avx512emu(float*, const float*, int64_t, int64_t);
void ckw_f32_softmax__avx512emu(float*, const float*, int64_t, int64_t);
void ckw_f32_relu__avx512emu(float*, const float*, int64_t, int64_t);
void ckw_f32_sigmoid__avx512emu(float*, const float*, int64_t, int64_t);
void ckw_f32_add__avx512emu(float*, const float*, const float*, int64_t, int64_t);
#endif

#define GELU_C CKW_F32_GELU_TOLERANCE_C
#define SOFTMAX_C CKW_F32_SOFTMAX_TOLERANCE_C
#define SIGMOID_C CKW_F32_SIGMOID_TOLERANCE_C
_Static_assert(CKW_F32_RELU_EXACT, "f32_relu.json states an exact contract");
#define GUARD 9
#define SENTINEL -777.0f

typedef void (*unary_fn)(float*, const float*, int64_t, int64_t);
typedef void (*binary_fn)(float*, const float*, const float*, int64_t, int64_t);
typedef struct {
  const char* isa;
  int available;
  unary_fn gelu, softmax;
  binary_fn add;
  unary_fn relu, sigmoid;
} isa_t;

static int guards_ok(const char* what, const float* y, int64_t n) {
  for (int64_t i = 0; i < GUARD; ++i) {
    if (y[i] != SENTINEL || y[GUARD + n + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      return 0;
    }
  }
  return 1;
}

static int check_unary(const isa_t* isa, const char* op, int64_t T, int64_t D, float spread, int in_place) {
  const int64_t n = T * D;
  float* x = malloc(sizeof(float) * (n + 1));
  float* y = malloc(sizeof(float) * (n + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (n + 1));
  for (int64_t i = 0; i < n; ++i) x[i] = spread * frand();
  // Values on both sides of the erf/erfc switch (|x| = 1.25 sqrt 2) and the far tails.
  const float special[] = {0.0f, -0.0f, 1.7677669f, -1.7677669f, 1.7677670f, -5.65685f, -9.0f, 9.0f, -30.0f, 1e-20f};
  if (op[0] == 'g')
    for (int64_t i = 0; i < n && i < 10; ++i) x[i] = special[i];
  // Sigmoid: saturation on both sides (+-100 gives 1 and 0, no NaN), exp's clamp at ln(FLT_MIN),
  // and both sides of 0.
  const float sig_special[] = {100.0f, -100.0f, 88.0f, -88.0f, -87.3f,   17.0f,
                               -17.0f, 0.0f,    -0.0f, 1e-20f, INFINITY, -INFINITY};
  if (op[0] == 's' && op[1] == 'i')
    for (int64_t i = 0; i < n && i < 12; ++i) x[i] = sig_special[i];
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  int64_t k = 1;
  if (op[0] == 'g') {
    for (int64_t i = 0; i < n; ++i) ref[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))));
  } else if (op[1] == 'i') {
    for (int64_t i = 0; i < n; ++i) ref[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
  } else {
    k = D;
    for (int64_t t = 0; t < T; ++t) {
      double mx = -INFINITY, s = 0.0;
      for (int64_t i = 0; i < D; ++i) mx = fmax(mx, x[t * D + i]);
      for (int64_t i = 0; i < D; ++i) s += exp(x[t * D + i] - mx);
      for (int64_t i = 0; i < D; ++i) ref[t * D + i] = (float)(exp(x[t * D + i] - mx) / s);
    }
  }
  const float* src = x;
  if (in_place) {
    memcpy(yo, x, sizeof(float) * n);
    src = yo;
  }
  (op[0] == 'g' ? isa->gelu : op[1] == 'i' ? isa->sigmoid : isa->softmax)(yo, src, T, D);
  char what[128];
  snprintf(what, sizeof what, "%s %s T=%lld D=%lld%s", isa->isa, op, (long long)T, (long long)D,
           in_place ? " in-place" : "");
  int ok = ckw_check_close(what, yo, ref, n,
                           op[0] == 'g'   ? GELU_C
                           : op[1] == 'i' ? SIGMOID_C
                                          : SOFTMAX_C,
                           k) &&
           guards_ok(what, y, n);
  free(x), free(y), free(ref);
  return ok;
}

static int check_add(const isa_t* isa, int64_t T, int64_t D) {
  const int64_t n = T * D;
  float* a = malloc(sizeof(float) * (n + 1));
  float* b = malloc(sizeof(float) * (n + 1));
  float* y = malloc(sizeof(float) * (n + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (n + 1));
  for (int64_t i = 0; i < n; ++i) a[i] = frand(), b[i] = frand(), ref[i] = a[i] + b[i];
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) y[i] = SENTINEL;
  isa->add(y + GUARD, a, b, T, D);
  char what[96];
  snprintf(what, sizeof what, "%s add T=%lld D=%lld", isa->isa, (long long)T, (long long)D);
  // Exact: one rounding, the same as the reference's float addition (tolerance_c 1 in the map,
  // met with zero error).
  _Static_assert(CKW_F32_ADD_TOLERANCE_C >= 0.0, "f32_add.json states a tolerance");
  int ok = guards_ok(what, y, n) && (n == 0 || memcmp(y + GUARD, ref, sizeof(float) * n) == 0);
  if (!ok) fprintf(stderr, "%s: mismatch\n", what);
  free(a), free(b), free(y), free(ref);
  return ok;
}

// relu against x > 0 ? x : +0.0f bit for bit: random values and the special ones (signed zeros,
// NaNs of both signs and with payloads, infinities, subnormals).
static int check_relu(const isa_t* isa, int64_t T, int64_t D, int in_place) {
  const int64_t n = T * D;
  float* x = malloc(sizeof(float) * (n + 1));
  float* y = malloc(sizeof(float) * (n + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (n + 1));
  const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7FC00000u, 0xFFC00000u, 0x7FA00001u,
                              0xFF812345u, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x80000001u,
                              0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu};
  for (int64_t i = 0; i < n; ++i) x[i] = 4.0f * frand();
  for (int64_t i = 0; i < n && i < (int64_t)(sizeof special / sizeof special[0]); ++i)
    memcpy(&x[i], &special[i], sizeof(float));
  for (int64_t i = 0; i < n; ++i) ref[i] = x[i] > 0.0f ? x[i] : 0.0f;
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  const float* src = x;
  if (in_place) memcpy(yo, x, sizeof(float) * n), src = yo;
  isa->relu(yo, src, T, D);
  char what[96];
  snprintf(what, sizeof what, "%s relu T=%lld D=%lld%s", isa->isa, (long long)T, (long long)D,
           in_place ? " in-place" : "");
  int ok = guards_ok(what, y, n) && (n == 0 || memcmp(yo, ref, sizeof(float) * n) == 0);
  if (!ok) fprintf(stderr, "%s: not bit-exact\n", what);
  free(x), free(y), free(ref);
  return ok;
}

// Sigmoid over a dense sweep of [-100, 100] (printing the worst error in FLT_EPSILON units, the
// figure the map's tolerance_c is set from) and NaN in, NaN out.
static int check_sigmoid_sweep(const isa_t* isa) {
  const int64_t n = 400001;
  float* x = malloc(sizeof(float) * n);
  float* y = malloc(sizeof(float) * n);
  float* ref = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i) x[i] = (float)(-100.0 + 200.0 * (double)i / (double)(n - 1));
  for (int64_t i = 0; i < n; ++i) ref[i] = (float)(1.0 / (1.0 + exp(-(double)x[i])));
  isa->sigmoid(y, x, 1, n);
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) worst = fmax(worst, fabs((double)y[i] - 1.0 / (1.0 + exp(-(double)x[i]))));
  printf("%s sigmoid: max abs err %.3f FLT_EPSILON over [-100, 100]\n", isa->isa, worst / FLT_EPSILON);
  char what[64];
  snprintf(what, sizeof what, "%s sigmoid sweep", isa->isa);
  int ok = ckw_check_close(what, y, ref, n, SIGMOID_C, 1);
  const float nan_in[3] = {NAN, -NAN, 1.0f};
  float nan_out[3];
  isa->sigmoid(nan_out, nan_in, 1, 3);
  if (!isnan(nan_out[0]) || !isnan(nan_out[1]) || isnan(nan_out[2])) {
    fprintf(stderr, "%s sigmoid: NaN in does not give NaN out\n", isa->isa);
    ok = 0;
  }
  free(x), free(y), free(ref);
  return ok;
}

int main(void) {
  const isa_t isas[] = {
#define ISA(isa)           \
  {#isa,                   \
   ckw_cpu_has_##isa(),    \
   ckw_f32_gelu__##isa,    \
   ckw_f32_softmax__##isa, \
   ckw_f32_add__##isa,     \
   ckw_f32_relu__##isa,    \
   ckw_f32_sigmoid__##isa},
      CKW_F32_ACTIVATION_ISAS(ISA)
#undef ISA
          {"dispatch", 1, ckw_f32_gelu, ckw_f32_softmax, ckw_f32_add, ckw_f32_relu, ckw_f32_sigmoid},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_gelu__avx512emu, ckw_f32_softmax__avx512emu, ckw_f32_add__avx512emu,
       ckw_f32_relu__avx512emu, ckw_f32_sigmoid__avx512emu},
#endif
  };
  const int64_t shapes[][2] = {{1, 1}, {1, 7}, {3, 17}, {2, 64}, {5, 37}, {1, 1500}, {4, 384}, {0, 8}};
  int fails = 0, n = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!test_isa_runs(isas[i].isa, isas[i].available)) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
      const int64_t T = shapes[s][0], D = shapes[s][1];
      for (int ip = 0; ip < 2; ++ip) {
        fails += !check_unary(&isas[i], "gelu", T, D, 12.0f, ip);
        fails += !check_unary(&isas[i], "softmax", T, D, 30.0f, ip);
        fails += !check_unary(&isas[i], "sigmoid", T, D, 30.0f, ip);
        fails += !check_relu(&isas[i], T, D, ip);
        n += 4;
      }
      fails += !check_add(&isas[i], T, D);
      ++n;
    }
    fails += !check_sigmoid_sweep(&isas[i]);
    ++n;
  }
  printf("%d/%d activation cases passed\n", n - fails, n);
  return fails != 0;
}
