// The shared tolerance policy accepts rounding-level error and rejects anything larger,
// including NaN, which a naive `err > bound` check would let through.
#include "kernels/common/tolerance.h"

#include <stdio.h>

static int failures = 0;

static void expect(int cond, const char* what) {
  if (!cond) {
    fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

int main(void) {
  float ref[4] = {1.0f, -2.0f, 3.0f, 0.5f};
  float got[4] = {1.0f, -2.0f, 3.0f, 0.5f};
  expect(ckw_check_close("exact", got, ref, 4, 1.0, 16), "identical arrays pass");

  // One ulp at 3.0 is 2.4e-7; bound with c=1, K=16 is 4 * eps * 3 = 1.4e-6.
  got[2] = nextafterf(3.0f, 4.0f);
  expect(ckw_check_close("one ulp", got, ref, 4, 1.0, 16), "one ulp passes");

  got[2] = 3.0f + 1e-3f;
  expect(!ckw_check_close("1e-3 off", got, ref, 4, 1.0, 16), "1e-3 error fails");

  got[2] = NAN;
  expect(!ckw_check_close("nan", got, ref, 4, 1000.0, 16), "NaN fails");

  // The bound grows with sqrt(K) and with c.
  expect(ckw_tolerance_bound(1.0, 64, 1.0) == 2.0 * ckw_tolerance_bound(1.0, 16, 1.0), "sqrt(K)");
  expect(ckw_tolerance_bound(4.0, 16, 1.0) == 4.0 * ckw_tolerance_bound(1.0, 16, 1.0), "c");
  // Small references use the floor.
  expect(ckw_tolerance_bound(1.0, 1, 1e-9) == ckw_tolerance_bound(1.0, 1, 1.0), "floor");

  if (failures) return 1;
  printf("tolerance_test: 7 passed, 0 failed\n");
  return 0;
}
