#include "kernels/common/simd_avx2.h"
#include "kernels/attention/f32_attention__simd.inc"
