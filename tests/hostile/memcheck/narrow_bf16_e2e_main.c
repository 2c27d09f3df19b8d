// The narrow bf16 model's end-to-end path in C (e2e_main.inc; the model: BUILD.bazel): valgrind's
// driver.
#include "tests/hostile/memcheck/narrow_bf16_decoder_c/ckw_narrow_bf16_decoder.h"
#include "tests/hostile/memcheck/narrow_bf16_encoder_c/ckw_narrow_bf16_encoder.h"

#define DRIVER "narrow_bf16_e2e"
#define ENC(name) ckw_narrow_bf16_encoder_##name
#define DEC(name) ckw_narrow_bf16_decoder_##name
#include "tests/hostile/memcheck/e2e_main.inc"
