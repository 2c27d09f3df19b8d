// Generated from tools/codegen/testdata/toy/toy_decoder.json by //tools/codegen. Do not edit.
// What the circuit decides; the handle's fixed code (create, free, one call at a time, return
// codes, worker threads) is tools/codegen/support's.
#include "ckw_toy_decoder.h"

#include <string.h>

#include "tools/codegen/support/ckw_handle.h"
#include "tools/codegen/testdata/toy/toy_kernels.h"

#define API __attribute__((visibility("default")))

// The return codes of the header are the support code's (CKW_STATUS_TABLE).
#define CHECK_CODE(name, code, text) _Static_assert(CKW_TOY_DECODER_##name == (code), #name);
CKW_STATUS_TABLE(CHECK_CODE)
#undef CHECK_CODE

// The tensors this library reads: create() hashes each (about the cost of reading them once)
// and compares it with the xxh64 the given manifest records for it, so a corrupt file is refused,
// never computed with, and any checkpoint of this layout (a fine-tune too) runs.
static const struct ckw_weight_check kWeightChecks[] = {
    {"embed.tokens", 0, 352},
    {"embed.positions", 384, 192},
    {"blocks.0.norm.g", 576, 32},
    {"blocks.0.norm.b", 640, 32},
    {"blocks.0.k.w", 704, 256},
    {"blocks.0.k.b", 960, 32},
    {"blocks.0.v.w", 1024, 256},
    {"blocks.0.v.b", 1280, 32},
    {"blocks.0.q.w", 1344, 256},
    {"blocks.0.q.b", 1600, 32},
    {"blocks.0.xk.w", 1664, 256},
    {"blocks.0.xk.b", 1920, 32},
    {"blocks.0.xv.w", 1984, 256},
    {"blocks.0.xv.b", 2240, 32},
    {"blocks.0.mlp.w", 2304, 256},
    {"blocks.0.mlp.b", 2560, 32},
    {"blocks.1.norm.g", 2624, 32},
    {"blocks.1.norm.b", 2688, 32},
    {"blocks.1.k.w", 2752, 256},
    {"blocks.1.k.b", 3008, 32},
    {"blocks.1.v.w", 3072, 256},
    {"blocks.1.v.b", 3328, 32},
    {"blocks.1.q.w", 3392, 256},
    {"blocks.1.q.b", 3648, 32},
    {"blocks.1.xk.w", 3712, 256},
    {"blocks.1.xk.b", 3968, 32},
    {"blocks.1.xv.w", 4032, 256},
    {"blocks.1.xv.b", 4288, 32},
    {"blocks.1.mlp.w", 4352, 256},
    {"blocks.1.mlp.b", 4608, 32},
};

static const struct ckw_library kLibrary = {
    .layout_sha256 = "bb22e4c27235a3de6519fbae6e82e582edd13e82684a9f37b90af4404730b89a",
    .weights_bytes = 4640,  // the weights file's exact size
    .weight_checks = kWeightChecks,
    .n_weight_checks = sizeof(kWeightChecks) / sizeof(kWeightChecks[0]),
    .arena_bytes = 576,
    .state_bytes = 1728,
    .max_threads = 8,
    .thread_scratch_bytes = 0,  // per thread after the first: the largest split call's
};

struct ckw_toy_decoder_handle {
  struct ckw_handle base;  // first: weights, arena (576 bytes), state (1728 bytes), threads, tap
  int has_memory;
  int64_t position;
  int cross_kv_valid;
  int64_t cross_kv_projections;
};
_Static_assert(offsetof(struct ckw_toy_decoder_handle, base) == 0, "create() returns the handle as its base");

// ---- Calls split across the handle's threads ----------------------------------------------
// The worker threads are tools/codegen/support/ckw_pool's; ckw_pool_run cuts a call's extent into
// chunks and runs one of the functions below per chunk.

// ckw_f32_gemm_nt_bias: its arguments for a whole call, and one function per declared split that runs
// it on the chunk [start, start + count) (kernel map "parallel") with the scratch of thread `slot`.
struct ckw_f32_gemm_nt_bias__args {
  float *y;
  const float *x;
  const float *w;
  const float *b;
  int64_t M;
  int64_t N;
  int64_t K;
};

static void ckw_f32_gemm_nt_bias__chunk0(const void *p, int64_t slot, int64_t start, int64_t count) {  // along M
  const struct ckw_f32_gemm_nt_bias__args *a = p;
  (void)slot;
  ckw_f32_gemm_nt_bias(
      a->y + (start * a->N),  // y
      a->x + (start * a->K),  // x
      a->w,  // w
      a->b,  // b
      (int64_t)(count),  // M
      a->N,  // N
      a->K  // K
  );
}

// ckw_f32_logits: its arguments for a whole call, and one function per declared split that runs
// it on the chunk [start, start + count) (kernel map "parallel") with the scratch of thread `slot`.
struct ckw_f32_logits__args {
  float *y;
  const float *x;
  const float *w;
  int64_t M;
  int64_t V;
  int64_t D;
};

static void ckw_f32_logits__chunk0(const void *p, int64_t slot, int64_t start, int64_t count) {  // along V
  const struct ckw_f32_logits__args *a = p;
  (void)slot;
  ckw_f32_logits(
      a->y + start,  // y
      a->x,  // x
      a->w + (start * a->D),  // w
      a->M,  // M
      (int64_t)(count),  // V
      a->D  // D
  );
}

static void ckw_f32_logits__chunk1(const void *p, int64_t slot, int64_t start, int64_t count) {  // along M
  const struct ckw_f32_logits__args *a = p;
  (void)slot;
  ckw_f32_logits(
      a->y + (start * a->V),  // y
      a->x + (start * a->D),  // x
      a->w,  // w
      (int64_t)(count),  // M
      a->V,  // V
      a->D  // D
  );
}

API const char *ckw_toy_decoder_strerror(int code) {
  switch (code) {
#define TEXT(name, code, text) \
  case CKW_##name:             \
    return "ckw_toy_decoder: " text;
    CKW_STATUS_TABLE(TEXT)
#undef TEXT
    default:
      return "ckw_toy_decoder: unknown error code";
  }
}

API const char *ckw_toy_decoder_layout_sha256(void) { return kLibrary.layout_sha256; }

// This library's ABI description, the same bytes as the abi.json generated beside it.
API const char *ckw_toy_decoder_abi_json(void) {
  static const char kAbiJson[] =
      "{\n"
      "  \"abi_version\": 1,\n"
      "  \"circuit\": \"toy_decoder\",\n"
      "  \"errors\": [\n"
      "    {\n"
      "      \"code\": 0,\n"
      "      \"name\": \"OK\",\n"
      "      \"text\": \"ok\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -1,\n"
      "      \"name\": \"E_ARGUMENT\",\n"
      "      \"text\": \"invalid argument (null pointer or a count out of range)\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -2,\n"
      "      \"name\": \"E_IO\",\n"
      "      \"text\": \"cannot read the weights or manifest file\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -3,\n"
      "      \"name\": \"E_LAYOUT_MISMATCH\",\n"
      "      \"text\": \"the manifest's layout (tensor names, dtypes, shapes, offsets) is not the one this library was built for\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -4,\n"
      "      \"name\": \"E_WEIGHTS_SIZE\",\n"
      "      \"text\": \"weights file size differs from the manifest's (truncated, or another checkpoint's weights)\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -5,\n"
      "      \"name\": \"E_NO_MEMORY\",\n"
      "      \"text\": \"out of memory\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -6,\n"
      "      \"name\": \"E_MISSING_INPUT\",\n"
      "      \"text\": \"a required input was not set (call the set_* function first)\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -7,\n"
      "      \"name\": \"E_CROSS_KV_INVALID\",\n"
      "      \"text\": \"cross-K/V cache is not valid: run prefill after setting encoder memory\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -8,\n"
      "      \"name\": \"E_CONTEXT_FULL\",\n"
      "      \"text\": \"the position would pass the text context capacity\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -9,\n"
      "      \"name\": \"E_KERNEL\",\n"
      "      \"text\": \"a kernel reported an error\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -10,\n"
      "      \"name\": \"E_WEIGHTS_CORRUPT\",\n"
      "      \"text\": \"a tensor in the weights file fails the xxh64 checksum its manifest records: the file is corrupt\"\n"
      "    },\n"
      "    {\n"
      "      \"code\": -11,\n"
      "      \"name\": \"E_BUSY\",\n"
      "      \"text\": \"the handle is in use by another call (one call at a time per handle: give each thread its own)\"\n"
      "    }\n"
      "  ],\n"
      "  \"functions\": [\n"
      "    {\n"
      "      \"doc\": \"Maps the weights file read-only and allocates the handle's arena and state. The manifest's layout_sha256 must equal the one baked in here and its entry of every tensor this library reads the offset and size baked in (CKW_TOY_DECODER_E_LAYOUT_MISMATCH otherwise), the file must have the layout's size (CKW_TOY_DECODER_E_WEIGHTS_SIZE) and every tensor this library reads the xxh64 the manifest records (CKW_TOY_DECODER_E_WEIGHTS_CORRUPT): any checkpoint of this layout runs, a fine-tune too.\\nEvery entry point that takes a non-const handle runs one call at a time on it: a call while another runs (another thread, or a tap re-entering) returns CKW_TOY_DECODER_E_BUSY and changes nothing.\",\n"
      "      \"name\": \"ckw_toy_decoder_create\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"the weights file (NULL for a library without weights)\",\n"
      "          \"name\": \"weights_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"NULL: manifest.json next to the weights file\",\n"
      "          \"name\": \"manifest_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle **\",\n"
      "          \"doc\": \"the new handle (NULL on failure)\",\n"
      "          \"name\": \"out\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"As create, and the handle starts its worker threads (joined by free). Calls whose kernel declares a split run in chunks over outputs only, so every thread count gives the same bits. create() is create_with_threads(..., 0, out). Negative num_threads: CKW_TOY_DECODER_E_ARGUMENT.\",\n"
      "      \"name\": \"ckw_toy_decoder_create_with_threads\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"as create\",\n"
      "          \"name\": \"weights_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"as create\",\n"
      "          \"name\": \"manifest_path\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int\",\n"
      "          \"doc\": \">= 1: that many (the caller's included); 0: CKW_NUM_THREADS (a positive integer), else the CPUs this process may run on; at most 8\",\n"
      "          \"name\": \"num_threads\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle **\",\n"
      "          \"doc\": \"the new handle (NULL on failure)\",\n"
      "          \"name\": \"out\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Threads the handle runs calls on, the caller's included (1 .. 8).\",\n"
      "      \"name\": \"ckw_toy_decoder_num_threads\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Joins the handle's threads and releases everything it owns (NULL: no-op). During a call on the handle (from another thread or a tap), the call frees it as it returns.\",\n"
      "      \"name\": \"ckw_toy_decoder_free\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"void\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"A return code's message (static storage).\",\n"
      "      \"name\": \"ckw_toy_decoder_strerror\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"int\",\n"
      "          \"doc\": \"CKW_TOY_DECODER_OK or a CKW_TOY_DECODER_E_* code\",\n"
      "          \"name\": \"code\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"The checkpoint layout this library was generated for (64 hex digits, \\\"\\\" when weightless): the manifest's layout_sha256.\",\n"
      "      \"name\": \"ckw_toy_decoder_layout_sha256\",\n"
      "      \"params\": [],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"The failing kernel's own message after CKW_TOY_DECODER_E_KERNEL (\\\"\\\" otherwise).\",\n"
      "      \"name\": \"ckw_toy_decoder_last_error\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"A resolved circuit dim by name, or -1 when there is none.\",\n"
      "      \"name\": \"ckw_toy_decoder_dim\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"e.g. \\\"n_vocab\\\"\",\n"
      "          \"name\": \"name\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int64_t\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"This ABI as JSON (the artifact's abi.json, byte for byte): functions, parameters, types and error codes; ckw/runtime/abi.py builds its ctypes table from it.\",\n"
      "      \"name\": \"ckw_toy_decoder_abi_json\",\n"
      "      \"params\": [],\n"
      "      \"returns\": \"const char *\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Sets the handle's edge tap. Returns CKW_TOY_DECODER_OK, or CKW_TOY_DECODER_E_ARGUMENT without a handle.\",\n"
      "      \"name\": \"ckw_toy_decoder_set_tap\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_tap_fn\",\n"
      "          \"doc\": \"NULL disables the tap (then each call costs one untaken branch)\",\n"
      "          \"name\": \"fn\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"void *\",\n"
      "          \"doc\": \"passed to fn as is\",\n"
      "          \"name\": \"user\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Copies memory [5, 8] into the handle. Invalidates the cross-K/V cache: the next prefill projects it again; decode fails until then.\",\n"
      "      \"name\": \"ckw_toy_decoder_set_memory\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const float *\",\n"
      "          \"doc\": \"encoder memory\",\n"
      "          \"name\": \"memory\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Runs the prompt tokens from position 0; projects memory into the cross cache once.\",\n"
      "      \"name\": \"ckw_toy_decoder_prefill\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const int32_t *\",\n"
      "          \"doc\": \"token ids\",\n"
      "          \"name\": \"tokens\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int64_t\",\n"
      "          \"doc\": \"1 <= n_tokens <= 6\",\n"
      "          \"name\": \"n_tokens\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"float *\",\n"
      "          \"doc\": \"[n_tokens, 11]\",\n"
      "          \"name\": \"logits\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Runs one token at the current position.\",\n"
      "      \"name\": \"ckw_toy_decoder_decode\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int32_t\",\n"
      "          \"doc\": \"token ids\",\n"
      "          \"name\": \"tokens\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"float *\",\n"
      "          \"doc\": \"[1, 11]\",\n"
      "          \"name\": \"logits\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Forgets the token sequence (position = 0); keeps inputs set with set_* and the cross-K/V cache.\",\n"
      "      \"name\": \"ckw_toy_decoder_reset\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Tokens in the sequence so far (at most 6); -1 without a handle.\",\n"
      "      \"name\": \"ckw_toy_decoder_position\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int64_t\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"How many times the cross-K/V cache was computed from encoder memory (once per memory).\",\n"
      "      \"name\": \"ckw_toy_decoder_cross_kv_projections\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"const ckw_toy_decoder_handle *\",\n"
      "          \"doc\": \"\",\n"
      "          \"name\": \"h\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"int64_t\"\n"
      "    }\n"
      "  ],\n"
      "  \"part\": \"decoder\",\n"
      "  \"prefix\": \"ckw_toy_decoder\",\n"
      "  \"types\": [\n"
      "    {\n"
      "      \"doc\": \"Opaque: owns the weights mapping, arena, state and threads.\",\n"
      "      \"kind\": \"struct\",\n"
      "      \"name\": \"ckw_toy_decoder_handle\"\n"
      "    },\n"
      "    {\n"
      "      \"doc\": \"Edge inspection. After every kernel call of an entry point (circuit ops and the layout converters the compiler inserted, in call order) the handle's tap, when set, is called once per f32 output of that call. An output written as a window into persistent state (a KV-cache append) is reported as the whole cache instance it writes into, with the cache's full shape. Calls that an entry point skips (e.g. cached cross-K/V projections) report nothing.\",\n"
      "      \"kind\": \"function_pointer\",\n"
      "      \"name\": \"ckw_toy_decoder_tap_fn\",\n"
      "      \"params\": [\n"
      "        {\n"
      "          \"ctype\": \"void *\",\n"
      "          \"doc\": \"set_tap's user\",\n"
      "          \"name\": \"user\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const char *\",\n"
      "          \"doc\": \"\\\"<node>.<port>\\\", e.g. \\\"blocks.0.q_proj.y\\\" (converters: \\\"<consumer>:<port><-<layout>.<port>\\\")\",\n"
      "          \"name\": \"edge\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const float *\",\n"
      "          \"doc\": \"the output as the call left it, valid only during the callback (the arena is reused)\",\n"
      "          \"name\": \"data\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"int64_t\",\n"
      "          \"doc\": \"entries of shape\",\n"
      "          \"name\": \"rank\"\n"
      "        },\n"
      "        {\n"
      "          \"ctype\": \"const int64_t *\",\n"
      "          \"doc\": \"dims, row-major, as the kernel sees the tensor\",\n"
      "          \"name\": \"shape\"\n"
      "        }\n"
      "      ],\n"
      "      \"returns\": \"void\"\n"
      "    }\n"
      "  ]\n"
      "}\n";
  return kAbiJson;
}

API const char *ckw_toy_decoder_last_error(const ckw_toy_decoder_handle *h) {
  return ckw_handle_last_error(h ? &h->base : NULL);
}

API int64_t ckw_toy_decoder_dim(const char *name) {
  static const struct ckw_dim kDims[] = {
      {"ctx", 6},
      {"d_model", 8},
      {"eot", 10},
      {"head_dim", 4},
      {"mem_len", 5},
      {"n_beam", 1},
      {"n_ctx", 6},
      {"n_head", 2},
      {"n_heads", 2},
      {"n_layer", 2},
      {"n_mem", 5},
      {"n_state", 8},
      {"n_vocab", 11},
  };
  return ckw_dim_lookup(kDims, sizeof(kDims) / sizeof(kDims[0]), name);
}

API int ckw_toy_decoder_create(const char *weights_path, const char *manifest_path, ckw_toy_decoder_handle **out) {
  return ckw_toy_decoder_create_with_threads(weights_path, manifest_path, 0, out);
}

API int ckw_toy_decoder_create_with_threads(const char *weights_path, const char *manifest_path, int num_threads, ckw_toy_decoder_handle **out) {
  struct ckw_handle *base = NULL;
  const int rc = ckw_handle_create(&kLibrary, sizeof(ckw_toy_decoder_handle), weights_path, manifest_path, num_threads, out ? &base : NULL);
  if (out) *out = (ckw_toy_decoder_handle *)base;
  return rc;
}

API void ckw_toy_decoder_free(ckw_toy_decoder_handle *h) {
  if (h) ckw_handle_free(&h->base);
}

API int ckw_toy_decoder_num_threads(const ckw_toy_decoder_handle *h) {
  return h ? ckw_pool_threads(h->base.pool) : CKW_TOY_DECODER_E_ARGUMENT;
}

static int ckw_toy_decoder_set_tap__in_call(ckw_toy_decoder_handle *h, ckw_toy_decoder_tap_fn fn, void *user) {
  h->base.tap = fn;
  h->base.tap_user = fn ? user : NULL;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_set_tap__in_call as one call at a time on the handle.
API int ckw_toy_decoder_set_tap(ckw_toy_decoder_handle *h, ckw_toy_decoder_tap_fn fn, void *user) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!ckw_handle_enter(&h->base)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_set_tap__in_call(h, fn, user);
  ckw_handle_leave(&h->base);  // frees the handle when free() came during the call
  return rc;
}

static int ckw_toy_decoder_set_memory__in_call(ckw_toy_decoder_handle *h, const float *memory) {
  if (!memory) return CKW_TOY_DECODER_E_ARGUMENT;
  memcpy(h->base.state + 0, memory, 160);
  h->has_memory = 1;
  h->cross_kv_valid = 0;  // the cached projections belong to the previous memory
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_set_memory__in_call as one call at a time on the handle.
API int ckw_toy_decoder_set_memory(ckw_toy_decoder_handle *h, const float *memory) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!ckw_handle_enter(&h->base)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_set_memory__in_call(h, memory);
  ckw_handle_leave(&h->base);  // frees the handle when free() came during the call
  return rc;
}

static int ckw_toy_decoder_reset__in_call(ckw_toy_decoder_handle *h) {
  h->position = 0;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_reset__in_call as one call at a time on the handle.
API int ckw_toy_decoder_reset(ckw_toy_decoder_handle *h) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!ckw_handle_enter(&h->base)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_reset__in_call(h);
  ckw_handle_leave(&h->base);  // frees the handle when free() came during the call
  return rc;
}

API int64_t ckw_toy_decoder_position(const ckw_toy_decoder_handle *h) { return h ? h->position : -1; }

API int64_t ckw_toy_decoder_cross_kv_projections(const ckw_toy_decoder_handle *h) { return h ? h->cross_kv_projections : -1; }

static int ckw_toy_decoder_prefill__in_call(ckw_toy_decoder_handle *h, const int32_t *tokens, int64_t n_tokens, float *logits) {
  if (!tokens || !logits) return CKW_TOY_DECODER_E_ARGUMENT;
  if (n_tokens < 1 || n_tokens > 6) return CKW_TOY_DECODER_E_ARGUMENT;
  if (0 + n_tokens > 6) return CKW_TOY_DECODER_E_CONTEXT_FULL;
  if (!h->has_memory) return CKW_TOY_DECODER_E_MISSING_INPUT;
  uint8_t *const arena = h->base.arena;
  uint8_t *const state = h->base.state;
  const uint8_t *const weights = h->base.weights;
  const ckw_toy_decoder_tap_fn tap = h->base.tap;  // edge inspection: NULL costs one untaken branch per call
  void *const tap_user = h->base.tap_user;
  if (!h->cross_kv_valid) {  // project the encoder memory once; decode steps reuse it
    // blocks.0.cross_k_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.0.cross_k_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 1664),  // weight blocks.0.xk.w
          .b = (const float *)(weights + 1920),  // weight blocks.0.xk.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(h->base.pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.0.cross_k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_k[0,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 192),  // y: state state:cross_k[0,0]
        (const float *)(arena + 0),  // x: arena blocks.0.cross_k_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_k[0,0]<-head_major.y", (const float *)(state + 192), 3, (const int64_t[]){2, 5, 4});
    }

    // blocks.0.cross_v_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.0.cross_v_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 1984),  // weight blocks.0.xv.w
          .b = (const float *)(weights + 2240),  // weight blocks.0.xv.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(h->base.pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.0.cross_v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_v[0,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 576),  // y: state state:cross_v[0,0]
        (const float *)(arena + 0),  // x: arena blocks.0.cross_v_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_v[0,0]<-head_major.y", (const float *)(state + 576), 3, (const int64_t[]){2, 5, 4});
    }

    // blocks.1.cross_k_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.1.cross_k_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 3712),  // weight blocks.1.xk.w
          .b = (const float *)(weights + 3968),  // weight blocks.1.xk.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(h->base.pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.1.cross_k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_k[1,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 384),  // y: state state:cross_k[1,0]
        (const float *)(arena + 0),  // x: arena blocks.1.cross_k_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_k[1,0]<-head_major.y", (const float *)(state + 384), 3, (const int64_t[]){2, 5, 4});
    }

    // blocks.1.cross_v_proj: split across the handle's threads (along M, grain 1, when always)
    {
      const struct ckw_f32_gemm_nt_bias__args args = {
          .y = (float *)(arena + 0),  // arena blocks.1.cross_v_proj.y
          .x = (const float *)(state + 0),  // state external:memory
          .w = (const float *)(weights + 4032),  // weight blocks.1.xv.w
          .b = (const float *)(weights + 4288),  // weight blocks.1.xv.b
          .M = 5,  // dim M
          .N = 8,  // dim N
          .K = 8,  // dim K
      };
      ckw_pool_run(h->base.pool, 5, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
    }
    if (tap) {
      tap(tap_user, "blocks.1.cross_v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){5, 8});
    }

    // state:cross_v[1,0]<-head_major
    ckw_f32_token_to_head_major(
        (float *)(state + 768),  // y: state state:cross_v[1,0]
        (const float *)(arena + 0),  // x: arena blocks.1.cross_v_proj.y
        5,  // T: dim T
        2,  // H: dim H
        4,  // Dh: dim Dh
        5,  // C: dim C
        0  // row0: dim R0
    );
    if (tap) {
      tap(tap_user, "state:cross_v[1,0]<-head_major.y", (const float *)(state + 768), 3, (const int64_t[]){2, 5, 4});
    }

    h->cross_kv_valid = 1;
    h->cross_kv_projections += 1;
  }
  // embed
  ckw_f32_embed_positions(
      (float *)(arena + 0),  // y: arena embed.y
      (const int32_t *)tokens,  // tokens: argument tokens
      (const float *)(weights + 0),  // table: weight embed.tokens
      (const float *)(weights + 384),  // positions: weight embed.positions
      n_tokens,  // T: dim T
      8,  // D: dim D
      0  // offset: dim offset
  );
  if (tap) {
    tap(tap_user, "embed.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.norm
  ckw_f32_layer_norm(
      (float *)(arena + 192),  // y: arena blocks.0.norm.y
      (const float *)(arena + 0),  // x: arena embed.y
      (const float *)(weights + 576),  // g: weight blocks.0.norm.g
      (const float *)(weights + 640),  // b: weight blocks.0.norm.b
      n_tokens,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.0.norm.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.k_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 0),  // arena blocks.0.k_proj.y
        .x = (const float *)(arena + 192),  // arena blocks.0.norm.y
        .w = (const float *)(weights + 704),  // weight blocks.0.k.w
        .b = (const float *)(weights + 960),  // weight blocks.0.k.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.0.k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_k[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 960),  // y: state state:self_k[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.k_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_k[0,0]<-head_major.y", (const float *)(state + 960), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.v_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 0),  // arena blocks.0.v_proj.y
        .x = (const float *)(arena + 192),  // arena blocks.0.norm.y
        .w = (const float *)(weights + 1024),  // weight blocks.0.v.w
        .b = (const float *)(weights + 1280),  // weight blocks.0.v.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.0.v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_v[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1344),  // y: state state:self_v[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.v_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_v[0,0]<-head_major.y", (const float *)(state + 1344), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.q_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 0),  // arena blocks.0.q_proj.y
        .x = (const float *)(arena + 192),  // arena blocks.0.norm.y
        .w = (const float *)(weights + 1344),  // weight blocks.0.q.w
        .b = (const float *)(weights + 1600),  // weight blocks.0.q.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.0.q_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.self_attn
  ckw_f32_attention(
      (float *)(arena + 192),  // y: arena blocks.0.self_attn.y
      (const float *)(arena + 0),  // q: arena blocks.0.q_proj.y
      (const float *)(state + 960),  // k: state state:self_k[0,0]
      (const float *)(state + 1344),  // v: state state:self_v[0,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      n_tokens,  // S: dim S
      0,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 144 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.self_attn.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.cross_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.0.cross_attn.y
      (const float *)(arena + 192),  // q: arena blocks.0.self_attn.y
      (const float *)(state + 192),  // k: state state:cross_k[0,0]
      (const float *)(state + 576),  // v: state state:cross_v[0,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 120 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.cross_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.0.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 192),  // y: arena blocks.0.mlp.y
      (const float *)(arena + 0),  // x: arena blocks.0.cross_attn.y
      (const float *)(weights + 2304),  // w: weight blocks.0.mlp.w
      (const float *)(weights + 2560),  // b: weight blocks.0.mlp.b
      n_tokens,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.mlp.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.norm
  ckw_f32_layer_norm(
      (float *)(arena + 0),  // y: arena blocks.1.norm.y
      (const float *)(arena + 192),  // x: arena blocks.0.mlp.y
      (const float *)(weights + 2624),  // g: weight blocks.1.norm.g
      (const float *)(weights + 2688),  // b: weight blocks.1.norm.b
      n_tokens,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.1.norm.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.k_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 192),  // arena blocks.1.k_proj.y
        .x = (const float *)(arena + 0),  // arena blocks.1.norm.y
        .w = (const float *)(weights + 2752),  // weight blocks.1.k.w
        .b = (const float *)(weights + 3008),  // weight blocks.1.k.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.1.k_proj.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_k[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1152),  // y: state state:self_k[1,0]
      (const float *)(arena + 192),  // x: arena blocks.1.k_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_k[1,0]<-head_major.y", (const float *)(state + 1152), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.v_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 192),  // arena blocks.1.v_proj.y
        .x = (const float *)(arena + 0),  // arena blocks.1.norm.y
        .w = (const float *)(weights + 3072),  // weight blocks.1.v.w
        .b = (const float *)(weights + 3328),  // weight blocks.1.v.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.1.v_proj.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // state:self_v[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1536),  // y: state state:self_v[1,0]
      (const float *)(arena + 192),  // x: arena blocks.1.v_proj.y
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      0  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row 0 on axis 1
    tap(tap_user, "state:self_v[1,0]<-head_major.y", (const float *)(state + 1536), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.q_proj: split across the handle's threads (along M, grain 1, when always)
  {
    const struct ckw_f32_gemm_nt_bias__args args = {
        .y = (float *)(arena + 192),  // arena blocks.1.q_proj.y
        .x = (const float *)(arena + 0),  // arena blocks.1.norm.y
        .w = (const float *)(weights + 3392),  // weight blocks.1.q.w
        .b = (const float *)(weights + 3648),  // weight blocks.1.q.b
        .M = n_tokens,  // dim M
        .N = 8,  // dim N
        .K = 8,  // dim K
    };
    ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_gemm_nt_bias__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "blocks.1.q_proj.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.self_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.1.self_attn.y
      (const float *)(arena + 192),  // q: arena blocks.1.q_proj.y
      (const float *)(state + 1152),  // k: state state:self_k[1,0]
      (const float *)(state + 1536),  // v: state state:self_v[1,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      n_tokens,  // S: dim S
      0,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 144 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.self_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.cross_attn
  ckw_f32_attention(
      (float *)(arena + 192),  // y: arena blocks.1.cross_attn.y
      (const float *)(arena + 0),  // q: arena blocks.1.self_attn.y
      (const float *)(state + 384),  // k: state state:cross_k[1,0]
      (const float *)(state + 768),  // v: state state:cross_v[1,0]
      n_tokens,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 384)  // scores: scratch 120 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.cross_attn.y", (const float *)(arena + 192), 2, (const int64_t[]){n_tokens, 8});
  }

  // blocks.1.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 0),  // y: arena blocks.1.mlp.y
      (const float *)(arena + 192),  // x: arena blocks.1.cross_attn.y
      (const float *)(weights + 4352),  // w: weight blocks.1.mlp.w
      (const float *)(weights + 4608),  // b: weight blocks.1.mlp.b
      n_tokens,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.mlp.y", (const float *)(arena + 0), 2, (const int64_t[]){n_tokens, 8});
  }

  // logits: split across the handle's threads (along V, grain 2, when n_tokens == 1; along M, grain 1, when always)
  {
    const struct ckw_f32_logits__args args = {
        .y = (float *)logits,  // output logits
        .x = (const float *)(arena + 0),  // arena blocks.1.mlp.y
        .w = (const float *)(weights + 0),  // weight embed.tokens
        .M = n_tokens,  // dim M
        .V = 11,  // dim V
        .D = 8,  // dim D
    };
    if (n_tokens == 1)
      ckw_pool_run(h->base.pool, 11, 2, ckw_f32_logits__chunk0, &args);
    else
      ckw_pool_run(h->base.pool, n_tokens, 1, ckw_f32_logits__chunk1, &args);
  }
  if (tap) {
    tap(tap_user, "logits.y", (const float *)logits, 2, (const int64_t[]){n_tokens, 11});
  }

  h->position = 0 + n_tokens;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_prefill__in_call as one call at a time on the handle.
API int ckw_toy_decoder_prefill(ckw_toy_decoder_handle *h, const int32_t *tokens, int64_t n_tokens, float *logits) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!ckw_handle_enter(&h->base)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_prefill__in_call(h, tokens, n_tokens, logits);
  ckw_handle_leave(&h->base);  // frees the handle when free() came during the call
  return rc;
}

static int ckw_toy_decoder_decode__in_call(ckw_toy_decoder_handle *h, int32_t tokens, float *logits) {
  if (!logits) return CKW_TOY_DECODER_E_ARGUMENT;
  const int64_t pos = h->position;
  if (pos > 5) return CKW_TOY_DECODER_E_CONTEXT_FULL;
  if (pos + 1 > 6) return CKW_TOY_DECODER_E_CONTEXT_FULL;
  if (!h->cross_kv_valid) return CKW_TOY_DECODER_E_CROSS_KV_INVALID;
  uint8_t *const arena = h->base.arena;
  uint8_t *const state = h->base.state;
  const uint8_t *const weights = h->base.weights;
  const ckw_toy_decoder_tap_fn tap = h->base.tap;  // edge inspection: NULL costs one untaken branch per call
  void *const tap_user = h->base.tap_user;
  // embed
  ckw_f32_embed_positions(
      (float *)(arena + 0),  // y: arena embed.y
      (const int32_t *)&tokens,  // tokens: argument tokens
      (const float *)(weights + 0),  // table: weight embed.tokens
      (const float *)(weights + 384),  // positions: weight embed.positions
      1,  // T: dim T
      8,  // D: dim D
      pos  // offset: dim offset
  );
  if (tap) {
    tap(tap_user, "embed.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.norm
  ckw_f32_layer_norm(
      (float *)(arena + 64),  // y: arena blocks.0.norm.y
      (const float *)(arena + 0),  // x: arena embed.y
      (const float *)(weights + 576),  // g: weight blocks.0.norm.g
      (const float *)(weights + 640),  // b: weight blocks.0.norm.b
      1,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.0.norm.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.k_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 0),  // y: arena blocks.0.k_proj.y
      (const float *)(arena + 64),  // x: arena blocks.0.norm.y
      (const float *)(weights + 704),  // w: weight blocks.0.k.w
      (const float *)(weights + 960),  // b: weight blocks.0.k.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.k_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // state:self_k[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 960),  // y: state state:self_k[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.k_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_k[0,0]<-head_major.y", (const float *)(state + 960), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.v_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 0),  // y: arena blocks.0.v_proj.y
      (const float *)(arena + 64),  // x: arena blocks.0.norm.y
      (const float *)(weights + 1024),  // w: weight blocks.0.v.w
      (const float *)(weights + 1280),  // b: weight blocks.0.v.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.v_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // state:self_v[0,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1344),  // y: state state:self_v[0,0]
      (const float *)(arena + 0),  // x: arena blocks.0.v_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_v[0,0]<-head_major.y", (const float *)(state + 1344), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.0.q_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 0),  // y: arena blocks.0.q_proj.y
      (const float *)(arena + 64),  // x: arena blocks.0.norm.y
      (const float *)(weights + 1344),  // w: weight blocks.0.q.w
      (const float *)(weights + 1600),  // b: weight blocks.0.q.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.q_proj.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.self_attn
  ckw_f32_attention(
      (float *)(arena + 64),  // y: arena blocks.0.self_attn.y
      (const float *)(arena + 0),  // q: arena blocks.0.q_proj.y
      (const float *)(state + 960),  // k: state state:self_k[0,0]
      (const float *)(state + 1344),  // v: state state:self_v[0,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      pos + 1,  // S: dim S
      pos,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 24 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.self_attn.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.cross_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.0.cross_attn.y
      (const float *)(arena + 64),  // q: arena blocks.0.self_attn.y
      (const float *)(state + 192),  // k: state state:cross_k[0,0]
      (const float *)(state + 576),  // v: state state:cross_v[0,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 20 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.0.cross_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.0.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 64),  // y: arena blocks.0.mlp.y
      (const float *)(arena + 0),  // x: arena blocks.0.cross_attn.y
      (const float *)(weights + 2304),  // w: weight blocks.0.mlp.w
      (const float *)(weights + 2560),  // b: weight blocks.0.mlp.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.0.mlp.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.norm
  ckw_f32_layer_norm(
      (float *)(arena + 0),  // y: arena blocks.1.norm.y
      (const float *)(arena + 64),  // x: arena blocks.0.mlp.y
      (const float *)(weights + 2624),  // g: weight blocks.1.norm.g
      (const float *)(weights + 2688),  // b: weight blocks.1.norm.b
      1,  // M: dim M
      8,  // D: dim D
      1e-05f  // eps: attr eps
  );
  if (tap) {
    tap(tap_user, "blocks.1.norm.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.k_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 64),  // y: arena blocks.1.k_proj.y
      (const float *)(arena + 0),  // x: arena blocks.1.norm.y
      (const float *)(weights + 2752),  // w: weight blocks.1.k.w
      (const float *)(weights + 3008),  // b: weight blocks.1.k.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.k_proj.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // state:self_k[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1152),  // y: state state:self_k[1,0]
      (const float *)(arena + 64),  // x: arena blocks.1.k_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_k[1,0]<-head_major.y", (const float *)(state + 1152), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.v_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 64),  // y: arena blocks.1.v_proj.y
      (const float *)(arena + 0),  // x: arena blocks.1.norm.y
      (const float *)(weights + 3072),  // w: weight blocks.1.v.w
      (const float *)(weights + 3328),  // b: weight blocks.1.v.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.v_proj.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // state:self_v[1,0]<-head_major
  ckw_f32_token_to_head_major(
      (float *)(state + 1536),  // y: state state:self_v[1,0]
      (const float *)(arena + 64),  // x: arena blocks.1.v_proj.y
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // C: dim C
      pos  // row0: dim R0
  );
  if (tap) {
    // whole cache view; this call wrote from row pos on axis 1
    tap(tap_user, "state:self_v[1,0]<-head_major.y", (const float *)(state + 1536), 3, (const int64_t[]){2, 6, 4});
  }

  // blocks.1.q_proj
  ckw_f32_gemm_nt_bias(
      (float *)(arena + 64),  // y: arena blocks.1.q_proj.y
      (const float *)(arena + 0),  // x: arena blocks.1.norm.y
      (const float *)(weights + 3392),  // w: weight blocks.1.q.w
      (const float *)(weights + 3648),  // b: weight blocks.1.q.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.q_proj.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.self_attn
  ckw_f32_attention(
      (float *)(arena + 0),  // y: arena blocks.1.self_attn.y
      (const float *)(arena + 64),  // q: arena blocks.1.q_proj.y
      (const float *)(state + 1152),  // k: state state:self_k[1,0]
      (const float *)(state + 1536),  // v: state state:self_v[1,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      6,  // kv_stride: dim C
      pos + 1,  // S: dim S
      pos,  // q0: dim q0
      1,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 24 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.self_attn.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.cross_attn
  ckw_f32_attention(
      (float *)(arena + 64),  // y: arena blocks.1.cross_attn.y
      (const float *)(arena + 0),  // q: arena blocks.1.self_attn.y
      (const float *)(state + 384),  // k: state state:cross_k[1,0]
      (const float *)(state + 768),  // v: state state:cross_v[1,0]
      1,  // T: dim T
      2,  // H: dim H
      4,  // Dh: dim Dh
      5,  // kv_stride: dim C
      5,  // S: dim S
      0,  // q0: dim q0
      0,  // causal: attr causal
      (float *)(arena + 128)  // scores: scratch 20 bytes
  );
  if (tap) {
    tap(tap_user, "blocks.1.cross_attn.y", (const float *)(arena + 64), 2, (const int64_t[]){1, 8});
  }

  // blocks.1.mlp
  ckw_f32_gemm_nt_bias_gelu(
      (float *)(arena + 0),  // y: arena blocks.1.mlp.y
      (const float *)(arena + 64),  // x: arena blocks.1.cross_attn.y
      (const float *)(weights + 4352),  // w: weight blocks.1.mlp.w
      (const float *)(weights + 4608),  // b: weight blocks.1.mlp.b
      1,  // M: dim M
      8,  // N: dim N
      8  // K: dim K
  );
  if (tap) {
    tap(tap_user, "blocks.1.mlp.y", (const float *)(arena + 0), 2, (const int64_t[]){1, 8});
  }

  // logits: split across the handle's threads (along V, grain 2, when always)
  {
    const struct ckw_f32_logits__args args = {
        .y = (float *)logits,  // output logits
        .x = (const float *)(arena + 0),  // arena blocks.1.mlp.y
        .w = (const float *)(weights + 0),  // weight embed.tokens
        .M = 1,  // dim M
        .V = 11,  // dim V
        .D = 8,  // dim D
    };
    ckw_pool_run(h->base.pool, 11, 2, ckw_f32_logits__chunk0, &args);
  }
  if (tap) {
    tap(tap_user, "logits.y", (const float *)logits, 2, (const int64_t[]){1, 11});
  }

  h->position = pos + 1;
  return CKW_TOY_DECODER_OK;
}

// ckw_toy_decoder_decode__in_call as one call at a time on the handle.
API int ckw_toy_decoder_decode(ckw_toy_decoder_handle *h, int32_t tokens, float *logits) {
  if (!h) return CKW_TOY_DECODER_E_ARGUMENT;
  if (!ckw_handle_enter(&h->base)) return CKW_TOY_DECODER_E_BUSY;
  const int rc = ckw_toy_decoder_decode__in_call(h, tokens, logits);
  ckw_handle_leave(&h->base);  // frees the handle when free() came during the call
  return rc;
}
