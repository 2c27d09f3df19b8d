// WAV (RIFF/WAVE) bytes in memory -> mono float32 samples at the file's own rate.
//
// Accepts WAVE_FORMAT_PCM (unsigned 8-bit; signed 16/24/32-bit), WAVE_FORMAT_IEEE_FLOAT
// (32/64-bit) and WAVE_FORMAT_EXTENSIBLE with a PCM or float subformat; any channel count
// (downmixed to the mean of the channels); any sample rate. Unknown chunks are skipped,
// odd-sized chunks honour their pad byte, chunks may come in any order. Scaling follows
// libsndfile: u8 (b - 128) / 128, signed n-bit v / 2^(n-1), float as stored. Float samples
// that are NaN, infinite or larger in magnitude than CKW_WAV_MAX_FLOAT (144 dB over full scale,
// where the log-mel stages would overflow float) mark a corrupt file and are refused.
//
// The dtype in the name is the output's; the input is untrusted bytes. Every read is
// bounds-checked against n_bytes, and every malformed input gets its own negative code.
//
// Usage: ckw_f32_wav_decode_query() for the sample count and rate, allocate, then
// ckw_f32_wav_decode().
#ifndef CKW_KERNELS_AUDIO_F32_WAV_DECODE_H_
#define CKW_KERNELS_AUDIO_F32_WAV_DECODE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_WAV_MAX_FLOAT 16777216.0  // 2^24; full scale is 1

#define CKW_WAV_OK 0
#define CKW_WAV_ERR_ARGUMENT (-1)               // NULL pointer or negative length
#define CKW_WAV_ERR_TOO_SHORT (-2)              // fewer than the 12 bytes of a RIFF header
#define CKW_WAV_ERR_NOT_RIFF (-3)               // does not start with "RIFF"
#define CKW_WAV_ERR_UNSUPPORTED_CONTAINER (-4)  // "RIFX" (big-endian) or "RF64"
#define CKW_WAV_ERR_NOT_WAVE (-5)               // RIFF form type is not "WAVE"
#define CKW_WAV_ERR_CHUNK_TRUNCATED (-6)        // a non-data chunk runs past the end
#define CKW_WAV_ERR_DUPLICATE_FMT (-7)
#define CKW_WAV_ERR_DUPLICATE_DATA (-8)
#define CKW_WAV_ERR_NO_FMT (-9)
#define CKW_WAV_ERR_NO_DATA (-10)
#define CKW_WAV_ERR_FMT_TOO_SHORT (-11)          // fmt chunk under 16 bytes
#define CKW_WAV_ERR_EXTENSIBLE_TOO_SHORT (-12)   // EXTENSIBLE fmt under 40 bytes / cbSize < 22
#define CKW_WAV_ERR_UNSUPPORTED_FORMAT (-13)     // format tag not PCM, IEEE float, EXTENSIBLE
#define CKW_WAV_ERR_UNSUPPORTED_SUBFORMAT (-14)  // EXTENSIBLE subformat not PCM or float
#define CKW_WAV_ERR_NO_CHANNELS (-15)
#define CKW_WAV_ERR_NO_SAMPLE_RATE (-16)
#define CKW_WAV_ERR_BAD_BITS (-17)            // bits/sample unsupported for the format
#define CKW_WAV_ERR_BAD_VALID_BITS (-18)      // EXTENSIBLE valid bits > container bits
#define CKW_WAV_ERR_BAD_BLOCK_ALIGN (-19)     // block align != channels * bytes/sample
#define CKW_WAV_ERR_DATA_TRUNCATED (-20)      // data chunk runs past the end
#define CKW_WAV_ERR_DATA_PARTIAL_FRAME (-21)  // data size not a multiple of block align
#define CKW_WAV_ERR_OUTPUT_TOO_SMALL (-22)    // capacity below the sample count
#define CKW_WAV_ERR_SAMPLE_RANGE (-23)        // a float sample is NaN, infinite or beyond CKW_WAV_MAX_FLOAT
#define CKW_WAV_ERR_RANGE (-24)               // range: frames past the end of the data
#define CKW_WAV_ERR_MIN (-24)

// Validates the file and reports the mono sample count and the sample rate (Hz). Either
// output pointer may be NULL. Returns CKW_WAV_OK or a CKW_WAV_ERR_* code.
int ckw_f32_wav_decode_query(const uint8_t* wav, int64_t n_bytes, int64_t* n_samples, int64_t* sample_rate);

// Decodes into y[0 .. n_samples), n_samples as reported by the query; capacity is the
// length of y. Writes nothing on error.
int ckw_f32_wav_decode(float* y, int64_t capacity, const uint8_t* wav, int64_t n_bytes);

// Streaming: frames frame_begin .. frame_begin + n - 1 into y[0 .. n), the values
// ckw_f32_wav_decode gives them. Reads the header and those frames' bytes only, so a caller
// can map a long file and decode it block by block.
int ckw_f32_wav_decode_range(float* y, int64_t n, const uint8_t* wav, int64_t n_bytes, int64_t frame_begin);

// The file's layout for a stream: info[0] frames (mono samples), info[1] sample rate (Hz),
// info[2] channels.
int ckw_i64_wav_info(int64_t* info, const uint8_t* wav, int64_t n_bytes);

// One-line message for any return code of the functions above (never NULL).
const char* ckw_f32_wav_decode_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif  // CKW_KERNELS_AUDIO_F32_WAV_DECODE_H_
