// ckw_f32_lstm (op kind "lstm_sequence"): one LSTM layer (torch.nn.LSTM's cell, gate blocks in
// PyTorch's order i, f, g, o) over N steps, the input projection done before the call by a GEMM:
//   gx = x W_ih^T + b_ih + b_hh                        [N, 4H] token-major
// Step n, from the state (h, c) before it:
//   g = gx[n] + w h                                    (4H dot products of length H; w = W_hh [4H, H])
//   i = sigmoid(g[0:H]), f = sigmoid(g[H:2H]), u = tanh(g[2H:3H]), o = sigmoid(g[3H:4H])
//   c = f * c + i * u;  h = o * tanh(c);  y[n] = h
// h_out, c_out: the state after the call (N == 0: copies of h and c). h_out may be h and c_out may
// be c (a circuit's persistent state updated in place); no other overlap. Sequential over N: a
// call of N1 steps then one of N2 from its state gives the bits of one call of N1 + N2 (same path).
//
// scratch: ckw_f32_lstm_scratch_bytes(H) bytes (the 4H pre-activations g of a step), aligned for
// float; the working h is y's previous row, the working c is c_out.
//
// Paths: scalar (each dot product one sequential float sum; sigmoid and tanh from libm's expf and
// tanhf); avx2 and avx512 (the dot products 8 rows at a time over 8 or 16 lanes of h, FMA, lanes
// summed by a fixed tree; sigmoid and tanh vectorized on the exp of kernels/common/simd_math.inc,
// within 1 FLT_EPSILON absolute of the exact functions). Paths differ in the last bits, within the
// map's tolerance; each path is deterministic.
#ifndef CKW_KERNELS_RECURRENT_F32_LSTM_H_
#define CKW_KERNELS_RECURRENT_F32_LSTM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ckw_f32_lstm(float* y, float* h_out, float* c_out, const float* gx, const float* w, const float* h, const float* c,
                  void* scratch, int64_t N, int64_t H);
void ckw_f32_lstm__scalar(float* y, float* h_out, float* c_out, const float* gx, const float* w, const float* h,
                          const float* c, void* scratch, int64_t N, int64_t H);
void ckw_f32_lstm__avx2(float* y, float* h_out, float* c_out, const float* gx, const float* w, const float* h,
                        const float* c, void* scratch, int64_t N, int64_t H);
void ckw_f32_lstm__avx512(float* y, float* h_out, float* c_out, const float* gx, const float* w, const float* h,
                          const float* c, void* scratch, int64_t N, int64_t H);

// Bytes of scratch a call with hidden size H needs (4 * H floats).
int64_t ckw_f32_lstm_scratch_bytes(int64_t H);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_RECURRENT_F32_LSTM_H_
