// The k likeliest tokens of each row of logits and their log-probabilities (a beam search's
// candidates: openai-whisper's BeamSearchDecoder ranks log_softmax(logits) and keeps the top
// beam_size + 1 of each beam's row).
#ifndef CKW_KERNELS_ACTIVATION_F32_TOP_LOG_PROBS_H_
#define CKW_KERNELS_ACTIVATION_F32_TOP_LOG_PROBS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CKW_TOP_LOG_PROBS_OK = 0,
  CKW_TOP_LOG_PROBS_ERR_MASKED = -1,  // a row with no finite logit (every token masked to -inf)
  CKW_TOP_LOG_PROBS_ERR_K = -2,       // K outside [1, V]
  CKW_TOP_LOG_PROBS_ERR_SHAPE = -4,   // negative dims
};

// For each of the R rows of x [R, V]: with m the largest finite logit and
// L = log(sum of exp(x - m) over the finite logits), in float64, lp(v) = (float)((v - m) - L)
// (-inf for a masked token). tokens [R, K] and logprobs [R, K] get the K tokens of the largest
// lp, largest first, equal lp in ascending token order: the first K of the whole row ranked by
// (-lp, token). The sum leaves out the logits below m - 64 (each under e^-64 of the largest term:
// together under 2^-68 of the sum for any V below 2^24, so the float64 L is that of the full sum,
// up to the order of the additions and the last bits of exp). A refused call (the codes above)
// writes nothing.
// The un-suffixed entry picks the best ISA path at run time; the suffixed ones are for tests (the
// same ranking; the paths' float64 sums may differ in their last bits).
int ckw_f32_top_log_probs(int32_t* tokens, float* logprobs, const float* x, int64_t R, int64_t V, int64_t K);
int ckw_f32_top_log_probs__scalar(int32_t* tokens, float* logprobs, const float* x, int64_t R, int64_t V, int64_t K);
int ckw_f32_top_log_probs__avx2(int32_t* tokens, float* logprobs, const float* x, int64_t R, int64_t V, int64_t K);
int ckw_f32_top_log_probs__avx512(int32_t* tokens, float* logprobs, const float* x, int64_t R, int64_t V, int64_t K);
const char* ckw_f32_top_log_probs_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_ACTIVATION_F32_TOP_LOG_PROBS_H_
