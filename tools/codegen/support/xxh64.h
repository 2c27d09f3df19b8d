// XXH64 (xxHash, 64-bit; https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md), the
// checksum the checkpoint manifest records per tensor ("xxh64") and the generated create()
// recomputes over the tensors its library reads: a flipped byte is refused at every start for
// about the cost of reading the weights once, where sha256 would cost several times that.
#ifndef CKW_TOOLS_CODEGEN_SUPPORT_XXH64_H_
#define CKW_TOOLS_CODEGEN_SUPPORT_XXH64_H_

#include <stddef.h>
#include <stdint.h>

#include "tools/codegen/support/ckw_support.h"

#ifdef __cplusplus
extern "C" {
#endif

// XXH64 of data[0 .. n) with `seed` (xxhash.xxh64_intdigest(data, seed) in Python).
CKW_SUPPORT_API uint64_t ckw_xxh64(const void* data, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif  // CKW_TOOLS_CODEGEN_SUPPORT_XXH64_H_
