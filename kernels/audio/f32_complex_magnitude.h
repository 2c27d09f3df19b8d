// |X| of complex rows stored as real parts then imaginary parts: the spectrum magnitude after a
// GEMM with a stacked cos/sin basis (Silero VAD's STFT), computed as onnxruntime computes
// Sqrt(Pow(re, 2) + Pow(im, 2)) in float32.
#ifndef CKW_KERNELS_AUDIO_F32_COMPLEX_MAGNITUDE_H_
#define CKW_KERNELS_AUDIO_F32_COMPLEX_MAGNITUDE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// x [R, 2 * NB] (row r: re[0 .. NB) then im[0 .. NB)) -> y [R, NB]:
//   y[r, i] = sqrtf((re * re) + (im * im))
// with four float32 roundings in this order: re * re, im * im, their sum, the square root (no
// fused multiply-add, no hypot rescaling: a square that overflows gives +inf and one that
// underflows 0, as in onnxruntime). y and x must not overlap. R, NB <= 0 write nothing.
void ckw_f32_complex_magnitude(float* y, const float* x, int64_t R, int64_t NB);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_COMPLEX_MAGNITUDE_H_
