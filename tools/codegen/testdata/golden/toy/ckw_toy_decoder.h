// Generated from tools/codegen/testdata/toy/toy_decoder.json by //tools/codegen. Do not edit.
//
// C ABI of ckw_toy_decoder (circuit "toy_decoder", part "decoder").
// Every exported symbol starts with ckw_toy_decoder_; nothing else is exported, so other
// variants and parts load into the same process. A handle owns its weights mapping,
// scratch arena and persistent state; no global mutable state. Calls on one handle must
// not overlap; different handles may run in parallel.
//
// Return codes: CKW_TOY_DECODER_OK (0) or a negative CKW_TOY_DECODER_E_*; ckw_toy_decoder_strerror() names it.
#ifndef CKW_TOY_DECODER_H_
#define CKW_TOY_DECODER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKW_TOY_DECODER_OK 0  // ok
#define CKW_TOY_DECODER_E_ARGUMENT -1  // invalid argument (null pointer or a count out of range)
#define CKW_TOY_DECODER_E_IO -2  // cannot read the weights or manifest file
#define CKW_TOY_DECODER_E_LAYOUT_MISMATCH -3  // the manifest's layout (tensor names, dtypes, shapes, offsets) is not the one this library was built for
#define CKW_TOY_DECODER_E_WEIGHTS_SIZE -4  // weights file size differs from the manifest's (truncated, or another checkpoint's weights)
#define CKW_TOY_DECODER_E_NO_MEMORY -5  // out of memory
#define CKW_TOY_DECODER_E_MISSING_INPUT -6  // a required input was not set (call the set_* function first)
#define CKW_TOY_DECODER_E_CROSS_KV_INVALID -7  // cross-K/V cache is not valid: run prefill after setting encoder memory
#define CKW_TOY_DECODER_E_CONTEXT_FULL -8  // the position would pass the text context capacity
#define CKW_TOY_DECODER_E_KERNEL -9  // a kernel reported an error
#define CKW_TOY_DECODER_E_WEIGHTS_CORRUPT -10  // a tensor in the weights file fails the xxh64 checksum its manifest records: the file is corrupt
#define CKW_TOY_DECODER_E_BUSY -11  // the handle is in use by another call (one call at a time per handle: give each thread its own)

// The declarations below are rendered from the ABI description that ckw_toy_decoder_abi_json()
// returns (and abi.json holds): 16 functions, 2 types.

// Opaque: owns the weights mapping, arena, state and threads.
typedef struct ckw_toy_decoder_handle ckw_toy_decoder_handle;

// Edge inspection. After every kernel call of an entry point (circuit ops and the layout converters
// the compiler inserted, in call order) the handle's tap, when set, is called once per f32 output
// of that call. An output written as a window into persistent state (a KV-cache append) is reported
// as the whole cache instance it writes into, with the cache's full shape. Calls that an entry
// point skips (e.g. cached cross-K/V projections) report nothing.
//   user: set_tap's user
//   edge: "<node>.<port>", e.g. "blocks.0.q_proj.y" (converters:
//     "<consumer>:<port><-<layout>.<port>")
//   data: the output as the call left it, valid only during the callback (the arena is reused)
//   rank: entries of shape
//   shape: dims, row-major, as the kernel sees the tensor
typedef void (*ckw_toy_decoder_tap_fn)(void *user, const char *edge, const float *data,
                                       int64_t rank, const int64_t *shape);

// Maps the weights file read-only and allocates the handle's arena and state. The manifest's
// layout_sha256 must equal the one baked in here and its entry of every tensor this library reads
// the offset and size baked in (CKW_TOY_DECODER_E_LAYOUT_MISMATCH otherwise), the file must have
// the layout's size (CKW_TOY_DECODER_E_WEIGHTS_SIZE) and every tensor this library reads the xxh64
// the manifest records (CKW_TOY_DECODER_E_WEIGHTS_CORRUPT): any checkpoint of this layout runs, a
// fine-tune too.
// Every entry point that takes a non-const handle runs one call at a time on it: a call while
// another runs (another thread, or a tap re-entering) returns CKW_TOY_DECODER_E_BUSY and changes
// nothing.
//   weights_path: the weights file (NULL for a library without weights)
//   manifest_path: NULL: manifest.json next to the weights file
//   out: the new handle (NULL on failure)
int ckw_toy_decoder_create(const char *weights_path, const char *manifest_path,
                           ckw_toy_decoder_handle **out);

// As create, and the handle starts its worker threads (joined by free). Calls whose kernel declares
// a split run in chunks over outputs only, so every thread count gives the same bits. create() is
// create_with_threads(..., 0, out). Negative num_threads: CKW_TOY_DECODER_E_ARGUMENT.
//   weights_path: as create
//   manifest_path: as create
//   num_threads: >= 1: that many (the caller's included); 0: CKW_NUM_THREADS (a positive
//     integer), else the CPUs this process may run on; at most 8
//   out: the new handle (NULL on failure)
int ckw_toy_decoder_create_with_threads(const char *weights_path, const char *manifest_path,
                                        int num_threads, ckw_toy_decoder_handle **out);

// Threads the handle runs calls on, the caller's included (1 .. 8).
int ckw_toy_decoder_num_threads(const ckw_toy_decoder_handle *h);

// Joins the handle's threads and releases everything it owns (NULL: no-op). During a call on the
// handle (from another thread or a tap), the call frees it as it returns.
void ckw_toy_decoder_free(ckw_toy_decoder_handle *h);

// A return code's message (static storage).
//   code: CKW_TOY_DECODER_OK or a CKW_TOY_DECODER_E_* code
const char *ckw_toy_decoder_strerror(int code);

// The checkpoint layout this library was generated for (64 hex digits, "" when weightless): the
// manifest's layout_sha256.
const char *ckw_toy_decoder_layout_sha256(void);

// The failing kernel's own message after CKW_TOY_DECODER_E_KERNEL ("" otherwise).
const char *ckw_toy_decoder_last_error(const ckw_toy_decoder_handle *h);

// A resolved circuit dim by name, or -1 when there is none.
//   name: e.g. "n_vocab"
int64_t ckw_toy_decoder_dim(const char *name);

// This ABI as JSON (the artifact's abi.json, byte for byte): functions, parameters, types and error
// codes; ckw/runtime/abi.py builds its ctypes table from it.
const char *ckw_toy_decoder_abi_json(void);

// Sets the handle's edge tap. Returns CKW_TOY_DECODER_OK, or CKW_TOY_DECODER_E_ARGUMENT without a
// handle.
//   fn: NULL disables the tap (then each call costs one untaken branch)
//   user: passed to fn as is
int ckw_toy_decoder_set_tap(ckw_toy_decoder_handle *h, ckw_toy_decoder_tap_fn fn, void *user);

// Copies memory [5, 8] into the handle. Invalidates the cross-K/V cache: the next prefill projects
// it again; decode fails until then.
//   memory: encoder memory
int ckw_toy_decoder_set_memory(ckw_toy_decoder_handle *h, const float *memory);

// Runs the prompt tokens from position 0; projects memory into the cross cache once.
//   tokens: token ids
//   n_tokens: 1 <= n_tokens <= 6
//   logits: [n_tokens, 11]
int ckw_toy_decoder_prefill(ckw_toy_decoder_handle *h, const int32_t *tokens, int64_t n_tokens,
                            float *logits);

// Runs one token at the current position.
//   tokens: token ids
//   logits: [1, 11]
int ckw_toy_decoder_decode(ckw_toy_decoder_handle *h, int32_t tokens, float *logits);

// Forgets the token sequence (position = 0); keeps inputs set with set_* and the cross-K/V cache.
int ckw_toy_decoder_reset(ckw_toy_decoder_handle *h);

// Tokens in the sequence so far (at most 6); -1 without a handle.
int64_t ckw_toy_decoder_position(const ckw_toy_decoder_handle *h);

// How many times the cross-K/V cache was computed from encoder memory (once per memory).
int64_t ckw_toy_decoder_cross_kv_projections(const ckw_toy_decoder_handle *h);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // CKW_TOY_DECODER_H_
