// gelu, softmax and add, every ISA path, against float64 references under the tolerance
// policy (c from the kernel maps); odd lengths, in-place calls, and nothing written past y.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0x9E3779B97F4A7C15ull  // frand()
#include "kernels/common/cpu.h"
#include "kernels/activation/f32_add.h"
#include "kernels/activation/f32_gelu.h"
#include "kernels/activation/f32_softmax.h"
#include "kernels/activation/f32_activation_contract.h"
#include "kernels/common/tolerance.h"
#include "kernels/common/test_util.h"

// Built a second time with CKW_TEST_AVX512_EMULATION (the *_avx512emu_test target) to run the
// AVX-512 template through kernels/common/avx512_emulation.h on CPUs without AVX-512.
#ifdef CKW_TEST_AVX512_EMULATION
void ckw_f32_gelu__avx512emu(float*, const float*, int64_t, int64_t);
void ckw_f32_softmax__avx512emu(float*, const float*, int64_t, int64_t);
void ckw_f32_add__avx512emu(float*, const float*, const float*, int64_t, int64_t);
#endif

#define GELU_C CKW_F32_GELU_TOLERANCE_C
#define SOFTMAX_C CKW_F32_SOFTMAX_TOLERANCE_C
#define GUARD 9
#define SENTINEL -777.0f

typedef void (*unary_fn)(float*, const float*, int64_t, int64_t);
typedef void (*binary_fn)(float*, const float*, const float*, int64_t, int64_t);
typedef struct {
  const char* isa;
  int available;
  unary_fn gelu, softmax;
  binary_fn add;
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
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  int64_t k = 1;
  if (op[0] == 'g') {
    for (int64_t i = 0; i < n; ++i) ref[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))));
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
  (op[0] == 'g' ? isa->gelu : isa->softmax)(yo, src, T, D);
  char what[128];
  snprintf(what, sizeof what, "%s %s T=%lld D=%lld%s", isa->isa, op, (long long)T, (long long)D,
           in_place ? " in-place" : "");
  int ok = ckw_check_close(what, yo, ref, n, op[0] == 'g' ? GELU_C : SOFTMAX_C, k) && guards_ok(what, y, n);
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

int main(void) {
  const isa_t isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_gelu__##isa, ckw_f32_softmax__##isa, ckw_f32_add__##isa},
      CKW_F32_ACTIVATION_ISAS(ISA)
#undef ISA
      {"dispatch", 1, ckw_f32_gelu, ckw_f32_softmax, ckw_f32_add},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_gelu__avx512emu, ckw_f32_softmax__avx512emu, ckw_f32_add__avx512emu},
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
        n += 2;
      }
      fails += !check_add(&isas[i], T, D);
      ++n;
    }
  }
  printf("%d/%d activation cases passed\n", n - fails, n);
  return fails != 0;
}
