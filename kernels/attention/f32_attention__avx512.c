#include "kernels/common/simd_avx512.h"
#include "kernels/attention/f32_attention__simd.inc"
