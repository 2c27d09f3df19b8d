"""What the circuit compiler needs to know of a set of kernels: their maps and libraries.

kernels/kernel.bzl registers the project's kernels with this provider; `ckw_kernel_entry`
registers kernels that need nothing else (the toy circuit's test kernels).
"""

CkwKernelInfo = provider(
    doc = "Kernel maps and the C libraries that implement them.",
    fields = {
        "maps": "depset of the kernel-map Files a compiler may select from",
        "map_inputs": "depset of every JSON File the maps may extend (action inputs)",
        "libraries": "depset of the cc_library label strings the maps' `library` fields name",
        "shared_libraries": "depset of the per-library .so Files (ctypes tests)",
        "entries": "depset of JSON strings, one per map: map, library, shared, isas",
    },
)

def _kernel_entry_impl(ctx):
    library = str(ctx.attr.library.label)
    so = ctx.file.shared
    entries = [
        struct(map = m.short_path, library = library, shared = so.short_path if so else "", isas = ctx.attr.isas).to_json()
        for m in ctx.files.maps
    ]

    # CcInfo is a global in Bazel 4.2.3, whose rules_cc has no cc/common to load it from.
    # buildifier: disable=native-cc-info
    return [
        CkwKernelInfo(
            maps = depset(ctx.files.maps),
            map_inputs = depset(ctx.files.maps + ctx.files.map_inputs),
            libraries = depset([library]),
            shared_libraries = depset([so] if so else []),
            entries = depset(entries),
        ),
        ctx.attr.library[CcInfo],
    ]

# buildifier: disable=native-cc-info
ckw_kernel_entry = rule(
    implementation = _kernel_entry_impl,
    doc = "One kernel library and the maps it implements, as CkwKernelInfo and its CcInfo.",
    attrs = {
        "maps": attr.label_list(allow_files = [".json"], mandatory = True, doc = "The maps the library implements."),
        "map_inputs": attr.label_list(allow_files = [".json"], doc = "Other maps they may extend."),
        "library": attr.label(providers = [CcInfo], mandatory = True, doc = "The cc_library the maps name."),
        "shared": attr.label(allow_single_file = [".so"], doc = "The library as a shared object for ctypes tests."),
        "isas": attr.string_list(doc = "The `__<isa>` entry points besides the dispatching one."),
    },
)
