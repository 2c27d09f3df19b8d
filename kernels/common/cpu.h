// Run-time ISA choice shared by every dispatching entry point. The AVX-512 paths need
// F/BW/DQ/VL (they are compiled with all four); AVX2 paths need AVX2 and FMA; AVX512-BF16 paths
// need AVX-512 and the BF16 extension.
#ifndef CKW_KERNELS_COMMON_CPU_H_
#define CKW_KERNELS_COMMON_CPU_H_

#include <stddef.h>

static inline int ckw_cpu_has_avx512(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

// The portable path runs everywhere (so ISA tables can call ckw_cpu_has_<isa>() for each).
static inline int ckw_cpu_has_scalar(void) { return 1; }

static inline int ckw_cpu_has_avx2(void) {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// AVX512-BF16 (vdpbf16ps, vcvtne2ps2bf16) on top of the AVX-512 baseline.
static inline int ckw_cpu_has_avx512bf16(void) {
  return ckw_cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
}

// Calls the newest path of `name` the CPU has, among the ISAs the kernel lists: ISAS is an
// X-macro that calls X(isa, name) for each of its ISAs, oldest first, starting with scalar (the
// order of ckw_kernel's `isas`); a later available ISA overrides an earlier one.
#define CKW_DISPATCH_PICK_(isa, name) \
  if (ckw_cpu_has_##isa()) pick_ = name##__##isa;
#define CKW_DISPATCH_ISAS(ISAS, name, ...)      \
  do {                                          \
    __typeof__(&name##__scalar) pick_ = NULL;   \
    ISAS(CKW_DISPATCH_PICK_, name)              \
    pick_(__VA_ARGS__);                         \
  } while (0)

// The ISA list of most kernels.
#define CKW_ISAS_AVX512(X, name) X(scalar, name) X(avx2, name) X(avx512, name)
// Calls name##__avx512, __avx2 or __scalar with the given arguments.
#define CKW_DISPATCH(name, ...) CKW_DISPATCH_ISAS(CKW_ISAS_AVX512, name, __VA_ARGS__)

#endif  // CKW_KERNELS_COMMON_CPU_H_
