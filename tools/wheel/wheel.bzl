"""`ckw_wheel`: the pip-installable wheel of a py_binary's program (tools/wheel/build_wheel.py)."""

def _is_weights(f):
    # Derived checkpoints (the bf16 weights) are weights: a wheel carries none.
    return "_checkpoint/" in f.short_path

def _ckw_wheel_impl(ctx):
    binary = ctx.attr.binary[DefaultInfo]
    runfiles = binary.default_runfiles.files.to_list()
    package = ctx.attr.package[DefaultInfo].files.to_list()
    for module in ctx.attr.modules:
        package += module[DefaultInfo].default_runfiles.files.to_list()
    launcher = binary.files_to_run.executable  # Bazel's stub script: the wheel's `ckw` replaces it
    files = [f for f in runfiles + package if not f.owner.workspace_name and not _is_weights(f) and f != launcher]
    files = {f.short_path: f for f in files}.values()  # once each
    listing = ctx.actions.declare_file(ctx.label.name + ".files")
    ctx.actions.write(listing, "".join(["%s\t%s\n" % (f.path, f.short_path) for f in files]))
    out = ctx.actions.declare_directory(ctx.label.name)
    args = ctx.actions.args()
    args.add("--files", listing)
    args.add("--lock", ctx.file.lock)
    args.add("--module", ctx.file.module)
    args.add("--out_dir", out.path)
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = list(files) + [listing, ctx.file.lock, ctx.file.module],
        outputs = [out],
        mnemonic = "CkwWheel",
        progress_message = "Writing the ckw wheel (%d files)" % len(files),
    )
    return [
        DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out])),
        OutputGroupInfo(listing = depset([listing])),  # wheel_test rebuilds from it: the same bytes
    ]

ckw_wheel = rule(
    implementation = _ckw_wheel_impl,
    attrs = {
        "binary": attr.label(mandatory = True, doc = "the command the wheel's `ckw` is; its runfiles are the contents"),
        "package": attr.label(mandatory = True, doc = "the public package's sources (ckw/)"),
        "modules": attr.label_list(doc = "more py_libraries the package carries (under ckw/ like the rest)"),
        "lock": attr.label(allow_single_file = True, mandatory = True),
        "module": attr.label(allow_single_file = True, mandatory = True, doc = "MODULE.bazel: the version"),
        "_builder": attr.label(default = "//tools/wheel:build_wheel", executable = True, cfg = "exec"),
    },
    doc = "A directory holding ckw-<version>-py3-none-<manylinux tag>.whl.",
)

def _ckw_model_wheel_impl(ctx):
    out = ctx.actions.declare_directory(ctx.label.name)
    args = ctx.actions.args()
    args.add("--model", ctx.attr.model)
    args.add("--module", ctx.file.module)
    args.add("--out_dir", out.path)
    args.add_all(ctx.files.checkpoint)
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = ctx.files.checkpoint + [ctx.file.module],
        outputs = [out],
        mnemonic = "CkwModelWheel",
        progress_message = "Writing the wheel of the %s checkpoint" % ctx.attr.model,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

ckw_model_wheel = rule(
    implementation = _ckw_model_wheel_impl,
    attrs = {
        "model": attr.string(mandatory = True, doc = "the model name --model takes (tiny.en, base)"),
        "checkpoint": attr.label(allow_files = True, mandatory = True, doc = "the packed checkpoint's files"),
        "module": attr.label(allow_single_file = True, mandatory = True, doc = "MODULE.bazel: the version"),
        "_builder": attr.label(default = "//tools/wheel:build_model_wheel", executable = True, cfg = "exec"),
    },
    doc = "A directory holding ckw_model_<name>-<version>-py3-none-any.whl (tools/wheel/build_model_wheel.py).",
)
