"""`seed_corpus`: a directory of fuzzer seeds written at build time by a generator (nothing
binary is committed)."""

def _seed_corpus_impl(ctx):
    out = ctx.actions.declare_directory(ctx.label.name)
    ctx.actions.run(
        executable = ctx.executable.generator,
        arguments = ["--out_dir", out.path],
        outputs = [out],
        mnemonic = "SeedCorpus",
        progress_message = "Writing the fuzz seed corpus %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

seed_corpus = rule(
    implementation = _seed_corpus_impl,
    doc = "Runs `generator --out_dir DIR`; the directory is the target's one output.",
    attrs = {
        "generator": attr.label(executable = True, cfg = "exec", mandatory = True),
    },
)
