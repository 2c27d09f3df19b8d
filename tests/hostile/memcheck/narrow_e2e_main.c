// The narrow model's end-to-end path in C (e2e_main.inc; the model: BUILD.bazel): valgrind's
// driver.
#include "tests/hostile/memcheck/narrow_decoder_c/ckw_narrow_decoder.h"
#include "tests/hostile/memcheck/narrow_encoder_c/ckw_narrow_encoder.h"

#define DRIVER "narrow_e2e"
#define ENC(name) ckw_narrow_encoder_##name
#define DEC(name) ckw_narrow_decoder_##name
#include "tests/hostile/memcheck/e2e_main.inc"
