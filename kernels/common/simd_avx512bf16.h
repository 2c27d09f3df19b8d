// What the avx512bf16 and amx paths add to simd_avx512.h: their target attributes
// (CKW_BF16_FEATURES, CKW_AMX_FEATURES), their entry names (CKW_ISA_BF16(name), CKW_ISA_AMX(name),
// next to CKW_ISA(name) for the avx512 path) and the bit casts between 32 bf16 and 16 dwords.
// Under CKW_EMULATE_AVX512 (test builds) the same sources compile on the portable intrinsics of
// avx512bf16_amx_emulation.h, as __avx512bf16emu and __amxemu.
#ifndef CKW_KERNELS_COMMON_SIMD_AVX512BF16_H_
#define CKW_KERNELS_COMMON_SIMD_AVX512BF16_H_

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

#endif  // CKW_KERNELS_COMMON_SIMD_AVX512BF16_H_
