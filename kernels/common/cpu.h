// Run-time ISA choice shared by every dispatching entry point. The AVX-512 paths need
// F/BW/DQ/VL and F16C (they are compiled with them); AVX2 paths need AVX2, FMA and F16C (every
// AVX2 and AVX-512 CPU has F16C: the f16w GEMM widens with vcvtph2ps); AVX512-BF16 paths
// need AVX-512 and the BF16 extension; AMX paths need those plus AMX-TILE, AMX-BF16 and the
// kernel's permission to use tile data (asked once per process). The int8 paths: AVX-VNNI (VEX
// vpdpbusd) on the AVX2 set, AVX512-VNNI on the AVX-512 set, AMX-INT8 (with AMX-TILE and the same
// permission) on the AVX512-VNNI set.
//
// CKW_ISA=amx, avx512bf16, avx512vnni, avx512, avxvnni, avx2 or scalar in the environment caps the
// choice (read once per library, at its first dispatch), so a slower path can be run and timed on
// a machine that has a faster one. The caps are one order, so CKW_ISA=avx2 is an AVX2-only CPU
// (no AVX-VNNI) and avx512 one without VNNI; amx allows both AMX paths (BF16 and INT8).
// Unset or empty: the best the CPU has. ckw/runtime/engine.py refuses any other value before a
// library is loaded, with a message naming the variable; the C side then caps nothing.
#ifndef CKW_KERNELS_COMMON_CPU_H_
#define CKW_KERNELS_COMMON_CPU_H_

#include <cpuid.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// Cap levels, in the order of CKW_ISA's values; CKW_ISA_CAP_NONE: no cap.
enum {
  CKW_ISA_CAP_SCALAR,
  CKW_ISA_CAP_AVX2,
  CKW_ISA_CAP_AVXVNNI,
  CKW_ISA_CAP_AVX512,
  CKW_ISA_CAP_AVX512VNNI,
  CKW_ISA_CAP_AVX512BF16,
  CKW_ISA_CAP_AMX,
  CKW_ISA_CAP_NONE
};

static inline int ckw_cpu_isa_cap(void) {
  static const char* const kNames[CKW_ISA_CAP_NONE] = {"scalar",     "avx2",       "avxvnni", "avx512",
                                                       "avx512vnni", "avx512bf16", "amx"};
  static int cached = -1;  // threads racing here all store the same value
  int cap = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (cap < 0) {
    const char* env = getenv("CKW_ISA");
    cap = CKW_ISA_CAP_NONE;
    for (int i = 0; env && i < CKW_ISA_CAP_NONE; ++i)
      if (strcmp(env, kNames[i]) == 0) cap = i;
    __atomic_store_n(&cached, cap, __ATOMIC_RELAXED);
  }
  return cap;
}

// F16C (vcvtph2ps): CPUID leaf 1 ECX bit 29, read directly (clang 14's __builtin_cpu_supports
// has no f16c) and cached (CPUID traps to the hypervisor in a VM).
static inline int ckw_cpu_f16c_(void) {
  static int cached = -1;
  int ok = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (ok < 0) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    ok = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
    __atomic_store_n(&cached, ok, __ATOMIC_RELAXED);
  }
  return ok;
}

static inline int ckw_cpu_has_avx512(void) {
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AVX512 && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && ckw_cpu_f16c_();
}

// The portable path runs everywhere (so ISA tables can call ckw_cpu_has_<isa>() for each).
static inline int ckw_cpu_has_scalar(void) { return 1; }

static inline int ckw_cpu_has_avx2(void) {
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AVX2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         ckw_cpu_f16c_();
}

// AVX512-BF16 (vdpbf16ps, vcvtne2ps2bf16) on top of the AVX-512 baseline.
static inline int ckw_cpu_has_avx512bf16(void) {
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AVX512BF16 && ckw_cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
}

// AMX-BF16 tiles (tdpbf16ps) with the AVX512-BF16 baseline for rounding and epilogues. The CPU
// part is CPUID leaf 7 EDX bits 24 (AMX-TILE) and 22 (AMX-BF16), read directly: clang 14's
// __builtin_cpu_supports (the fuzz builds) has no amx names. Linux then hands out the tile state
// (XFEATURE_XTILEDATA, 18) only to a process that asks (arch_prctl ARCH_REQ_XCOMP_PERM, 0x1023; a
// raw syscall, so no feature-test macro is needed); without it the first tile instruction faults.
// Both are found once and cached: CPUID traps to the hypervisor in a VM, and this runs at every
// dispatch. Asking twice is harmless, so threads racing here store the same answer.
static inline int ckw_cpu_amx_permitted(void) {
#if defined(__linux__) && defined(__x86_64__)
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"(158L /* SYS_arch_prctl */), "D"(0x1023L), "S"(18L)
                   : "rcx", "r11", "memory");
  return ret == 0;
#else
  return 0;
#endif
}

// CPUID leaf 7 `subleaf`, register `reg` (0-3: EAX, EBX, ECX, EDX) has every bit of `mask` and,
// with `tiles`, Linux grants the tile state; found once into *cached (-1: not yet).
static inline int ckw_cpu_leaf7_(int* cached, unsigned subleaf, int reg, unsigned mask, int tiles) {
  int ok = __atomic_load_n(cached, __ATOMIC_ACQUIRE);
  if (ok < 0) {
    unsigned r[4] = {0, 0, 0, 0};
    ok = __get_cpuid_count(7, subleaf, &r[0], &r[1], &r[2], &r[3]) && (r[reg] & mask) == mask &&
         (!tiles || ckw_cpu_amx_permitted());
    __atomic_store_n(cached, ok, __ATOMIC_RELEASE);
  }
  return ok;
}

static inline int ckw_cpu_amx_usable_(void) {
  static int cached = -1;
  return ckw_cpu_leaf7_(&cached, 0, 3, 1u << 24 | 1u << 22, 1);
}

static inline int ckw_cpu_has_amx(void) {
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AMX && ckw_cpu_has_avx512bf16() && ckw_cpu_amx_usable_();
}

// AVX-VNNI (VEX-encoded vpdpbusd on ymm; leaf 7 subleaf 1 EAX bit 4) on the AVX2 set, for CPUs
// without AVX-512 (Alder Lake and later clients); read directly like the bits below (clang 14's
// __builtin_cpu_supports has none of them).
static inline int ckw_cpu_has_avxvnni(void) {
  static int cached = -1;
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AVXVNNI && ckw_cpu_has_avx2() && ckw_cpu_leaf7_(&cached, 1, 0, 1u << 4, 0);
}

// AVX512-VNNI (vpdpbusd on zmm; leaf 7 ECX bit 11) on the AVX-512 set.
static inline int ckw_cpu_has_avx512vnni(void) {
  static int cached = -1;
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AVX512VNNI && ckw_cpu_has_avx512() &&
         ckw_cpu_leaf7_(&cached, 0, 2, 1u << 11, 0);
}

// AMX-INT8 tiles (tdpbssd; leaf 7 EDX bits 24 AMX-TILE and 25 AMX-INT8, and the tile state as for
// AMX-BF16) with the AVX512-VNNI set for quantizing, packing, epilogues and small M. Capped by amx.
static inline int ckw_cpu_has_amxint8(void) {
  static int cached = -1;
  return ckw_cpu_isa_cap() >= CKW_ISA_CAP_AMX && ckw_cpu_has_avx512vnni() && ckw_cpu_leaf7_(&cached, 0, 3, 3u << 24, 1);
}

// Calls the newest path of `name` the CPU has, among the ISAs the kernel lists: ISAS is an
// X-macro that calls X(isa, name) for each of its ISAs, oldest first, starting with scalar (the
// order of ckw_kernel's `isas`); a later available ISA overrides an earlier one.
#define CKW_DISPATCH_PICK_(isa, name) \
  if (ckw_cpu_has_##isa()) pick_ = name##__##isa;
#define CKW_DISPATCH_ISAS(ISAS, name, ...)    \
  do {                                        \
    __typeof__(&name##__scalar) pick_ = NULL; \
    ISAS(CKW_DISPATCH_PICK_, name)            \
    pick_(__VA_ARGS__);                       \
  } while (0)

// As CKW_DISPATCH_ISAS, for a kernel that returns a status: returns the chosen path's.
#define CKW_DISPATCH_ISAS_RETURN(ISAS, name, ...) \
  do {                                            \
    __typeof__(&name##__scalar) pick_ = NULL;     \
    ISAS(CKW_DISPATCH_PICK_, name)                \
    return pick_(__VA_ARGS__);                    \
  } while (0)

// The ISA list of most kernels.
#define CKW_ISAS_AVX512(X, name) X(scalar, name) X(avx2, name) X(avx512, name)
// Calls name##__avx512, __avx2 or __scalar with the given arguments.
#define CKW_DISPATCH(name, ...) CKW_DISPATCH_ISAS(CKW_ISAS_AVX512, name, __VA_ARGS__)
#define CKW_DISPATCH_RETURN(name, ...) CKW_DISPATCH_ISAS_RETURN(CKW_ISAS_AVX512, name, __VA_ARGS__)

#endif  // CKW_KERNELS_COMMON_CPU_H_
