// bf16 <-> fp32 bit conversions shared by kernels, tests and benchmarks. A bf16 value is the top
// 16 bits of an fp32, so widening is exact (zero-extend, shift left 16); narrowing rounds to
// nearest even, as the checkpoint packer does.
#ifndef CKW_KERNELS_COMMON_BF16_H_
#define CKW_KERNELS_COMMON_BF16_H_

#include <stdint.h>
#include <string.h>

// An fp32's bit pattern and back (also for f16.h and the emulated intrinsics).
static inline uint32_t ckw_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float ckw_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float ckw_bf16_to_f32(uint16_t h) { return ckw_f32_from_bits((uint32_t)h << 16); }

// Round to nearest even; NaN stays a (quiet) NaN instead of rounding into infinity.
static inline uint16_t ckw_f32_to_bf16(float f) {
  const uint32_t u = ckw_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// What VCVTNE2PS2BF16 gives (the SDM's convert_fp32_to_bfloat16): as above, but a denormal becomes
// a zero of its sign, and an infinity or NaN keeps its top half (a NaN quieted).
static inline uint16_t ckw_f32_to_bf16_cvtne(float f) {
  const uint32_t u = ckw_f32_bits(f);
  if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
  if ((u & 0x7f800000u) == 0x7f800000u) return (uint16_t)((u >> 16) | ((u & 0x007fffffu) ? 0x0040u : 0u));
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#endif  // CKW_KERNELS_COMMON_BF16_H_
