// Timing helpers for the kernel benchmarks (test-only). Each benchmark is a cc_test that
// runs tiny sizes once under `bazel test` and the real table with --benchmark.
#ifndef CKW_KERNELS_COMMON_BENCH_UTIL_H_
#define CKW_KERNELS_COMMON_BENCH_UTIL_H_

#include <string.h>
#include <time.h>

// CPU time of the calling thread: the kernels are single-threaded, and on a machine shared
// with other builds this is far steadier than wall time (which counts time slices lost to
// other processes).
static inline double ckw_bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int ckw_bench_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--benchmark") == 0) return 1;
  return 0;
}

// Best-of-reps wall time of `stmt` (the minimum filters out other tenants of the machine).
#define CKW_BENCH_BEST(seconds_out, reps, stmt) \
  do {                                          \
    double best_ = 1e30;                        \
    for (int rep_ = 0; rep_ < (reps); ++rep_) { \
      double t0_ = ckw_bench_now();             \
      stmt;                                     \
      double dt_ = ckw_bench_now() - t0_;       \
      if (dt_ < best_) best_ = dt_;             \
    }                                           \
    (seconds_out) = best_;                      \
  } while (0)

#endif  // CKW_KERNELS_COMMON_BENCH_UTIL_H_
