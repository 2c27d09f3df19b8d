"""Where the corpus tool writes each transcript (ckw/runtime/output_file.py writes it whole and
durable before the journal records it)."""


def output_relpath(relpath: str, output_format: str) -> str:
    return f"{relpath}.{output_format}"
