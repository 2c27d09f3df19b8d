#include "kernels/common/simd_avx2.h"
#include "kernels/activation/f32_relu__simd.inc"
