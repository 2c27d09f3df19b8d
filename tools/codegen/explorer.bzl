"""Build rules for the IR explorer (//tools/codegen/explorer): one HTML page per generated
library, and the index that `./bazelw run //tools/codegen:explore -- --model M --part P` picks
a library from. Both read the compiler's own outputs (the `json` output group of a
`ckw_codegen` target: explain.json, ir.json, plan_<phase>.json)."""

def _json_outputs(target):
    files = target[OutputGroupInfo].json.to_list()
    explain = [f for f in files if f.basename == "explain.json"]
    if not explain:
        fail("%s has no explain.json in its json output group: it must be a ckw_codegen target" % target.label)
    return files, explain[0].dirname, explain[0].short_path[:-len("/explain.json")]

def _page_impl(ctx):
    files, directory, _ = _json_outputs(ctx.attr.library)
    out = ctx.actions.declare_file(ctx.label.name + ".html")
    ctx.actions.run(
        executable = ctx.executable._explore,
        arguments = ["--outputs", directory, "--out", out.path, "--quiet"],
        inputs = files,
        outputs = [out],
        mnemonic = "CkwExplorer",
        progress_message = "Drawing the IR explorer page %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

ckw_explorer_page = rule(
    implementation = _page_impl,
    doc = "The IR explorer page (<name>.html) of one generated library.",
    attrs = {
        "library": attr.label(mandatory = True, doc = "A ckw_codegen target (`<library>_c`)."),
        "_explore": attr.label(default = "//tools/codegen:explore_page", executable = True, cfg = "exec"),
    },
)

def _index_impl(ctx):
    up = "../" * len(ctx.label.package.split("/")) if ctx.label.package else ""
    libraries, files = {}, []
    for target, keys in ctx.attr.libraries.items():
        outputs, _, short = _json_outputs(target)
        files += outputs
        for key in keys.split(","):
            model = key.split("/")[0]
            entry = {"outputs": up + short, "short_path": short}
            if model in ctx.attr.xray_tests:
                test = Label(ctx.attr.xray_tests[model])
                entry["xray_test"] = {"label": str(test), "package": test.package, "name": test.name}
            libraries[key] = entry
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode({"libraries": libraries}))
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out] + files))]

ckw_explorer_index = rule(
    implementation = _index_impl,
    doc = "<name>.json: `<model>/<part>` -> the library's compiler outputs (relative to the index) " +
          "and the X-ray parity test whose outputs hold its measured errors.",
    attrs = {
        "libraries": attr.label_keyed_string_dict(
            mandatory = True,
            doc = "ckw_codegen target -> its `<model>/<part>` key(s), comma-separated when several models share it.",
        ),
        "xray_tests": attr.string_dict(doc = "model -> the X-ray parity test label that measures it."),
    },
)
