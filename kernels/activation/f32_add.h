// ckw_f32_add (op kind "add"): y = a + b elementwise over T*D values. Used for the
// encoder's sinusoidal positions: b = model.encoder.embed_positions.weight, which equals
// Whisper's sinusoids(1500, d) (rows 0..T-1 are used). y may equal a or b.
#ifndef CKW_KERNELS_ACTIVATION_F32_ADD_H_
#define CKW_KERNELS_ACTIVATION_F32_ADD_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_add(float* y, const float* a, const float* b, int64_t T, int64_t D);
void ckw_f32_add__scalar(float* y, const float* a, const float* b, int64_t T, int64_t D);
void ckw_f32_add__avx2(float* y, const float* a, const float* b, int64_t T, int64_t D);
void ckw_f32_add__avx512(float* y, const float* a, const float* b, int64_t T, int64_t D);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ACTIVATION_F32_ADD_H_
