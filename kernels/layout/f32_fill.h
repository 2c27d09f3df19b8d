// y[0 .. N) = value: a model's persistent state reset to a constant (a circuit's "reset" phase
// stores it into its state, e.g. Silero VAD's LSTM h/c and its audio context to zeros).
#ifndef CKW_KERNELS_LAYOUT_F32_FILL_H_
#define CKW_KERNELS_LAYOUT_F32_FILL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Every element gets value's exact bits (-0.0f and NaN payloads included). N <= 0 writes nothing.
void ckw_f32_fill(float* y, int64_t N, float value);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_LAYOUT_F32_FILL_H_
