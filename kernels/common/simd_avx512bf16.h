// What the avx512bf16 and amx paths add to simd_avx512.h: their target attributes
// (CKW_BF16_FEATURES, CKW_AMX_FEATURES), their entry names (CKW_ISA_BF16(name), CKW_ISA_AMX(name),
// next to CKW_ISA(name) for the avx512 path) and the bit casts between 32 bf16 and 16 dwords.
// Under CKW_EMULATE_AVX512 (test builds) the same sources compile on the portable intrinsics of
// avx512bf16_amx_emulation.h, as __avx512bf16emu and __amxemu.
#ifndef CKW_KERNELS_COMMON_SIMD_AVX512BF16_H_
#define CKW_KERNELS_COMMON_SIMD_AVX512BF16_H_

#include <string.h>

#include "kernels/common/simd_avx512.h"

#ifdef CKW_EMULATE_AVX512
#include "kernels/common/avx512bf16_amx_emulation.h"
#define CKW_BF16_FEATURES "avx2,fma,f16c"
#define CKW_AMX_FEATURES "avx2,fma,f16c"
#define CKW_ISA_BF16(name) name##__avx512bf16emu
#define CKW_ISA_AMX(name) name##__amxemu
#define CKW_BH_FROM_SI512 ckw_emu_pbh_from_epi32
#define CKW_SI512_FROM_BH ckw_emu_epi32_from_pbh
#else
#define CKW_BF16_FEATURES "avx512bf16,avx512f,avx512bw,avx512dq,avx512vl,fma,f16c"
#define CKW_AMX_FEATURES "amx-tile,amx-bf16," CKW_BF16_FEATURES
#define CKW_ISA_BF16(name) name##__avx512bf16
#define CKW_ISA_AMX(name) name##__amx
#define CKW_BH_FROM_SI512(v) ((__m512bh)(v))
#define CKW_SI512_FROM_BH(v) ((__m512i)(v))
#endif

// Helpers of the paths that use AVX512-BF16 (inlined into their CKW_BF16_FEATURES functions).
#define CKW_BF16_VI static inline __attribute__((always_inline, target(CKW_BF16_FEATURES)))

// 32 floats at p (k, k + 1 paired per lane) rounded to bf16 (VCVTNE2PS2BF16), in memory order.
CKW_BF16_VI __m512bh ckw_bh_round32(const float* p) {
  return _mm512_cvtne2ps_pbh(_mm512_loadu_ps(p + 16), _mm512_loadu_ps(p));
}
// The first n < 32 of them, 0 beyond (not read).
CKW_BF16_VI __m512bh ckw_bh_round32n(const float* p, int64_t n) {
  const __mmask16 lo = (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
  const __mmask16 hi = (__mmask16)(n > 16 ? (1u << (n - 16)) - 1u : 0u);
  return _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, p + 16), _mm512_maskz_loadu_ps(lo, p));
}
// The bf16 pair at p (one dword as stored) in every lane: a row's operand of a vdpbf16ps tile.
CKW_BF16_VI __m512bh ckw_bh_pair(const uint16_t* p) {
  int32_t u;
  memcpy(&u, p, sizeof u);
  return CKW_BH_FROM_SI512(_mm512_set1_epi32(u));
}

#endif  // CKW_KERNELS_COMMON_SIMD_AVX512BF16_H_
