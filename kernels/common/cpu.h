// Run-time ISA choice shared by every dispatching entry point. The AVX-512 paths need
// F/BW/DQ/VL (they are compiled with all four); AVX2 paths need AVX2 and FMA.
#ifndef CKW_KERNELS_COMMON_CPU_H_
#define CKW_KERNELS_COMMON_CPU_H_

static inline int ckw_cpu_has_avx512(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

// The portable path runs everywhere (so ISA tables can call ckw_cpu_has_<isa>() for each).
static inline int ckw_cpu_has_scalar(void) { return 1; }

static inline int ckw_cpu_has_avx2(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// Calls name##__avx512, __avx2 or __scalar with the given arguments.
#define CKW_DISPATCH(name, ...)      \
  do {                               \
    if (ckw_cpu_has_avx512()) {      \
      name##__avx512(__VA_ARGS__);   \
    } else if (ckw_cpu_has_avx2()) { \
      name##__avx2(__VA_ARGS__);     \
    } else {                         \
      name##__scalar(__VA_ARGS__);   \
    }                                \
  } while (0)

#endif  // CKW_KERNELS_COMMON_CPU_H_
