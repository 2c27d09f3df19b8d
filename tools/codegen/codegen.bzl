"""Build rules that run the circuit compiler (//tools/codegen) as a build action.

Starlark cannot read the circuit JSON at analysis time, so the caller states the part and
phases; the compiler's outputs are then known: <out>/ckw_<variant>_<part>.{c,h},
<out>/abi.json (the ABI as data, also returned by the library's ckw_<variant>_<part>_abi_json()),
<out>/plan_<phase>.json, <out>/ir.json and <out>/explain.json (the compiler's decisions as data,
drawn by the IR explorer page `<name>_explorer`).
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")
load(":explorer.bzl", "ckw_explorer_page")
load(":kernel_info.bzl", "CkwKernelInfo")

def _ckw_codegen_impl(ctx):
    prefix = "ckw_%s_%s" % (ctx.attr.variant, ctx.attr.part)
    c = ctx.actions.declare_file("%s/%s.c" % (ctx.label.name, prefix))
    h = ctx.actions.declare_file("%s/%s.h" % (ctx.label.name, prefix))
    ir = ctx.actions.declare_file("%s/ir.json" % ctx.label.name)
    abi = ctx.actions.declare_file("%s/abi.json" % ctx.label.name)
    explain = ctx.actions.declare_file("%s/explain.json" % ctx.label.name)
    plans = [ctx.actions.declare_file("%s/plan_%s.json" % (ctx.label.name, p)) for p in ctx.attr.phases]
    args = ctx.actions.args()
    args.add("--circuit", ctx.file.circuit)
    args.add("--config", ctx.file.config)
    if ctx.file.manifest:
        args.add("--manifest", ctx.file.manifest)
    kernels = [k[CkwKernelInfo] for k in ctx.attr.kernels]
    maps = depset(transitive = [k.maps for k in kernels])
    args.add_all(maps, before_each = "--kernel_maps")
    args.add("--variant", ctx.attr.variant)
    args.add_all(depset(transitive = [k.libraries for k in kernels]), before_each = "--library")
    args.add("--out_dir", c.dirname)
    args.add("--quiet")
    inputs = [ctx.file.circuit, ctx.file.config] + depset(transitive = [k.map_inputs for k in kernels]).to_list()
    if ctx.file.manifest:
        inputs.append(ctx.file.manifest)
    ctx.actions.run(
        executable = ctx.executable._compiler,
        arguments = [args],
        inputs = inputs,
        outputs = [c, h, abi, ir, explain] + plans,
        mnemonic = "CkwCodegen",
        progress_message = "Compiling circuit %s into %s" % (ctx.file.circuit.short_path, prefix),
    )
    return [
        DefaultInfo(files = depset([c, h, abi, ir, explain] + plans)),
        OutputGroupInfo(c = depset([c]), h = depset([h]), json = depset([abi, ir, explain] + plans)),
    ]

ckw_codegen = rule(
    implementation = _ckw_codegen_impl,
    doc = "Runs the circuit compiler: generated C, its ABI header and abi.json, per-phase plans and the call IR.",
    attrs = {
        "circuit": attr.label(allow_single_file = [".json"], mandatory = True, doc = "Circuit JSON."),
        "config": attr.label(allow_single_file = [".json"], mandatory = True, doc = "Model config JSON (dims)."),
        "manifest": attr.label(allow_single_file = [".json"], doc = "Checkpoint manifest (weight offsets and hash)."),
        "kernels": attr.label_list(
            providers = [CkwKernelInfo],
            mandatory = True,
            doc = "Kernel sets (e.g. //kernels:model_kernels): the maps the compiler selects from and the libraries they name.",
        ),
        "variant": attr.string(mandatory = True, doc = "First half of the symbol prefix, e.g. tiny."),
        "part": attr.string(mandatory = True, doc = "The circuit's part (must match its \"part\")."),
        "phases": attr.string_list(mandatory = True, doc = "The circuit's phases, in its order."),
        "_compiler": attr.label(default = "//tools/codegen", executable = True, cfg = "exec"),
    },
)

def _version_script_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".lds")
    ctx.actions.write(out, "{\n  global:\n    %s_*;\n  local:\n    *;\n};\n" % ctx.attr.prefix)
    return [DefaultInfo(files = depset([out]))]

_version_script = rule(
    implementation = _version_script_impl,
    attrs = {"prefix": attr.string(mandatory = True)},
)

def ckw_model_library(name, circuit, config, kernels, variant, part, phases, manifest = None, visibility = None, testonly = False, tags = None):
    """Generated C for one circuit, as a cc_library and a shared library exporting only its prefix.

    Targets: `<name>_c` (the generated files), `<name>_lib` (cc_library), `libckw_<variant>_<part>.so`
    (shared library; only `ckw_<variant>_<part>_*` symbols are exported), `<name>` (the .so
    plus its header) and `<name>_explorer` (the IR explorer page, `<name>_explorer.html`).

    Args:
      name: target name, e.g. tiny_decoder.
      circuit: circuit JSON label.
      config: model config JSON label.
      kernels: kernel sets providing CkwKernelInfo (//tools/codegen:kernel_info.bzl), e.g.
        //kernels:model_kernels: the maps the compiler selects from, linked as their libraries.
      variant: symbol prefix variant, e.g. tiny.
      part: the circuit's part, e.g. decoder.
      phases: the circuit's phases.
      manifest: checkpoint manifest JSON label (needed when the circuit reads weights).
      visibility: visibility of the public targets.
      testonly: for test-only circuits.
      tags: of every target (e.g. ["manual"] for libraries `//...` should not build).
    """
    prefix = "ckw_%s_%s" % (variant, part)
    ckw_codegen(
        name = name + "_c",
        circuit = circuit,
        config = config,
        manifest = manifest,
        kernels = kernels,
        variant = variant,
        part = part,
        phases = phases,
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
    for group in ("c", "h", "json"):
        native.filegroup(
            name = "%s_%s_files" % (name, group),
            srcs = [":" + name + "_c"],
            output_group = group,
            testonly = testonly,
            tags = tags,
            visibility = visibility,
        )
    cc_library(
        name = name + "_lib",
        srcs = [":%s_c_files" % name],
        hdrs = [":%s_h_files" % name],
        # The generated C holds what the circuit decides and compiles without a warning (.bazelrc
        # has -Wall -Wextra); the handle's fixed code is the support library's, compiled once.
        copts = ["-Werror"],
        deps = kernels + ["//tools/codegen/support:ckw_handle"],
        # Linked in whole, never as a shared object of its own: the support code it calls is
        # hidden (tools/codegen/support/ckw_support.h), so a test linking this library
        # dynamically could not reach it.
        linkstatic = True,
        alwayslink = True,  # nothing in the .so references the entry points; keep them
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
    _version_script(name = name + "_exports", prefix = prefix, testonly = testonly, tags = tags)
    cc_binary(
        name = "lib%s.so" % prefix,
        linkshared = True,
        deps = [":" + name + "_lib"],
        additional_linker_inputs = [":%s_exports" % name],
        linkopts = ["-Wl,--version-script=$(location :%s_exports)" % name],
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
    native.filegroup(
        name = name,
        srcs = [":lib%s.so" % prefix, ":%s_h_files" % name],
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
    ckw_explorer_page(
        name = name + "_explorer",
        library = ":" + name + "_c",
        testonly = testonly,
        tags = tags,
        visibility = visibility,
    )
