"""`openai_reference`: openai-whisper's results for a reference set (tests/e2e/references.py),
computed by build actions and shared by every test that lists the target in its data."""

def _reference_action_impl(ctx):
    roots = {f.owner.workspace_root: True for f in ctx.files.audio}.keys()
    if len(roots) != 1:
        fail("audio must come from one repository (@test_audio), got %s" % roots)
    outs = []
    for part in range(ctx.attr.parts):
        suffix = ".part%d" % part if ctx.attr.parts > 1 else ""
        out = ctx.actions.declare_file(ctx.attr.out_name + suffix + ".openai.json")
        args = ctx.actions.args()
        args.add("--set", ctx.attr.set)
        args.add("--variant", ctx.attr.variant)
        args.add("--audio_root", roots[0])
        args.add_all(ctx.attr.cases, before_each = "--case")
        args.add("--part", str(part))
        args.add("--parts", str(ctx.attr.parts))
        args.add("--out", out)
        ctx.actions.run(
            executable = ctx.executable.tool,
            arguments = [args],
            inputs = ctx.files.audio,
            outputs = [out],
            mnemonic = "OpenaiReference",
            progress_message = "openai-whisper %s reference %s %s, part %d of %d" % (
                ctx.attr.set,
                ctx.attr.variant,
                " ".join(ctx.attr.cases),
                part + 1,
                ctx.attr.parts,
            ),
        )
        outs.append(out)
    return [DefaultInfo(files = depset(outs))]

_reference_action = rule(
    implementation = _reference_action_impl,
    attrs = {
        "audio": attr.label_list(allow_files = True, mandatory = True),
        "cases": attr.string_list(),
        "out_name": attr.string(mandatory = True),
        "parts": attr.int(default = 1),
        "set": attr.string(mandatory = True),
        "tool": attr.label(cfg = "exec", executable = True, mandatory = True),
        "variant": attr.string(mandatory = True, values = ["tiny", "base"]),
    },
)

def _exec_config_files_impl(ctx):
    files = depset(transitive = [src[DefaultInfo].files for src in ctx.attr.srcs])
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

# The files of `srcs` built in the exec configuration: the same action keys and output paths
# whatever the target configuration (opt here, dbg for .ci/steps/sanitizers.sh's ASan and UBSan
# runs), so those runs reuse the references instead of computing them again.
_exec_config_files = rule(
    implementation = _exec_config_files_impl,
    attrs = {"srcs": attr.label_list(cfg = "exec", mandatory = True)},
)

def openai_reference(name, set, variant, audio, parts = 1, cases = [], visibility = None):
    """openai-whisper's results for `set` (a name in references.py's SETS) on `variant`.

    Args:
      name: the target to list in a test's data (its runfiles: the JSON files beside
        references.py, which `references.load` reads).
      set: the reference set.
      variant: "tiny" or "base".
      audio: the @test_audio filegroups the set's clips are in.
      parts: the number of actions; part i computes every parts-th case from the i-th, so
        parts run in parallel.
      cases: only these case ids of the set.
      visibility: of `name`.
    """
    _reference_action(
        name = name + "_action",
        testonly = True,
        audio = audio,
        cases = cases,
        out_name = name,
        parts = parts,
        set = set,
        # The tool's runfiles hold the oracle, the variant's checkpoint and requirements_lock.txt:
        # a change to any of them computes the references again.
        tool = "//tests/e2e:make_references_%s" % variant,
        variant = variant,
        tags = ["manual"],  # built through `name`, in the exec configuration only
        visibility = ["//visibility:private"],
    )
    _exec_config_files(
        name = name,
        testonly = True,
        srcs = [":%s_action" % name],
        visibility = visibility,
    )
