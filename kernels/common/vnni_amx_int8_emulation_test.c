// Checks vnni_amx_int8_emulation.h against the SDM's pseudo-code on hand-computed cases (unsigned
// by signed and signed by signed byte products, 32-bit wrap-around, truncation, the integer
// indefinite, masked lanes, tile shapes) and, on a CPU with AVX512-VNNI, AVX-VNNI or AMX-INT8, every
// bit against the instructions on those cases and random ones.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/common/cpu.h"
#include "kernels/common/test_util.h"

// One call of each instruction, written once: the hw_ functions expand it before the emulation
// header renames the intrinsics, the emu_ functions after.
#define DPBUSD_BODY \
  _mm512_storeu_si512(out, _mm512_dpbusd_epi32(_mm512_loadu_si512(src), _mm512_loadu_si512(a), _mm512_loadu_si512(b)))
#define DPBUSD_AVX_BODY                                                                               \
  _mm256_storeu_si256((__m256i*)out, _mm256_dpbusd_avx_epi32(_mm256_loadu_si256((const __m256i*)src), \
                                                             _mm256_loadu_si256((const __m256i*)a),   \
                                                             _mm256_loadu_si256((const __m256i*)b)))
#define CONVERT_BODY                                                                                    \
  _mm512_storeu_si512(out, _mm512_cvtps_epi32(_mm512_loadu_ps(f)));                                     \
  _mm_storeu_si128((__m128i*)narrow, _mm512_cvtepi32_epi8(_mm512_loadu_si512(out)));                    \
  _mm512_storeu_si512(gathered, _mm512_mask_i32gather_epi32(_mm512_loadu_si512(out), (__mmask16)0x5a5a, \
                                                            _mm512_loadu_si512(idx), table, 4))
// dst (rows x cols int32) += a (rows x 4 groups bytes) b (groups x 4 cols bytes), rows 64 bytes
// apart. LDTILECFG's operand: palette 1 (byte 0), tile t's bytes per row at 16 + 2t, rows at 48 + t.
#define TDPBSSD_BODY                                                                             \
  uint8_t cfg[64] = {1};                                                                         \
  cfg[16] = (uint8_t)(4 * cols), cfg[18] = (uint8_t)(4 * groups), cfg[20] = (uint8_t)(4 * cols); \
  cfg[48] = (uint8_t)rows, cfg[49] = (uint8_t)rows, cfg[50] = (uint8_t)groups;                   \
  _tile_loadconfig(cfg);                                                                         \
  _tile_loadd(0, dst, 64);                                                                       \
  _tile_loadd(1, a, 64);                                                                         \
  _tile_loadd(2, b, 64);                                                                         \
  _tile_dpbssd(0, 1, 2);                                                                         \
  _tile_stored(0, dst, 64);                                                                      \
  _tile_release()

#define HW_VNNI __attribute__((target("avx512vnni,avx512f,avx512bw,avx512dq,avx512vl")))
static HW_VNNI void hw_dpbusd(int32_t out[16], const int32_t src[16], const uint8_t a[64], const int8_t b[64]) {
  DPBUSD_BODY;
}
static HW_VNNI void hw_convert(int32_t out[16], int8_t narrow[16], int32_t gathered[16], const float f[16],
                               const int32_t idx[16], const int32_t* table) {
  CONVERT_BODY;
}
static __attribute__((target("avxvnni,avx2"))) void hw_dpbusd_avx(int32_t out[8], const int32_t src[8],
                                                                  const uint8_t a[32], const int8_t b[32]) {
  DPBUSD_AVX_BODY;
}
static __attribute__((target("amx-tile,amx-int8"))) void hw_tdpbssd(int32_t dst[16][16], const int8_t a[16][64],
                                                                    const int8_t b[16][64], int rows, int groups,
                                                                    int cols) {
  TDPBSSD_BODY;
}

#include "kernels/common/vnni_amx_int8_emulation.h"

#define EMU __attribute__((target("avx2,fma")))
static EMU void emu_dpbusd(int32_t out[16], const int32_t src[16], const uint8_t a[64], const int8_t b[64]) {
  DPBUSD_BODY;
}
static EMU void emu_convert(int32_t out[16], int8_t narrow[16], int32_t gathered[16], const float f[16],
                            const int32_t idx[16], const int32_t* table) {
  CONVERT_BODY;
}
static EMU void emu_dpbusd_avx(int32_t out[8], const int32_t src[8], const uint8_t a[32], const int8_t b[32]) {
  DPBUSD_AVX_BODY;
}
static EMU void emu_tdpbssd(int32_t dst[16][16], const int8_t a[16][64], const int8_t b[16][64], int rows, int groups,
                            int cols) {
  TDPBSSD_BODY;
}

// One dword lane of VPDPBUSD: src + the four unsigned a by signed b products.
typedef struct {
  const char* what;
  int32_t src;
  uint8_t a[4];
  int8_t b[4];
  int32_t want;
} dp_case;

static const dp_case kDpCases[] = {
    {"the largest products", 0, {255, 255, 255, 255}, {-128, -128, -128, -128}, -130560},
    {"mixed signs, a unsigned", 7, {0x80, 1, 2, 3}, {-1, 127, -128, 5}, 7 - 128 + 127 - 256 + 15},
    {"wraps past INT32_MAX (no saturation)", INT32_MAX, {1, 0, 0, 0}, {1, 0, 0, 0}, INT32_MIN},
    {"wraps past INT32_MIN", INT32_MIN, {255, 0, 0, 0}, {-1, 0, 0, 0}, INT32_MAX - 254},
};

static void check_dpbusd(int have_512, int have_256) {
  int32_t src[16] = {0}, out[16], hw[16];
  uint8_t a[64] = {0};
  int8_t b[64] = {0};
  const int nd = (int)(sizeof kDpCases / sizeof kDpCases[0]);
  for (int i = 0; i < 16; ++i) {  // the cases in lanes i % nd, the 512-bit and 256-bit forms alike
    const dp_case* c = &kDpCases[i % nd];
    src[i] = c->src, memcpy(a + 4 * i, c->a, 4), memcpy(b + 4 * i, c->b, 4);
  }
  emu_dpbusd(out, src, a, b);
  for (int i = 0; i < 16; ++i)
    EXPECT(out[i] == kDpCases[i % nd].want, "vpdpbusd %s: %d, want %d", kDpCases[i % nd].what, out[i],
           kDpCases[i % nd].want);
  if (have_512) {
    hw_dpbusd(hw, src, a, b);
    EXPECT(memcmp(out, hw, sizeof out) == 0, "vpdpbusd: hardware and emulation differ on the cases");
  }
  emu_dpbusd_avx(out, src, a, b);
  for (int i = 0; i < 8; ++i)
    EXPECT(out[i] == kDpCases[i % nd].want, "vpdpbusd (VEX) %s: %d", kDpCases[i % nd].what, out[i]);
  if (have_256) {
    hw_dpbusd_avx(hw, src, a, b);
    EXPECT(memcmp(out, hw, 8 * sizeof(int32_t)) == 0, "vpdpbusd (VEX): hardware and emulation differ on the cases");
  }
}

// VCVTPS2DQ, VPMOVDB and a masked VPGATHERDD of hand values.
static void check_convert(int have_512) {
  const float f[16] = {2.5f,      -2.5f, 3.5f,          -0.5f,          126.5f, 1e10f, -3e9f, INFINITY,
                       -INFINITY, NAN,   2147483520.0f, -2147483648.0f, 0.0f,   -0.0f, 1.5f,  -129.4f};
  const int32_t want[16] = {2,         -2,        4,          0,         126, INT32_MIN, INT32_MIN, INT32_MIN,
                            INT32_MIN, INT32_MIN, 2147483520, INT32_MIN, 0,   0,         2,         -129};
  const int8_t want_narrow[16] = {2, -2, 4, 0, 126, 0, 0, 0, 0, 0, -128, 0, 0, 0, 2, 127};  // the low bytes
  int32_t idx[16], table[32], out[16], gathered[16], hw[16], hw_gathered[16];
  int8_t narrow[16], hw_narrow[16];
  for (int i = 0; i < 16; ++i) idx[i] = (i * 7) % 32;
  for (int i = 0; i < 32; ++i) table[i] = 1000 + i;
  emu_convert(out, narrow, gathered, f, idx, table);
  for (int i = 0; i < 16; ++i) {
    EXPECT(out[i] == want[i], "vcvtps2dq(%g): %d, want %d", f[i], out[i], want[i]);
    EXPECT(narrow[i] == want_narrow[i], "vpmovdb(%d): %d, want %d", out[i], narrow[i], want_narrow[i]);
    const int32_t g = (0x5a5a >> i) & 1 ? 1000 + idx[i] : out[i];  // masked-off lanes keep src
    EXPECT(gathered[i] == g, "vpgatherdd lane %d: %d, want %d", i, gathered[i], g);
  }
  if (have_512) {
    hw_convert(hw, hw_narrow, hw_gathered, f, idx, table);
    EXPECT(memcmp(out, hw, sizeof out) == 0 && memcmp(narrow, hw_narrow, sizeof narrow) == 0 &&
               memcmp(gathered, hw_gathered, sizeof gathered) == 0,
           "vcvtps2dq, vpmovdb or vpgatherdd: hardware and emulation differ on the cases");
  }
}

// TDPBSSD by hand on a 1 x 1 result (signed by signed, the destination added, wrap-around), then
// with have_hw random shapes against the tiles.
static void check_tdpbssd(int have_hw, uint64_t* s) {
  static int32_t dst[16][16], hw[16][16];
  static int8_t a[16][64], b[16][64];
  memset(dst, 0, sizeof dst), memset(a, 0, sizeof a), memset(b, 0, sizeof b);
  const int8_t a0[8] = {-128, -128, -128, -128, -1, 2, -3, 4}, b0[2][4] = {{-128, -128, -128, -128}, {5, -6, 7, -8}};
  memcpy(a[0], a0, sizeof a0), memcpy(b[0], b0[0], 4), memcpy(b[1], b0[1], 4);
  dst[0][0] = INT32_MAX - 65465;  // + 4 * 2^14 - 70 = 65466 wraps to INT32_MIN
  emu_tdpbssd(dst, a, b, 1, 2, 1);
  EXPECT(dst[0][0] == INT32_MIN, "tdpbssd by hand: %d, want %d", dst[0][0], INT32_MIN);
  for (int round = 0; round < 60 && have_hw; ++round) {
    const int rows = 1 + round % 16, groups = 1 + (round * 7) % 16, cols = 1 + (round * 5) % 16;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 64; ++j) {
        a[i][j] = (int8_t)test_rng_next(s), b[i][j] = (int8_t)test_rng_next(s);
        dst[i][j / 4] = (int32_t)test_rng_next(s);
      }
    memcpy(hw, dst, sizeof dst);
    emu_tdpbssd(dst, a, b, rows, groups, cols), hw_tdpbssd(hw, a, b, rows, groups, cols);
    EXPECT(memcmp(dst, hw, sizeof dst) == 0, "tdpbssd %d x %d x %d: hardware and emulation differ", rows, groups, cols);
  }
}

// Random inputs, every bit of the emulation against the instructions.
static void check_random(int have_512, int have_256, uint64_t* s) {
  for (int round = 0; round < 2000 && (have_512 || have_256); ++round) {
    int32_t src[16], out[16], hw[16], idx[16], table[64], gathered[16], hw_gathered[16];
    uint8_t a[64];
    int8_t b[64], narrow[16], hw_narrow[16];
    float f[16];
    for (int i = 0; i < 64; ++i) a[i] = (uint8_t)test_rng_next(s), b[i] = (int8_t)test_rng_next(s);
    for (int i = 0; i < 64; ++i) table[i] = (int32_t)test_rng_next(s);
    for (int i = 0; i < 16; ++i) {
      src[i] = (int32_t)test_rng_next(s), idx[i] = (int32_t)(test_rng_next(s) % 64);
      f[i] = ldexpf(test_rng_float(s), (int)(test_rng_next(s) % 40));  // up to 2^39: some beyond int32
    }
    if (have_512) {
      emu_dpbusd(out, src, a, b), hw_dpbusd(hw, src, a, b);
      EXPECT(memcmp(out, hw, sizeof out) == 0, "vpdpbusd: hardware and emulation differ (round %d)", round);
      emu_convert(out, narrow, gathered, f, idx, table), hw_convert(hw, hw_narrow, hw_gathered, f, idx, table);
      EXPECT(memcmp(out, hw, sizeof out) == 0 && memcmp(narrow, hw_narrow, sizeof narrow) == 0 &&
                 memcmp(gathered, hw_gathered, sizeof gathered) == 0,
             "vcvtps2dq, vpmovdb or vpgatherdd: hardware and emulation differ (round %d)", round);
    }
    if (have_256) {
      emu_dpbusd_avx(out, src, a, b), hw_dpbusd_avx(hw, src, a, b);
      EXPECT(memcmp(out, hw, 8 * sizeof(int32_t)) == 0, "vpdpbusd (VEX): hardware and emulation differ (round %d)",
             round);
    }
  }
}

int main(void) {
  const int v512 = ckw_cpu_has_avx512vnni(), v256 = ckw_cpu_has_avxvnni(), amx = ckw_cpu_has_amxint8();
  printf("avx512vnni: %s; avxvnni: %s; amxint8: %s\n", v512 ? "checked against the instructions" : "not on this CPU",
         v256 ? "checked against the instructions" : "not on this CPU",
         amx ? "checked against the tiles" : "not on this CPU");
  uint64_t s = 0x2545f4914f6cdd1dull;
  check_dpbusd(v512, v256);
  check_convert(v512);
  check_tdpbssd(amx, &s);
  check_random(v512, v256, &s);
  return test_finish("vnni_amx_int8_emulation_test");
}
