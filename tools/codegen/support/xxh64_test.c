// ckw_xxh64 against the reference implementation's values (python xxhash 4.1.0, which wraps
// xxHash's C code): every length class (empty, < 4, < 8, < 32, whole stripes, stripes plus each
// kind of tail), two seeds, and unaligned starts.
#include <stdio.h>
#include <string.h>

#include "tools/codegen/support/xxh64.h"

static const struct {
  size_t n;
  uint64_t seed, want;
} kCases[] = {
    {0, 0ULL, 0xef46db3751d8e999ULL},   {0, 2654435761ULL, 0xac75fda2929b17efULL},
    {1, 0ULL, 0xa96c7f0ce858bbb7ULL},   {1, 2654435761ULL, 0x84e535b36672440dULL},
    {3, 0ULL, 0xbed43740ee6332bbULL},   {3, 2654435761ULL, 0x00b77b485431ce5dULL},
    {4, 0ULL, 0xfa212ae44b3bb23dULL},   {4, 2654435761ULL, 0x60492c4bfcb70cacULL},
    {7, 0ULL, 0x2744460dd675d2c0ULL},   {7, 2654435761ULL, 0xcdf83b729545b016ULL},
    {8, 0ULL, 0x994b676b71ce94ddULL},   {8, 2654435761ULL, 0xf424edebfea8d23fULL},
    {31, 0ULL, 0x6711d55e306b5d8fULL},  {31, 2654435761ULL, 0xfa1259cc8b20eb58ULL},
    {32, 0ULL, 0x07f7b8e3bc5d6e25ULL},  {32, 2654435761ULL, 0x920f3e10a5db09c6ULL},
    {33, 0ULL, 0x09f85eeb4e1cbe9fULL},  {33, 2654435761ULL, 0x3d805e8712cb4890ULL},
    {63, 0ULL, 0xb7c9968c066cb6a5ULL},  {63, 2654435761ULL, 0x184bc5097530bb9aULL},
    {64, 0ULL, 0x50d4159a0411632eULL},  {64, 2654435761ULL, 0x94667e10d68b3991ULL},
    {100, 0ULL, 0x9ddada11d3dc2d8fULL}, {100, 2654435761ULL, 0x5766be6782b96389ULL},
    {299, 0ULL, 0xc15be6b669e4f9f1ULL}, {299, 2654435761ULL, 0x4d5991b09844f0e2ULL},
    {300, 0ULL, 0xc68e7ef39b5ca10eULL}, {300, 2654435761ULL, 0x6ca8e717ab083d31ULL},
};

int main(void) {
  unsigned char data[300], shifted[300 + 7];
  for (int i = 0; i < 300; ++i) data[i] = (unsigned char)((i * 131 + 7) & 255);
  int failures = 0;
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    for (int shift = 0; shift < 8; shift += 3) {  // the same bytes at unaligned addresses
      memcpy(shifted + shift, data, kCases[c].n);
      uint64_t got = ckw_xxh64(shifted + shift, kCases[c].n, kCases[c].seed);
      if (got != kCases[c].want) {
        fprintf(stderr, "FAIL: n=%zu seed=%llu shift=%d: got %016llx, want %016llx\n", kCases[c].n,
                (unsigned long long)kCases[c].seed, shift, (unsigned long long)got, (unsigned long long)kCases[c].want);
        ++failures;
      }
    }
  }
  if (failures) return 1;
  printf("xxh64: %zu reference values match\n", sizeof(kCases) / sizeof(kCases[0]));
  return 0;
}
