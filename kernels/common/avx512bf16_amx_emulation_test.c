// Checks avx512bf16_amx_emulation.h against the SDM's pseudo-code on hand-computed cases (the
// order of VDPBF16PS's two FMAs, TDPBF16PS's separate even and odd chains, DAZ, FTZ after
// rounding, the bf16 conversion's rounding and special values, lane order), and on a CPU with
// AVX512-BF16 (AMX-BF16) every bit against the instructions on those cases and random ones.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/common/cpu.h"
#include "kernels/common/test_util.h"

// One call of each instruction, written once: the hw_ functions expand it before the emulation
// header renames the intrinsics, the emu_ functions after. BH(v): 16 dwords as 32 bf16.
#define CVTNE2_BODY _mm512_storeu_si512(out, CKW_SI512_OF(_mm512_cvtne2ps_pbh(_mm512_loadu_ps(a), _mm512_loadu_ps(b))))
#define DPBF16_BODY \
  _mm512_storeu_ps( \
      out, _mm512_dpbf16_ps(_mm512_loadu_ps(acc), CKW_BH_OF(_mm512_loadu_si512(a)), CKW_BH_OF(_mm512_loadu_si512(b))))
// dst (rows x cols floats) += a (rows x 2 pairs bf16) b (pairs x 2 cols bf16), rows 64 bytes apart.
#define TDPBF16_BODY                                                 \
  struct {                                                           \
    uint8_t palette, start_row, reserved[14];                        \
    uint16_t colsb[16];                                              \
    uint8_t rows[16];                                                \
  } cfg;                                                             \
  memset(&cfg, 0, sizeof cfg);                                       \
  cfg.palette = 1;                                                   \
  cfg.rows[0] = (uint8_t)rows, cfg.colsb[0] = (uint16_t)(4 * cols);  \
  cfg.rows[1] = (uint8_t)rows, cfg.colsb[1] = (uint16_t)(4 * pairs); \
  cfg.rows[2] = (uint8_t)pairs, cfg.colsb[2] = (uint16_t)(4 * cols); \
  _tile_loadconfig(&cfg);                                            \
  _tile_loadd(0, dst, 64);                                           \
  _tile_loadd(1, a, 64);                                             \
  _tile_loadd(2, b, 64);                                             \
  _tile_dpbf16ps(0, 1, 2);                                           \
  _tile_stored(0, dst, 64);                                          \
  _tile_release()

#define HW_BF16 __attribute__((target("avx512bf16,avx512f,avx512bw,avx512dq,avx512vl")))
#define HW_AMX __attribute__((target("amx-tile,amx-bf16,avx512bf16,avx512f,avx512bw,avx512dq,avx512vl")))
#define CKW_BH_OF(v) ((__m512bh)(v))
#define CKW_SI512_OF(v) ((__m512i)(v))
static HW_BF16 void hw_cvtne2(uint16_t out[32], const float a[16], const float b[16]) { CVTNE2_BODY; }
static HW_BF16 void hw_dpbf16(float out[16], const float acc[16], const uint16_t a[32], const uint16_t b[32]) {
  DPBF16_BODY;
}
static HW_AMX void hw_tdpbf16(float dst[16][16], const uint16_t a[16][32], const uint16_t b[16][32], int rows,
                              int pairs, int cols) {
  TDPBF16_BODY;
}
#undef CKW_BH_OF
#undef CKW_SI512_OF

#include "kernels/common/avx512bf16_amx_emulation.h"

#define EMU __attribute__((target("avx2,fma")))
#define CKW_BH_OF ckw_emu_pbh_from_epi32
#define CKW_SI512_OF ckw_emu_epi32_from_pbh
static EMU void emu_cvtne2(uint16_t out[32], const float a[16], const float b[16]) { CVTNE2_BODY; }
static EMU void emu_dpbf16(float out[16], const float acc[16], const uint16_t a[32], const uint16_t b[32]) {
  DPBF16_BODY;
}
static EMU void emu_tdpbf16(float dst[16][16], const uint16_t a[16][32], const uint16_t b[16][32], int rows, int pairs,
                            int cols) {
  TDPBF16_BODY;
}

// bf16 bit patterns of the values below.
enum {
  BF_1 = 0x3f80,          // 1
  BF_2M12 = 0x3980,       // 2^-12
  BF_M1P5_2M12 = 0xb9c0,  // -1.5 * 2^-12
  BF_2M64 = 0x1f80,       // 2^-64
  BF_M2M64 = 0x9f80,      // -2^-64
  BF_2M75 = 0x1a00,       // 2^-75
  BF_1P5_2M75 = 0x1a40,   // 1.5 * 2^-75
  BF_M2M76 = 0x9980,      // -2^-76
  BF_2P100 = 0x7180,      // 2^100
  BF_DENORMAL = 0x0001,   // 2^-133
};

// One VDPBF16PS lane: acc + a1 b1 (the odd pair element first), then + a0 b0.
typedef struct {
  const char* what;
  float acc;
  uint16_t a0, b0, a1, b1;
  uint32_t want;
} dp_case;

static const dp_case kDpCases[] = {
    // 1 + 2^-24 ties to 1, then - 1.5 * 2^-24 rounds to 1 - 2^-23 (even element first: 1 - 2^-24;
    // one rounding of the exact sum: 1).
    {"odd element first", 1.0f, BF_M1P5_2M12, BF_2M12, BF_2M12, BF_2M12, 0x3f7ffffeu},
    {"a denormal bf16 reads as 0", 0.0f, BF_DENORMAL, BF_2P100, 0, 0, 0x00000000u},
    {"a denormal accumulator reads as 0", 0x1p-140f, 0, 0, 0, 0, 0x00000000u},
    {"a denormal result flushes to +0", 0.0f, BF_2M64, BF_2M64, 0, 0, 0x00000000u},
    {"a denormal result flushes to -0", 0.0f, BF_M2M64, BF_2M64, 0, 0, 0x80000000u},
    // 2^-126 - 0.75 * 2^-150 rounds to 2^-126 - 2^-150 at 24 bits: tiny, flushed (the denormal
    // grid would round it to 2^-126).
    {"tiny after rounding flushes", 0x1p-126f, BF_1P5_2M75, BF_M2M76, 0, 0, 0x00000000u},
    // 2^-126 - 2^-151 ties to 2^-126 at 24 bits: not tiny after rounding (it is before).
    {"not tiny after rounding stays", 0x1p-126f, BF_2M75, BF_M2M76, 0, 0, 0x00800000u},
};

// VCVTNE2PS2BF16 of one value.
typedef struct {
  uint32_t f;
  uint16_t want;
} cvt_case;

static const cvt_case kCvtCases[] = {
    {0x3f808000u, 0x3f80},  // 1 + 2^-8: a tie, to even
    {0x3f818000u, 0x3f82},  // 1 + 3 * 2^-8: a tie, to even (up)
    {0x3f808001u, 0x3f81},  // just above the tie
    {0x00000001u, 0x0000},  // denormal: +0
    {0x807fffffu, 0x8000},  // denormal: -0
    {0x7f800000u, 0x7f80},  // infinity
    {0xff800000u, 0xff80},  // -infinity
    {0x7fa00001u, 0x7fe0},  // signalling NaN: truncated, quiet
    {0x7f7fffffu, 0x7f80},  // the largest float rounds to infinity
    {0x80000000u, 0x8000},  // -0
};

// The cases above through the emulation; with have_hw, the instruction too.
static void check_cases(int have_hw) {
  float acc[16] = {0}, out[16], hw[16];
  uint16_t a[32] = {0}, b[32] = {0};
  const int nd = (int)(sizeof kDpCases / sizeof kDpCases[0]);
  for (int i = 0; i < nd; ++i) {
    const dp_case* c = &kDpCases[i];
    acc[i] = c->acc, a[2 * i] = c->a0, b[2 * i] = c->b0, a[2 * i + 1] = c->a1, b[2 * i + 1] = c->b1;
  }
  emu_dpbf16(out, acc, a, b);
  if (have_hw) hw_dpbf16(hw, acc, a, b);
  for (int i = 0; i < nd; ++i) {
    EXPECT(ckw_f32_bits(out[i]) == kDpCases[i].want, "vdpbf16ps %s: 0x%08x, want 0x%08x", kDpCases[i].what,
           (unsigned)ckw_f32_bits(out[i]), (unsigned)kDpCases[i].want);
    if (have_hw)
      EXPECT(ckw_f32_bits(hw[i]) == ckw_f32_bits(out[i]), "vdpbf16ps %s: hardware 0x%08x, emulated 0x%08x",
             kDpCases[i].what, (unsigned)ckw_f32_bits(hw[i]), (unsigned)ckw_f32_bits(out[i]));
  }

  float lo[16], hi[16];
  uint16_t cv[32], hwcv[32];
  const int nc = (int)(sizeof kCvtCases / sizeof kCvtCases[0]);
  for (int l = 0; l < 16; ++l) lo[l] = ckw_f32_from_bits(kCvtCases[l % nc].f), hi[l] = (float)(l + 1);  // hi: exact
  emu_cvtne2(cv, hi, lo);
  if (have_hw) hw_cvtne2(hwcv, hi, lo);
  for (int l = 0; l < 16; ++l) {
    EXPECT(cv[l] == kCvtCases[l % nc].want, "vcvtne2ps2bf16 of 0x%08x: 0x%04x, want 0x%04x",
           (unsigned)kCvtCases[l % nc].f, cv[l], kCvtCases[l % nc].want);
    EXPECT(cv[16 + l] == (uint16_t)(ckw_f32_bits((float)(l + 1)) >> 16),
           "vcvtne2ps2bf16 lane %d: the first operand goes high", 16 + l);
  }
  if (have_hw) EXPECT(memcmp(cv, hwcv, sizeof cv) == 0, "vcvtne2ps2bf16: hardware and emulation differ");
}

// One output of TDPBF16PS: dst + (even chain + odd chain) over `pairs` k pairs, a[2k], a[2k+1]
// times b[k][0], b[k][1].
typedef struct {
  const char* what;
  float dst;
  int pairs;
  uint16_t a[4], b[2][2];
  uint32_t want;
} tile_case;

static const tile_case kTileCases[] = {
    // 1 + (-1.5 * 2^-24 + 2^-24) = 1 - 2^-25 ties to 1 (VDPBF16PS's order gives 1 - 2^-23).
    {"the pair's sum, then the add", 1.0f, 1, {BF_M1P5_2M12, BF_2M12}, {{BF_2M12, BF_2M12}}, 0x3f800000u},
    // Even chain 1 * 1 + 0, odd chain 2^-24 + 2^-24: 1 + 2^-23 (one chain over the four products
    // in k order: 1).
    {"even and odd chains apart", 0.0f, 2, {BF_1, BF_2M12, 0, BF_2M12}, {{BF_1, BF_2M12}, {0, BF_2M12}}, 0x3f800001u},
    {"a denormal chain flushes", 0.0f, 1, {BF_2M64}, {{BF_2M64}}, 0x00000000u},
    {"a denormal destination reads as 0", 0x1p-140f, 1, {0}, {{0}}, 0x00000000u},
};

// Each case as a 1 x 1 tile product through the emulation; with have_hw, the tiles too.
static void check_tile_cases(int have_hw) {
  static float dst[16][16], hw[16][16];
  static uint16_t a[16][32], b[16][32];
  for (size_t i = 0; i < sizeof kTileCases / sizeof kTileCases[0]; ++i) {
    const tile_case* c = &kTileCases[i];
    memset(dst, 0, sizeof dst), memset(a, 0, sizeof a), memset(b, 0, sizeof b);
    dst[0][0] = c->dst;
    memcpy(a[0], c->a, sizeof c->a);
    for (int k = 0; k < 2; ++k) b[k][0] = c->b[k][0], b[k][1] = c->b[k][1];
    memcpy(hw, dst, sizeof dst);
    emu_tdpbf16(dst, a, b, 1, c->pairs, 1);
    EXPECT(ckw_f32_bits(dst[0][0]) == c->want, "tdpbf16ps %s: 0x%08x, want 0x%08x", c->what,
           (unsigned)ckw_f32_bits(dst[0][0]), (unsigned)c->want);
    if (have_hw) {
      hw_tdpbf16(hw, a, b, 1, c->pairs, 1);
      EXPECT(ckw_f32_bits(hw[0][0]) == ckw_f32_bits(dst[0][0]), "tdpbf16ps %s: hardware 0x%08x, emulated 0x%08x",
             c->what, (unsigned)ckw_f32_bits(hw[0][0]), (unsigned)ckw_f32_bits(dst[0][0]));
    }
  }
}

// A bf16 of random sign, exponent within 2^+-20 of 1 (a few denormals and zeros among them) and
// mantissa; a float likewise.
static uint16_t random_bf16(uint64_t* s) {
  const uint64_t r = test_rng_next(s);
  const uint32_t e = r % 61 == 0 ? 0u : (uint32_t)(107 + (r >> 8) % 41);
  return (uint16_t)((r >> 20 & 0x8000u) | e << 7 | (r >> 32 & 0x7fu));
}
static float random_f32(uint64_t* s) {
  const uint32_t hi = random_bf16(s);
  return ckw_f32_from_bits(hi << 16 | (uint32_t)(test_rng_next(s) & 0xffffu));
}

// Random inputs, every bit of the emulation against the instructions.
static void check_random(int have_bf16, int have_amx) {
  uint64_t s = 0x2545f4914f6cdd1dull;
  for (int round = 0; round < 2000 && have_bf16; ++round) {
    float acc[16], lo[16], hi[16], out[16], hw[16];
    uint16_t a[32], b[32], cv[32], hwcv[32];
    for (int l = 0; l < 16; ++l) acc[l] = random_f32(&s), lo[l] = random_f32(&s), hi[l] = random_f32(&s);
    for (int l = 0; l < 32; ++l) a[l] = random_bf16(&s), b[l] = random_bf16(&s);
    emu_dpbf16(out, acc, a, b), hw_dpbf16(hw, acc, a, b);
    emu_cvtne2(cv, hi, lo), hw_cvtne2(hwcv, hi, lo);
    EXPECT(memcmp(out, hw, sizeof out) == 0, "vdpbf16ps: hardware and emulation differ (round %d)", round);
    EXPECT(memcmp(cv, hwcv, sizeof cv) == 0, "vcvtne2ps2bf16: hardware and emulation differ (round %d)", round);
  }
  static float dst[16][16], hw[16][16];
  static uint16_t a[16][32], b[16][32];
  for (int round = 0; round < 50 && have_amx; ++round) {
    const int rows = 1 + round % 16, pairs = 1 + (round * 7) % 16, cols = 1 + (round * 5) % 16;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 32; ++j) a[i][j] = random_bf16(&s), b[i][j] = random_bf16(&s), dst[i][j / 2] = random_f32(&s);
    memcpy(hw, dst, sizeof dst);
    emu_tdpbf16(dst, a, b, rows, pairs, cols), hw_tdpbf16(hw, a, b, rows, pairs, cols);
    EXPECT(memcmp(dst, hw, sizeof dst) == 0, "tdpbf16ps %d x %d x %d: hardware and emulation differ", rows, pairs,
           cols);
  }
}

int main(void) {
  const int bf16 = ckw_cpu_has_avx512bf16(), amx = ckw_cpu_has_amx();
  printf("avx512bf16: %s; amx: %s\n", bf16 ? "emulation checked against the instructions" : "not on this CPU",
         amx ? "emulation checked against the tiles" : "not on this CPU");
  check_cases(bf16);
  check_tile_cases(amx);
  check_random(bf16, amx);
  return test_finish("avx512bf16_amx_emulation_test");
}
