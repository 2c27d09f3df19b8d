// ckw_f32_pad_or_truncate against the obvious loop: shorter, equal, longer and empty
// inputs, never writing past n_out.
#include "kernels/audio/f32_pad_or_truncate.h"

#include <string.h>

#include "kernels/common/test_util.h"

int main(void) {
  enum { MAX = 5000 };
  static float x[MAX], y[MAX + 1];
  uint64_t rng = 5;
  for (int i = 0; i < MAX; ++i) x[i] = test_rng_float(&rng);
  const int64_t sizes[][2] = {{0, 0},     {0, 7},       {7, 0},    {1, 1},    {160, 480},
                              {480, 160}, {4999, 4999}, {1, 4999}, {4999, 3}, {-3, 5}};
  for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c) {
    const int64_t n_in = sizes[c][0], n_out = sizes[c][1];
    for (int i = 0; i <= MAX; ++i) y[i] = -42.0f;
    ckw_f32_pad_or_truncate(y, n_out, x, n_in);
    int bad = 0;
    for (int64_t i = 0; i < n_out; ++i) {
      float want = i < n_in ? x[i] : 0.0f;
      if (memcmp(&y[i], &want, sizeof want) != 0) ++bad;  // +0.0f padding, not -0.0f
    }
    EXPECT(bad == 0, "n_in %lld n_out %lld: %d wrong samples", (long long)n_in, (long long)n_out, bad);
    EXPECT(y[n_out < 0 ? 0 : n_out] == -42.0f, "n_in %lld n_out %lld: wrote past the end", (long long)n_in,
           (long long)n_out);
  }
  return test_finish("f32_pad_or_truncate_test");
}
