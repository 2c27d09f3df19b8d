// What every generated library's handle does the same way, whatever its circuit: return codes and
// their messages, create (weights mapped and checked, arena, state, worker threads), one call at
// a time, free, and the fields the generated entry points read (tools/codegen/README.md
// "Generated ABI"). The generated code keeps only what its circuit decides: the sizes and tables
// in its `struct ckw_library`, the handle's circuit fields and the entry points.
//
// No global mutable state: a handle owns everything, so several handles (of one library or of
// several libraries in one process) run at once.
#ifndef CKW_TOOLS_CODEGEN_SUPPORT_CKW_HANDLE_H_
#define CKW_TOOLS_CODEGEN_SUPPORT_CKW_HANDLE_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/codegen/support/ckw_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

// Return codes of every generated entry point: X(name, code, text). The same table as
// tools/codegen/abi.py ERRORS (which renders each header's CKW_<VARIANT>_<PART>_E_* and abi.json;
// the generated C asserts the codes, //tools/codegen:toy_abi_test the texts).
#define CKW_STATUS_TABLE(X)                                                                                           \
  X(OK, 0, "ok")                                                                                                      \
  X(E_ARGUMENT, -1, "invalid argument (null pointer or a count out of range)")                                        \
  X(E_IO, -2, "cannot read the weights or manifest file")                                                             \
  X(E_LAYOUT_MISMATCH, -3,                                                                                            \
    "the manifest's layout (tensor names, dtypes, shapes, offsets) is not the one this library was built for")        \
  X(E_WEIGHTS_SIZE, -4, "weights file size differs from the manifest's (truncated, or another checkpoint's weights)") \
  X(E_NO_MEMORY, -5, "out of memory")                                                                                 \
  X(E_MISSING_INPUT, -6, "a required input was not set (call the set_* function first)")                              \
  X(E_CROSS_KV_INVALID, -7, "cross-K/V cache is not valid: run prefill after setting encoder memory")                 \
  X(E_CONTEXT_FULL, -8, "the position would pass the text context capacity")                                          \
  X(E_KERNEL, -9, "a kernel reported an error")                                                                       \
  X(E_WEIGHTS_CORRUPT, -10,                                                                                           \
    "a tensor in the weights file fails the xxh64 checksum its manifest records: the file is corrupt")                \
  X(E_BUSY, -11, "the handle is in use by another call (one call at a time per handle: give each thread its own)")

#define CKW_STATUS_ENUM_(name, code, text) CKW_##name = code,
enum { CKW_STATUS_TABLE(CKW_STATUS_ENUM_) };
#undef CKW_STATUS_ENUM_

// A return code's text from CKW_STATUS_TABLE; "unknown error code" for any other value.
CKW_SUPPORT_API const char *ckw_status_text(int code);

// A tensor create() checks: its bytes in the weights file against the xxh64 the manifest's entry
// of that name records (the entry's offset and nbytes must be these).
struct ckw_weight_check {
  const char *name;
  int64_t offset, nbytes;
};

// A resolved circuit dim, for <prefix>_dim().
struct ckw_dim {
  const char *name;
  int64_t value;
};

// What create() needs to know of a library: the compiler bakes one in per generated library.
struct ckw_library {
  const char *layout_sha256;  // the manifest layout create() accepts (64 hex digits): the architecture
                              // and storage of the weights, not their values
  int64_t weights_bytes;      // the weights file's exact size; 0: the library reads no weights
  const struct ckw_weight_check *weight_checks;  // the tensors the library reads
  size_t n_weight_checks;
  int64_t arena_bytes;           // per-call scratch (grown by ckw_handle_reserve_arena when run-time sized)
  int64_t state_bytes;           // persistent regions, zeroed (mapped, so untouched parts cost no memory)
  int max_threads;               // worker threads' cap, the caller's included; 0: no call is split, no pool
  int64_t thread_scratch_bytes;  // scratch per thread after the first: the largest split call's
};

// The tap as every generated <prefix>_tap_fn declares it.
typedef void (*ckw_tap_fn)(void *user, const char *edge, const float *data, int64_t rank, const int64_t *shape);

// The first member of every generated handle: what the support code owns and the generated
// entry points read. Fields are read-only for generated code except the tap.
struct ckw_handle {
  atomic_int call_state;   // idle, busy, or free() pending (see ckw_handle_enter)
  const uint8_t *weights;  // read-only mapping of the weights file
  size_t weights_bytes;
  uint8_t *arena;  // per-call scratch
  size_t arena_bytes;
  uint8_t *state;  // persistent regions: an anonymous mapping, zero until written
  size_t state_bytes;
  struct ckw_pool *pool;    // worker threads for calls split across threads; NULL: none
  uint8_t *thread_scratch;  // (threads - 1) * thread_scratch_bytes: the workers' scratch
  ckw_tap_fn tap;           // edge inspection: called after each call with its f32 outputs; NULL: off
  void *tap_user;
  int kernel_status;  // last failing kernel's code and message (E_KERNEL)
  const char *kernel_error;
};

// Allocates a zeroed handle of handle_bytes (>= sizeof(struct ckw_handle): a generated handle
// whose first member is its struct ckw_handle) and sets it up for `lib`: checks and maps the
// weights file (manifest_path NULL: manifest.json beside it; the manifest's layout_sha256 must be
// lib's, the file lib's size and every checked tensor the xxh64 its manifest entry records: any
// checkpoint of this layout, a fine-tune too, and no corrupt one), allocates the arena and the
// zeroed state, and starts the worker threads (num_threads >= 1: that many, 0: see
// ckw_pool_thread_count; negative: CKW_E_ARGUMENT). CKW_OK and *out, or a CKW_E_* code and
// *out NULL (nothing left allocated).
CKW_SUPPORT_API int ckw_handle_create(const struct ckw_library *lib, size_t handle_bytes, const char *weights_path,
                                      const char *manifest_path, int num_threads, struct ckw_handle **out);

// Starts a call on h: 1, or 0 when another call runs (or free() is pending): then E_BUSY.
CKW_SUPPORT_API int ckw_handle_enter(struct ckw_handle *h);

// Ends a call started by ckw_handle_enter; frees the handle when free() came meanwhile.
CKW_SUPPORT_API void ckw_handle_leave(struct ckw_handle *h);

// <prefix>_free: idle, frees h now; during a call, the call frees it as it returns.
CKW_SUPPORT_API void ckw_handle_free(struct ckw_handle *h);

// Grows the arena to at least `bytes` (sizes known only from the input); 0, or -1 when out of memory.
CKW_SUPPORT_API int ckw_handle_reserve_arena(struct ckw_handle *h, int64_t bytes);

// Records a kernel failure (its status and message(status), or "kernel failed" without a
// message function) for ckw_handle_last_error; returns CKW_E_KERNEL.
CKW_SUPPORT_API int ckw_handle_kernel_failed(struct ckw_handle *h, int status, const char *(*message)(int));

// The failing kernel's own message after CKW_E_KERNEL; "" otherwise and for NULL.
CKW_SUPPORT_API const char *ckw_handle_last_error(const struct ckw_handle *h);

// The value of dims[i] named `name`, or -1 when there is none (or name is NULL).
CKW_SUPPORT_API int64_t ckw_dim_lookup(const struct ckw_dim *dims, size_t n, const char *name);

static inline int64_t ckw_max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t ckw_align64(int64_t n) { return (n + 63) / 64 * 64; }

#ifdef __cplusplus
}
#endif

#endif  // CKW_TOOLS_CODEGEN_SUPPORT_CKW_HANDLE_H_
