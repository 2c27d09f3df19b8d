"""The kernel registry: one `ckw_kernel` line declares a kernel library and everything around it.

A kernel library is its kernel map(s), its sources (named after it, kernels/README.md) and one
macro line in its family's BUILD.bazel:

    ckw_kernel(name = "f32_layer_norm", isas = ["scalar", "avx2", "avx512"])

From that line come the cc_library, the C parity test, the benchmark run as a smoke test, the
AVX-512 emulation test, the ctypes shared library the generic contract test loads, a generated
header with the map's tolerance constants and the ISA list, and the registry entry that the
model rule and //kernels:contract_test read. Each family's BUILD.bazel ends with
`ckw_kernel_family()`; //kernels:model_kernels collects the families.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")
load("//tools/codegen:kernel_info.bzl", "CkwKernelInfo", "ckw_kernel_entry")
load("//tools/testing:pytest.bzl", "py_pytest")

ISAS = ["scalar", "avx2", "avx512", "avx512bf16", "amx", "avxvnni", "avx512vnni", "amxint8"]

# The paths the *_avx512emu test runs on emulated intrinsics (every one past AVX2; the VNNI and
# AMX-INT8 ones of the int8 GEMM on kernels/common/vnni_amx_int8_emulation.h).
EMULATED_ISAS = ["avx512", "avx512bf16", "amx", "avxvnni", "avx512vnni", "amxint8"]

# Sources on emulated intrinsics are for tests, and GCC needs 112 s at -O3 (33 s at -O1, 5 s at
# -Og) for one emulated GEMM core: -Og, which keeps the IEEE semantics the parity tests check.
EMULATION_COPTS = ["-Og"]

def _kernel_set_impl(ctx):
    infos = [d[CkwKernelInfo] for d in ctx.attr.deps]
    merged = CkwKernelInfo(
        maps = depset(transitive = [i.maps for i in infos]),
        map_inputs = depset(transitive = [i.map_inputs for i in infos]),
        libraries = depset(transitive = [i.libraries for i in infos]),
        shared_libraries = depset(transitive = [i.shared_libraries for i in infos]),
        entries = depset(transitive = [i.entries for i in infos]),
    )
    registry = ctx.actions.declare_file(ctx.label.name + "_registry.json")
    ctx.actions.write(registry, "[\n" + ",\n".join(sorted(merged.entries.to_list())) + "\n]\n")
    files = depset([registry], transitive = [merged.map_inputs, merged.shared_libraries])

    # Bazel 4.2.3 (Debian's, offline) has cc_common and CcInfo as globals and its rules_cc has no
    # cc/common to load them from: native-cc-* stay off in this file's rules.
    # buildifier: disable=native-cc-common
    # buildifier: disable=native-cc-info
    return [
        merged,
        cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps]),
        DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files)),
        OutputGroupInfo(registry = depset([registry])),
    ]

# buildifier: disable=native-cc-info
ckw_kernel_set = rule(
    implementation = _kernel_set_impl,
    doc = """A set of registered kernels: their maps, their libraries (as one CcInfo) and
`<name>_registry.json` (one entry per map: map, library, shared, isas; runfiles paths).""",
    attrs = {
        "deps": attr.label_list(providers = [CkwKernelInfo, CcInfo], doc = "ckw_kernel entries or other sets."),
    },
)

def _contract_header_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".h")
    args = ctx.actions.args()
    args.add("--out", out)
    args.add("--guard", out.short_path)
    args.add_joined("--isas", ctx.attr.isas, join_with = ",")
    args.add_all(ctx.files.maps, before_each = "--map")
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [args],
        inputs = ctx.files.maps + ctx.files.map_inputs,
        outputs = [out],
        mnemonic = "CkwContractHeader",
        progress_message = "Writing %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

_contract_header = rule(
    implementation = _contract_header_impl,
    doc = "Generates <name>.h: each map's tolerance constant and the library's ISA list for C tests.",
    attrs = {
        "maps": attr.label_list(allow_files = [".json"], mandatory = True),
        "map_inputs": attr.label_list(allow_files = [".json"]),
        "isas": attr.string_list(),
        "_tool": attr.label(default = "//kernels/common:contract_header", executable = True, cfg = "exec"),
    },
)

def ckw_kernel(
        name,
        isas = [],
        maps = None,
        srcs = None,
        hdrs = None,
        textual_hdrs = None,
        deps = [],
        test_deps = [],
        test_data = [],
        py_deps = [],
        bench = True,
        emulated_srcs = None,
        emulated_deps = [],
        test_size = "small"):
    """Registers one kernel library and derives its targets.

    Targets (N = name): `N` (cc_library), `N_test` (C parity test, N_test.c), `N_bench` (the
    benchmark, N_bench.c, a smoke test under `bazel test`, `--benchmark` for the table),
    `N_avx512emu_test` (N_test.c again with the AVX-512 sources built on emulated intrinsics,
    when isas has one of EMULATED_ISAS), `libckw_N.so` (ctypes), `N_contract` (generated N_contract.h with
    `CKW_<KERNEL>_TOLERANCE_C` per map and `<N>_ISAS(X)`, the X-macro over isas) and
    `N_kernel` (the registry entry). A hand-written `N_py_test.py` next to it (cases the generic
    contract test cannot state: special values, peers such as openai-whisper) becomes the
    pytest target `N_py_test`.

    Args:
      name: library and file stem, e.g. f32_layer_norm (XNNPACK grammar, kernels/README.md).
      isas: ISA paths the sources implement as `<kernel>__<isa>` functions besides the
        dispatching `<kernel>`, oldest first (a subset of ISAS starting with "scalar"); empty
        for a kernel with one portable entry point.
      maps: kernel-map JSON files this library implements (default: N.json).
      srcs: C sources (default: N.c and N__*.c).
      hdrs: public headers (default: N.h).
      textual_hdrs: included templates (default: N*.inc).
      deps: other libraries the sources use (kernels/common targets or kernel libraries).
      test_deps: extra deps of the C test.
      test_data: data of the C test and the py_test.
      py_deps: extra deps of the py_test.
      bench: whether N_bench.c exists.
      emulated_srcs: sources rebuilt on emulated intrinsics with CKW_EMULATE_AVX512 (default:
        N__avx512.c; the avx512bf16 and amx sources of the AVX-512 family may be among them,
        kernels/common/simd_avx512bf16.h; [] when the AVX-512 path is proven otherwise, e.g. by
        a portable 16-lane instantiation).
      emulated_deps: libraries already built on emulated intrinsics that the emulation test
        links (the shared GEMM cores of kernels/common, built once for every kernel over them).
      test_size: size of N_test and N_avx512emu_test; "medium" for a kernel whose cases take
        more than a minute under ASan at -O1 on emulated intrinsics (CI's sanitizer step).
    """
    for isa in isas:
        if isa not in ISAS:
            fail("ckw_kernel %s: unknown isa %r; known: %s" % (name, isa, ", ".join(ISAS)))
    if isas and isas[0] != "scalar":
        fail("ckw_kernel %s: isas must start with \"scalar\" (the portable fallback)" % name)
    maps = maps or [name + ".json"]
    map_inputs = [m for m in native.glob(["*.json"]) if m not in maps]
    if srcs == None:
        srcs = native.glob([name + ".c", name + "__*.c"], exclude = ["*_testonly.c"])
    hdrs = hdrs if hdrs != None else [name + ".h"]
    if textual_hdrs == None:
        textual_hdrs = native.glob([name + "*.inc"])
    common = ["//kernels/common:cpu"]

    cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        textual_hdrs = textual_hdrs,
        deps = deps + common,
        linkopts = ["-lm"],
        # The ctypes library links nothing that calls the kernels: keep every entry point.
        alwayslink = True,
    )
    cc_binary(
        name = "libckw_%s.so" % name,
        linkshared = True,
        deps = [":" + name],
    )
    _contract_header(
        name = name + "_contract",
        maps = maps,
        map_inputs = map_inputs,
        isas = isas,
    )
    ckw_kernel_entry(
        name = name + "_kernel",
        maps = maps,
        map_inputs = map_inputs,
        library = ":" + name,
        shared = ":libckw_%s.so" % name,
        isas = isas,
    )

    test_deps = [":" + name, "//kernels/common:testing"] + deps + test_deps
    cc_test(
        name = name + "_test",
        size = test_size,
        srcs = [name + "_test.c", ":%s_contract" % name],
        data = test_data,
        deps = test_deps,
        linkstatic = True,
    )
    if [i for i in isas if i in EMULATED_ISAS] and (emulated_srcs != [] or emulated_deps):
        cc_library(
            name = name + "_avx512emu",
            testonly = True,
            srcs = emulated_srcs if emulated_srcs != None else [name + "__avx512.c"],
            textual_hdrs = textual_hdrs,
            copts = EMULATION_COPTS,
            local_defines = ["CKW_EMULATE_AVX512"],
            deps = [":" + name] + deps + emulated_deps + common,
        )
        cc_test(
            name = name + "_avx512emu_test",
            size = test_size,
            srcs = [name + "_test.c", ":%s_contract" % name],
            data = test_data,
            local_defines = ["CKW_TEST_AVX512_EMULATION"],
            deps = test_deps + [":%s_avx512emu" % name],
            linkstatic = True,
        )
    if bench:
        cc_test(
            name = name + "_bench",
            size = "small",
            srcs = [name + "_bench.c", ":%s_contract" % name],
            deps = [":" + name, "//kernels/common:bench"] + deps,
            linkstatic = True,
        )
    for py in native.glob([name + "_py_test.py"]):
        py_pytest(
            name = name + "_py_test",
            size = "small",
            srcs = [py],
            args = ["-s"],  # error figures go to test.log
            data = maps + map_inputs + test_data + [":libckw_%s.so" % name],
            deps = ["//kernels/common:testing_py"] + py_deps,
        )

def ckw_kernel_family(name = "kernels"):
    """Ends a family's BUILD.bazel.

    Declares `:kernels`, the set of every ckw_kernel above it, and exports the family's maps.

    Args:
      name: the set's name.
    """
    native.exports_files(native.glob(["*.json"]))
    entries = sorted([":" + r["name"] for r in native.existing_rules().values() if r["kind"] == "ckw_kernel_entry"])
    if not entries:
        fail("ckw_kernel_family: no ckw_kernel in this package")
    ckw_kernel_set(name = name, deps = entries)
