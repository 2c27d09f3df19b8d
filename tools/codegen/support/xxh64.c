#include "tools/codegen/support/xxh64.h"

static const uint64_t kPrime1 = 11400714785074694791ULL;
static const uint64_t kPrime2 = 14029467366897019727ULL;
static const uint64_t kPrime3 = 1609587929392839161ULL;
static const uint64_t kPrime4 = 9650029242287828579ULL;
static const uint64_t kPrime5 = 2870177450012600261ULL;

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian loads assembled byte by byte (compilers merge them into one load): no alignment
// needed, same result on any host byte order.
static inline uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

static inline uint32_t load32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t round64(uint64_t acc, uint64_t lane) {
  acc += lane * kPrime2;
  return rotl64(acc, 31) * kPrime1;
}

static inline uint64_t merge64(uint64_t acc, uint64_t lane) {
  acc ^= round64(0, lane);
  return acc * kPrime1 + kPrime4;
}

uint64_t ckw_xxh64(const void* data, size_t n, uint64_t seed) {
  const uint8_t* p = (const uint8_t*)data;
  const uint8_t* const end = p + n;
  uint64_t h;
  if (n >= 32) {
    // Four independent lanes over 32-byte stripes.
    uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    const uint8_t* const last_stripe = end - 32;
    do {
      v1 = round64(v1, load64(p));
      v2 = round64(v2, load64(p + 8));
      v3 = round64(v3, load64(p + 16));
      v4 = round64(v4, load64(p + 24));
      p += 32;
    } while (p <= last_stripe);
    h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = merge64(h, v1);
    h = merge64(h, v2);
    h = merge64(h, v3);
    h = merge64(h, v4);
  } else {
    h = seed + kPrime5;
  }
  h += (uint64_t)n;
  for (; end - p >= 8; p += 8) h = rotl64(h ^ round64(0, load64(p)), 27) * kPrime1 + kPrime4;
  if (end - p >= 4) {
    h = rotl64(h ^ (uint64_t)load32(p) * kPrime1, 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) h = rotl64(h ^ (uint64_t)*p * kPrime5, 11) * kPrime1;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}
