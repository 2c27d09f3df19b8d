// What the f16 cache-write tests share: edge values pinned to the f16 bits ckw_f32_to_f16 gives
// them (the contract of both kernels), and random inputs with those values mixed in.
#ifndef CKW_KERNELS_LAYOUT_F16_CACHE_TEST_UTIL_H_
#define CKW_KERNELS_LAYOUT_F16_CACHE_TEST_UTIL_H_

#include <stdint.h>
#include <string.h>

#include "kernels/common/f16.h"
#include "kernels/common/test_util.h"

typedef struct {
  uint32_t f32;  // the source's bits
  uint16_t f16;  // the f16 bits it must be stored as
} F16Edge;

static const F16Edge kF16Edges[] = {
    {0x00000000u, 0x0000},  // +0
    {0x80000000u, 0x8000},  // -0 keeps its sign
    {0x3f800000u, 0x3c00},  // 1
    {0x3dcccccdu, 0x2e66},  // 0.1
    {0x477fe000u, 0x7bff},  // 65504, the largest f16
    {0x477fefffu, 0x7bff},  // just below 65520: down to 65504
    {0x477ff000u, 0x7c00},  // 65520: the tie goes to even, past 65504: infinity
    {0xc77ff000u, 0xfc00},  // -65520
    {0x501502f9u, 0x7c00},  // 1e10
    {0x7f800000u, 0x7c00},  // inf
    {0xff800000u, 0xfc00},  // -inf
    {0x38800000u, 0x0400},  // 2^-14, the smallest normal
    {0x387fc000u, 0x03ff},  // 2^-14 - 2^-24, the largest subnormal
    {0x387fe000u, 0x0400},  // 2^-14 - 2^-25: tie, to even (up into the normals)
    {0x33800000u, 0x0001},  // 2^-24, the smallest subnormal
    {0x33000000u, 0x0000},  // 2^-25: tie, to even (zero)
    {0xb3000000u, 0x8000},  // -2^-25: -0
    {0x33000001u, 0x0001},  // just above 2^-25: up
    {0x33c00000u, 0x0002},  // 3 * 2^-25: tie, to even (2 * 2^-24)
    {0xb3c00000u, 0x8002},  // -3 * 2^-25
    {0x2edbe6ffu, 0x0000},  // 1e-10 underflows to zero
    {0x3f801000u, 0x3c00},  // 1 + 2^-11: tie, to even (1)
    {0x3f803000u, 0x3c02},  // 1 + 3 * 2^-11: tie, to even (1 + 2^-9)
    {0x7fc00000u, 0x7e00},  // quiet NaN
    {0xffc00001u, 0xfe00},  // negative NaN, its payload below f16's bits
    {0x7f800001u, 0x7e00},  // signalling NaN: made quiet, never infinity
    {0x7fa12345u, 0x7f09},  // the payload's top 10 bits kept
};
enum { F16_EDGES = sizeof kF16Edges / sizeof kF16Edges[0] };

// Random values with scale (f16's range and beyond) and, every few elements, an edge value.
static inline void f16_test_src(float* src, int64_t n, uint64_t* rng) {
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = test_rng_next(rng);
    if (r % 5 == 0) {
      src[i] = ckw_f32_from_bits(kF16Edges[(r >> 8) % F16_EDGES].f32);
    } else {
      src[i] = ldexpf(test_rng_float(rng), (int)((r >> 8) % 48) - 30);  // 2^-30 .. 2^17
    }
  }
}

// Random f16 bits that are no NaN (a pool's old contents: widening then rounding gives them back).
static inline uint16_t f16_test_old(uint64_t* rng) {
  const uint16_t h = (uint16_t)test_rng_next(rng);
  return (h & 0x7c00u) == 0x7c00u ? (uint16_t)(h & 0xfbffu) : h;
}

#endif  // CKW_KERNELS_LAYOUT_F16_CACHE_TEST_UTIL_H_
