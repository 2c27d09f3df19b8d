#include "kernels/common/simd_avx512.h"
#include "kernels/activation/f32_add__simd.inc"
