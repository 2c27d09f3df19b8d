// Layer norm, every ISA path, against a float64 two-pass reference under the tolerance
// policy; odd widths, a large row mean (catches one-pass E[x^2]-E[x]^2), in place.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0x2545F4914F6CDD1Dull  // frand()
#include "kernels/common/cpu.h"
#include "kernels/common/tolerance.h"
#include "kernels/common/test_util.h"
#include "kernels/norm/f32_layer_norm.h"
#include "kernels/norm/f32_layer_norm_contract.h"

// Built a second time with CKW_TEST_AVX512_EMULATION (the *_avx512emu_test target) to run the
// AVX-512 template through kernels/common/avx512_emulation.h on CPUs without AVX-512.
#ifdef CKW_TEST_AVX512_EMULATION
void ckw_f32_layer_norm__avx512emu(float*, const float*, const float*, const float*, int64_t, int64_t, float);
#endif

#define TOL_C CKW_F32_LAYER_NORM_TOLERANCE_C
#define GUARD 5
#define SENTINEL 999.0f

typedef void (*ln_fn)(float*, const float*, const float*, const float*, int64_t, int64_t, float);

static int check(const char* isa, ln_fn f, int64_t T, int64_t D, float offset, int in_place) {
  const int64_t n = T * D;
  const float eps = 1e-5f;
  float* x = malloc(sizeof(float) * (n + 1));
  float* g = malloc(sizeof(float) * (D + 1));
  float* b = malloc(sizeof(float) * (D + 1));
  float* y = malloc(sizeof(float) * (n + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (n + 1));
  for (int64_t i = 0; i < n; ++i) x[i] = offset + 3.0f * frand();
  for (int64_t i = 0; i < D; ++i) g[i] = 1.0f + frand(), b[i] = frand();
  for (int64_t t = 0; t < T; ++t) {
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < D; ++i) mean += x[t * D + i];
    mean /= (double)D;
    for (int64_t i = 0; i < D; ++i) var += (x[t * D + i] - mean) * (x[t * D + i] - mean);
    var /= (double)D;
    for (int64_t i = 0; i < D; ++i) ref[t * D + i] = (float)((x[t * D + i] - mean) / sqrt(var + eps) * g[i] + b[i]);
  }
  for (int64_t i = 0; i < n + 2 * GUARD; ++i) y[i] = SENTINEL;
  float* yo = y + GUARD;
  const float* src = x;
  if (in_place) memcpy(yo, x, sizeof(float) * n), src = yo;
  f(yo, src, g, b, T, D, eps);
  char what[128];
  snprintf(what, sizeof what, "%s layer_norm T=%lld D=%lld offset=%g%s", isa, (long long)T, (long long)D, offset,
           in_place ? " in-place" : "");
  int ok = ckw_check_close(what, yo, ref, n, TOL_C, D);
  for (int64_t i = 0; i < GUARD; ++i) {
    if (y[i] != SENTINEL || y[GUARD + n + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      ok = 0;
      break;
    }
  }
  free(x), free(g), free(b), free(y), free(ref);
  return ok;
}

int main(void) {
  struct {
    const char* isa;
    int ok;
    ln_fn f;
  } isas[] = {
#define ISA(isa) {#isa, ckw_cpu_has_##isa(), ckw_f32_layer_norm__##isa},
      CKW_F32_LAYER_NORM_ISAS(ISA)
#undef ISA
          {"dispatch", 1, ckw_f32_layer_norm},
#ifdef CKW_TEST_AVX512_EMULATION
      {"avx512-emulated", 1, ckw_f32_layer_norm__avx512emu},
#endif
  };
  const int64_t shapes[][2] = {{1, 1}, {1, 7}, {3, 17}, {2, 384}, {5, 37}, {7, 512}, {1, 1000}, {0, 16}};
  int fails = 0, n = 0;
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
    if (!test_isa_runs(isas[i].isa, isas[i].ok)) continue;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
      for (int ip = 0; ip < 2; ++ip) {
        fails += !check(isas[i].isa, isas[i].f, shapes[s][0], shapes[s][1], 0.0f, ip);
        fails += !check(isas[i].isa, isas[i].f, shapes[s][0], shapes[s][1], 300.0f, ip);
        n += 2;
      }
    }
  }
  printf("%d/%d layer_norm cases passed\n", n - fails, n);
  return fails != 0;
}
