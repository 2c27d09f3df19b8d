// conv1d k3 (plain and GELU) against a direct float64 convolution under the tolerance policy
// (K = Cin * 3): stride 1 and 2, odd lengths and channel counts, the Whisper stem shapes
// scaled down, a Tout longer than torch's (reads zero padding), nothing written past y, and
// frames computed in pieces (t0 > 0, as threads split them) equal to the whole call's bits.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKW_TEST_SEED 0xA0761D6478BD642Full  // frand()
#include "kernels/common/tolerance.h"
#include "kernels/common/test_util.h"
#include "kernels/conv/f32_conv1d_k3.h"
#include "kernels/conv/f32_conv1d_k3_contract.h"

#define TOL_C CKW_F32_CONV1D_K3_TOLERANCE_C
_Static_assert(CKW_F32_CONV1D_K3_TOLERANCE_C == CKW_F32_CONV1D_K3_GELU_TOLERANCE_C, "one bound serves both maps");
#define GUARD 7
#define SENTINEL 4242.0f

static int check(int64_t Cin, int64_t Cout, int64_t Tin, int64_t stride, int64_t extra, int gelu) {
  const int64_t Tout = (Tin - 1) / stride + 1 + extra;
  float* x = malloc(sizeof(float) * (Cin * Tin + 1));
  float* w = malloc(sizeof(float) * (Cout * Cin * 3 + 1));
  float* b = malloc(sizeof(float) * (Cout + 1));
  float* y = malloc(sizeof(float) * (Tout * Cout + 2 * GUARD));
  float* ref = malloc(sizeof(float) * (Tout * Cout + 1));
  float* scratch = malloc((size_t)ckw_f32_conv1d_k3_scratch_bytes(Cin, Tout));
  for (int64_t i = 0; i < Cin * Tin; ++i) x[i] = frand();
  for (int64_t i = 0; i < Cout * Cin * 3; ++i) w[i] = frand();
  for (int64_t i = 0; i < Cout; ++i) b[i] = frand();
  for (int64_t t = 0; t < Tout; ++t) {
    for (int64_t co = 0; co < Cout; ++co) {
      double acc = b[co];
      for (int64_t ci = 0; ci < Cin; ++ci)
        for (int64_t j = 0; j < 3; ++j) {
          const int64_t p = t * stride + j - 1;
          if (p >= 0 && p < Tin) acc += (double)w[(co * Cin + ci) * 3 + j] * x[ci * Tin + p];
        }
      if (gelu) acc = 0.5 * acc * (1.0 + erf(acc / sqrt(2.0)));
      ref[t * Cout + co] = (float)acc;
    }
  }
  for (int64_t i = 0; i < Tout * Cout + 2 * GUARD; ++i) y[i] = SENTINEL;
  void (*f)(float*, const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t,
            int64_t) = gelu ? ckw_f32_conv1d_k3_gelu : ckw_f32_conv1d_k3;
  f(y + GUARD, x, w, b, scratch, Cin, Cout, Tin, 0, Tout, stride);
  char what[128];
  snprintf(what, sizeof what, "conv1d%s Cin=%lld Cout=%lld Tin=%lld stride=%lld Tout=%lld", gelu ? "_gelu" : "",
           (long long)Cin, (long long)Cout, (long long)Tin, (long long)stride, (long long)Tout);
  int ok = ckw_check_close(what, y + GUARD, ref, Tout * Cout, TOL_C, Cin * 3);
  for (int64_t i = 0; i < GUARD; ++i) {
    if (y[i] != SENTINEL || y[GUARD + Tout * Cout + i] != SENTINEL) {
      fprintf(stderr, "%s: wrote outside y\n", what);
      ok = 0;
      break;
    }
  }
  // The frames in two pieces of at least 2 (as a thread split would) give the same bits.
  for (int64_t cut = 2; cut + 2 <= Tout; cut += Tout / 3 > 1 ? Tout / 3 : 1) {
    float* part = malloc(sizeof(float) * (Tout * Cout + 1));
    f(part, x, w, b, scratch, Cin, Cout, Tin, 0, cut, stride);
    f(part + cut * Cout, x, w, b, scratch, Cin, Cout, Tin, cut, Tout - cut, stride);
    if (memcmp(part, y + GUARD, sizeof(float) * Tout * Cout) != 0) {
      fprintf(stderr, "%s: frames [0, %lld) + [%lld, Tout) differ from the whole call\n", what, (long long)cut,
              (long long)cut);
      ok = 0;
    }
    free(part);
  }
  free(x), free(w), free(b), free(y), free(ref), free(scratch);
  return ok;
}

int main(void) {
  // Cin, Cout, Tin, stride, frames beyond torch's Tout
  const int64_t cases[][5] = {{80, 48, 300, 1, 0}, {48, 48, 300, 2, 0}, {5, 7, 1, 1, 0},   {3, 17, 2, 2, 0},
                              {7, 33, 31, 2, 0},   {1, 1, 5, 1, 0},     {13, 20, 9, 2, 2}, {6, 9, 4, 1, 1},
                              {16, 24, 1160, 2, 0}};  // 580 frames: blocks of 288 and a remainder
  int fails = 0, n = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    for (int gelu = 0; gelu < 2; ++gelu) {
      fails += !check(cases[c][0], cases[c][1], cases[c][2], cases[c][3], cases[c][4], gelu);
      ++n;
    }
  }
  printf("%d/%d conv1d cases passed\n", n - fails, n);
  return fails != 0;
}
