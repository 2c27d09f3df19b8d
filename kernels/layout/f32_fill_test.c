// ckw_f32_fill: every element gets the value's bits (zeros, -0.0, a subnormal, infinities, a NaN
// payload) for edge lengths, nothing written past N; N <= 0 writes nothing.
#include <math.h>
#include <string.h>

#include "kernels/common/test_util.h"
#include "kernels/layout/f32_fill.h"
#include "kernels/layout/f32_fill_contract.h"

_Static_assert(CKW_F32_FILL_EXACT, "f32_fill.json states an exact contract");

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

int main(void) {
  enum { MAX = 1030, GUARD = 3 };
  static float y[MAX + GUARD];
  const float values[] = {0.0f,     -0.0f,     1.0f,
                          -1.5f,    3e38f,     from_bits(0x00000001u),
                          INFINITY, -INFINITY, from_bits(0x7fc01234u)};  // a quiet NaN with a payload
  const int64_t lengths[] = {1, 2, 3, 7, 8, 15, 16, 17, 128, 256, 1029, 1030};
  for (size_t v = 0; v < sizeof values / sizeof values[0]; ++v)
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
      const int64_t n = lengths[l];
      for (int i = 0; i < MAX + GUARD; ++i) y[i] = 42.0f;
      ckw_f32_fill(y, n, values[v]);
      int bad = 0;
      for (int64_t i = 0; i < n; ++i) bad += memcmp(&y[i], &values[v], sizeof(float)) != 0;
      EXPECT(bad == 0, "value %zu N %lld: %d elements differ", v, (long long)n, bad);
      for (int64_t i = n; i < MAX + GUARD; ++i)
        EXPECT(y[i] == 42.0f, "value %zu N %lld: wrote at %lld", v, (long long)n, (long long)i);
    }
  for (int i = 0; i < MAX + GUARD; ++i) y[i] = 42.0f;
  ckw_f32_fill(y, 0, 1.0f);
  ckw_f32_fill(y, -4, 1.0f);
  EXPECT(y[0] == 42.0f, "N <= 0 wrote");
  return test_finish("f32_fill_test");
}
