#include "kernels/common/simd_avx512.h"
#include "kernels/activation/f32_relu__simd.inc"
