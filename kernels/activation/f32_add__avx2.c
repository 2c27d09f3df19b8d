#include "kernels/common/simd_avx2.h"
#include "kernels/activation/f32_add__simd.inc"
