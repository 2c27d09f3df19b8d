// tiny.en's end-to-end path in C (e2e_main.inc): valgrind's and MemorySanitizer's driver on the
// real model.
#include "models/whisper/tiny_decoder_c/ckw_tiny_decoder.h"
#include "models/whisper/tiny_encoder_c/ckw_tiny_encoder.h"

#define DRIVER "tiny_e2e"
#define ENC(name) ckw_tiny_encoder_##name
#define DEC(name) ckw_tiny_decoder_##name
#include "tests/hostile/memcheck/e2e_main.inc"
