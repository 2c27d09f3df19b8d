// Band-limited resampling of mono float32 audio between integer sample rates (Kaiser-
// windowed sinc), e.g. to Whisper's 16 kHz. Identity (a copy) when the rates are equal.
//
// Output sample n sits at input time t = n * sr_in / sr_out (samples), so
// n_out = ceil(n_in * sr_out / sr_in) and output 0 is aligned with input 0. With
// fc = CKW_RESAMPLE_ROLLOFF * min(1, sr_out / sr_in) (cutoff relative to the input
// Nyquist) and Z = CKW_RESAMPLE_ZERO_CROSSINGS:
//   y[n] = sum_k x[k] * fc * h(fc * (t - k)),  x[k] = 0 outside [0, n_in),
//   h(u) = sinc(u) * I0(beta * sqrt(1 - (u/Z)^2)) / I0(beta) for |u| < Z, else 0.
// Passband flat within 0.005 dB up to 0.85 x the lower Nyquist; >= 80 dB rejection above it.
//
// The filter taps of the L = sr_out / gcd(sr_in, sr_out) phases are computed exactly (in
// double, rounded to float) into the caller's scratch. When the whole phase table fits in
// CKW_RESAMPLE_SCRATCH_BYTES (every common rate: 8, 11.025, 22.05, 44.1, 48, 96 kHz ...) outputs
// are produced in order; otherwise (rates such as 44101 Hz, L = 16000) phase by phase,
// recomputing one phase's taps at a time. Each output is a dot product with a fixed order
// (8 interleaved partial sums), so both orders, and the AVX2 path chosen at run time, give
// identical bits.
#ifndef CKW_KERNELS_AUDIO_F32_RESAMPLE_H_
#define CKW_KERNELS_AUDIO_F32_RESAMPLE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_RESAMPLE_ZERO_CROSSINGS 32
#define CKW_RESAMPLE_ROLLOFF 0.92
#define CKW_RESAMPLE_KAISER_BETA 8.0
#define CKW_RESAMPLE_MAX_RATE 768000    // Hz
#define CKW_RESAMPLE_MAX_DOWN_RATIO 64  // sr_in <= 64 * sr_out bounds the taps per output
// Scratch that serves every supported rate pair (the minimum is one phase's taps).
#define CKW_RESAMPLE_SCRATCH_BYTES 262144

#define CKW_RESAMPLE_OK 0
#define CKW_RESAMPLE_ERR_ARGUMENT (-1)       // NULL or misaligned pointer, negative length
#define CKW_RESAMPLE_ERR_RATE (-2)           // a rate outside [1, CKW_RESAMPLE_MAX_RATE]
#define CKW_RESAMPLE_ERR_RATIO (-3)          // sr_in > CKW_RESAMPLE_MAX_DOWN_RATIO * sr_out
#define CKW_RESAMPLE_ERR_TOO_LONG (-4)       // n_in * sr_out overflows int64
#define CKW_RESAMPLE_ERR_OUTPUT_LENGTH (-5)  // n_out != ckw_f32_resample_output_length()
#define CKW_RESAMPLE_ERR_SCRATCH (-6)        // scratch_bytes below one phase's taps
#define CKW_RESAMPLE_ERR_INPUT_SPAN (-7)     // range: x lacks samples the outputs need
#define CKW_RESAMPLE_ERR_MIN (-7)

// ceil(n_in * sr_out / sr_in), or a negative CKW_RESAMPLE_ERR_* code.
int64_t ckw_f32_resample_output_length(int64_t n_in, int64_t sr_in, int64_t sr_out);

// Scratch bytes ckw_f32_resample will use for this call (0 when the rates are equal), at
// most CKW_RESAMPLE_SCRATCH_BYTES; or a negative CKW_RESAMPLE_ERR_* code.
int64_t ckw_f32_resample_scratch_bytes(int64_t n_in, int64_t sr_in, int64_t sr_out);

// y[0 .. n_out) from x[0 .. n_in). y and x must not overlap. scratch is float-aligned with
// scratch_bytes >= ckw_f32_resample_scratch_bytes(); CKW_RESAMPLE_SCRATCH_BYTES always
// suffices. Any scratch size that is accepted gives the same bits.
// Returns CKW_RESAMPLE_OK or a CKW_RESAMPLE_ERR_* code (nothing written on error).
int ckw_f32_resample(float* y, int64_t n_out, const float* x, int64_t n_in, int64_t sr_in, int64_t sr_out,
                     void* scratch, int64_t scratch_bytes);

// Streaming: any span of the outputs from a block of the input, with the bits of the whole
// call. Output n reads input samples floor(n sr_in / sr_out) - J .. + taps - 1 (fewer at the
// signal's ends); ckw_i64_resample_input_span gives [span[0], span[1]) for outputs
// n_begin .. n_begin + n_y - 1 (span[0] may be negative). Returns CKW_RESAMPLE_OK or a code.
int ckw_i64_resample_input_span(int64_t* span, int64_t n_begin, int64_t n_y, int64_t sr_in, int64_t sr_out);

// Scratch bytes ckw_f32_resample_range needs for n_y outputs (0 at equal rates), at most
// CKW_RESAMPLE_SCRATCH_BYTES; or a negative code.
int64_t ckw_f32_resample_range_scratch_bytes(int64_t n_y, int64_t sr_in, int64_t sr_out);

// y[0 .. n_y) = outputs n_begin .. n_begin + n_y - 1 of resampling a signal of n_in samples
// (n_in < 0: its length is not known yet), of which x holds samples x_begin .. x_begin + n_x
// - 1 (inside the signal). x must hold every sample of the span (above) that lies inside
// the signal: while n_in is unknown, all of them past 0 (CKW_RESAMPLE_ERR_INPUT_SPAN
// otherwise). With n_in known, outputs must lie below ckw_f32_resample_output_length(n_in).
// The values equal those ckw_f32_resample computes for the whole signal, bit for bit.
int ckw_f32_resample_range(float* y, int64_t n_begin, int64_t n_y, const float* x, int64_t x_begin, int64_t n_x,
                           int64_t n_in, int64_t sr_in, int64_t sr_out, void* scratch, int64_t scratch_bytes);

// One-line message for any code returned above (never NULL).
const char* ckw_f32_resample_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_RESAMPLE_H_
