// im2row against the definition (one element at a time): Silero VAD's encoder geometries (K 3,
// padding 1, stride 1 and 2, Tin 4, 2, 1, C 129, 128, 64), B 1 and > 1, other kernels, strides
// and paddings (padding >= K: rows all zeros), B == 0 and Tout == 0; +0.0 padding bits, nothing
// written past y, bad dims writing nothing. Then a convolution through its rows: a GEMM with the
// weight permuted to [Cout, K, Cin] gives conv1d's sums in conv1d's order.
#include <stdlib.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/layout/f32_im2row.h"
#include "kernels/layout/f32_im2row_contract.h"

_Static_assert(CKW_F32_IM2ROW_EXACT, "f32_im2row.json states an exact contract");

static int64_t out_frames(int64_t Tin, int64_t K, int64_t stride, int64_t padding) {
  const int64_t span = Tin + 2 * padding - K;
  return (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;  // floor division
}

static void check(int64_t B, int64_t Tin, int64_t C, int64_t K, int64_t stride, int64_t padding) {
  enum { GUARD = 6 };
  const int64_t Tout = out_frames(Tin, K, stride, padding);
  const int64_t n_y = B * Tout * K * C;
  float* x = malloc(sizeof(float) * (size_t)(B * Tin * C + 1));
  float* y = malloc(sizeof(float) * (size_t)(n_y + GUARD));
  for (int64_t i = 0; i < B * Tin * C; ++i) x[i] = frand();
  for (int64_t i = 0; i < n_y + GUARD; ++i) y[i] = -5.0f;
  ckw_f32_im2row(y, x, B, Tin, Tout, C, K, stride, padding);
  int64_t bad = 0;
  const float zero = 0.0f;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tout; ++t)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t c = 0; c < C; ++c) {
          const int64_t s = t * stride + k - padding;
          const float* want = s >= 0 && s < Tin ? &x[(b * Tin + s) * C + c] : &zero;
          bad += memcmp(&y[((b * Tout + t) * K + k) * C + c], want, sizeof(float)) != 0;
        }
  EXPECT(bad == 0, "B %lld Tin %lld C %lld K %lld stride %lld padding %lld: %lld wrong", (long long)B, (long long)Tin,
         (long long)C, (long long)K, (long long)stride, (long long)padding, (long long)bad);
  for (int64_t i = n_y; i < n_y + GUARD; ++i)
    EXPECT(y[i] == -5.0f, "B %lld Tin %lld: wrote past y", (long long)B, (long long)Tin);
  free(x), free(y);
}

// conv1d(x, w, padding, stride) for one sequence, token-major out [Tout, Cout], summing taps in
// (ci, k) order as the reference; the GEMM over im2row rows sums (k, ci): compared to a tolerance.
static void check_convolution(void) {
  enum { TIN = 4, CIN = 5, COUT = 3, K = 3, PAD = 1, STRIDE = 2 };
  const int64_t Tout = out_frames(TIN, K, STRIDE, PAD);
  float x[TIN * CIN], w[COUT * CIN * K], wp[COUT * K * CIN], rows[2 * K * CIN];
  for (int i = 0; i < TIN * CIN; ++i) x[i] = frand();
  for (int i = 0; i < COUT * CIN * K; ++i) w[i] = frand();
  for (int o = 0; o < COUT; ++o)  // [Cout, Cin, K] -> [Cout, K, Cin]
    for (int ci = 0; ci < CIN; ++ci)
      for (int k = 0; k < K; ++k) wp[(o * K + k) * CIN + ci] = w[(o * CIN + ci) * K + k];
  EXPECT(Tout == 2, "Tout %lld", (long long)Tout);
  ckw_f32_im2row(rows, x, 1, TIN, Tout, CIN, K, STRIDE, PAD);
  for (int64_t t = 0; t < Tout; ++t)
    for (int o = 0; o < COUT; ++o) {
      double conv = 0.0, gemm = 0.0;
      for (int ci = 0; ci < CIN; ++ci)
        for (int k = 0; k < K; ++k) {
          const int64_t s = t * STRIDE + k - PAD;
          if (s >= 0 && s < TIN) conv += (double)w[(o * CIN + ci) * K + k] * x[s * CIN + ci];
        }
      for (int j = 0; j < K * CIN; ++j) gemm += (double)wp[o * K * CIN + j] * rows[t * K * CIN + j];
      EXPECT(conv - gemm < 1e-12 && gemm - conv < 1e-12, "t %lld o %d: conv %g gemm %g", (long long)t, o, conv, gemm);
    }
}

int main(void) {
  const int64_t cases[][6] = {
      // B, Tin, C, K, stride, padding
      {1, 4, 129, 3, 1, 1}, {1, 4, 128, 3, 2, 1}, {1, 2, 64, 3, 2, 1}, {1, 1, 64, 3, 1, 1},  // Silero's encoder
      {7, 4, 129, 3, 1, 1}, {7, 4, 128, 3, 2, 1}, {7, 2, 64, 3, 2, 1}, {7, 1, 64, 3, 1, 1},  // 7 windows a call
      {1, 1, 1, 1, 1, 0},   {3, 2, 128, 3, 1, 1}, {2, 9, 5, 4, 3, 2},  {3, 2, 3, 2, 1, 2},
      {2, 5, 7, 5, 1, 0},   {2, 10, 3, 3, 4, 0},  {1, 3, 2, 1, 1, 3},  // padding >= K: zero rows
      {0, 4, 8, 3, 1, 1},   {2, 0, 4, 3, 1, 1},   {2, 1, 4, 3, 2, 0},  // B == 0; Tin == 0; Tout == 0
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const int64_t* c = cases[i];
    check(c[0], c[1], c[2], c[3], c[4], c[5]);
  }
  check_convolution();

  // Dims the map's constraints exclude write nothing.
  float x[32], y[64];
  for (int i = 0; i < 32; ++i) x[i] = (float)i;
  for (int i = 0; i < 64; ++i) y[i] = -1.0f;
  const int64_t bad[][7] = {
      // B, Tin, Tout, C, K, stride, padding
      {1, 4, 3, 2, 3, 1, 1},   // Tout != (Tin + 2 padding - K) // stride + 1
      {1, 4, 4, 2, 0, 1, 1},   // K == 0
      {1, 4, 4, 2, 3, 0, 1},   // stride == 0
      {1, 4, 6, 2, 3, 1, -1},  // padding < 0
      {-1, 4, 4, 2, 3, 1, 1},  // B < 0
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    const int64_t* d = bad[k];
    ckw_f32_im2row(y, x, d[0], d[1], d[2], d[3], d[4], d[5], d[6]);
    int wrote = 0;
    for (int i = 0; i < 64; ++i) wrote |= y[i] != -1.0f;
    EXPECT(!wrote, "bad dims %zu wrote", k);
  }
  return test_finish("f32_im2row_test");
}
