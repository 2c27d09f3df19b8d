// Small helpers shared by the kernel cc_tests: a deterministic RNG and a failure counter.
#ifndef CKW_KERNELS_COMMON_TEST_UTIL_H_
#define CKW_KERNELS_COMMON_TEST_UTIL_H_

#include <stdint.h>
#include <stdio.h>

static int g_failures = 0;

#define EXPECT(cond, ...)                                               \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                     \
      fputc('\n', stderr);                                              \
      ++g_failures;                                                     \
    }                                                                   \
  } while (0)

// xorshift64*: reproducible across platforms.
static inline uint64_t test_rng_next(uint64_t* s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

// Uniform in [-1, 1).
static inline float test_rng_float(uint64_t* s) {
  return (float)((double)(test_rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static inline int test_finish(const char* name) {
  if (g_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, g_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

#endif  // CKW_KERNELS_COMMON_TEST_UTIL_H_
