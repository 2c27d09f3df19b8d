// Declarations of the support code every generated library links (tools/codegen/support): a copy
// is linked into each shared object, and its symbols stay inside it (hidden; the .so exports only
// its ckw_<variant>_<part>_* API, tools/codegen/codegen.bzl), so the copies of several libraries
// in one process never meet. The support libraries are linkstatic: a hidden symbol cannot cross
// from one shared object to another, so tests link them in.
#ifndef CKW_TOOLS_CODEGEN_SUPPORT_CKW_SUPPORT_H_
#define CKW_TOOLS_CODEGEN_SUPPORT_CKW_SUPPORT_H_

#define CKW_SUPPORT_API __attribute__((visibility("hidden")))

#endif  // CKW_TOOLS_CODEGEN_SUPPORT_CKW_SUPPORT_H_
