// IEEE binary16 (f16) <-> fp32 bit conversions shared by kernels, tests and benchmarks. Every f16
// value is an fp32 value, so widening is exact (subnormals, infinities and NaN payloads
// included); narrowing rounds to nearest even, as numpy's float16 does. The checkpoint stores a
// weight as f16 only where narrowing gives it back unchanged (ckw/checkpoints/storage.py),
// so a kernel on f16 weights computes on exactly the values of the fp32 checkpoint.
#ifndef CKW_KERNELS_COMMON_F16_H_
#define CKW_KERNELS_COMMON_F16_H_

#include <math.h>
#include <stdint.h>

#include "kernels/common/bf16.h"  // ckw_f32_bits, ckw_f32_from_bits

static inline float ckw_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t u;
  if (exp == 0x1fu) {
    u = sign | 0x7f800000u | (man << 13);  // infinity, NaN (payload kept)
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else {  // zero or subnormal: man * 2^-24, exact in fp32
    u = ckw_f32_bits(ldexpf((float)man, -24)) | sign;
  }
  return ckw_f32_from_bits(u);
}

// Round to nearest even; past the largest f16 -> infinity; NaN stays a (quiet) NaN.
static inline uint16_t ckw_f32_to_f16(float f) {
  const uint32_t u = ckw_f32_bits(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds past 65504
  if (a < 0x38800000u)  // below the smallest normal f16 (2^-14): a multiple of 2^-24, rounded
    return (uint16_t)(sign | (uint16_t)lrintf(ldexpf(ckw_f32_from_bits(a), 24)));  // default rounding: nearest even
  const uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
  return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

#endif  // CKW_KERNELS_COMMON_F16_H_
