#include "kernels/common/simd_avx2.h"
#define CKW_ATTENTION_KV_F16
#include "kernels/attention/f32_attention__simd.inc"
