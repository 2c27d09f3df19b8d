"""Output files written whole or not at all, durable before the journal records them."""

import os

PARTIAL_SUFFIX = ".partial"


def output_relpath(relpath: str, output_format: str) -> str:
    return f"{relpath}.{output_format}"


def write_durably(output_dir: str, relpath: str, text: str) -> None:
    """Writes `text` to output_dir/relpath via a sibling .partial file: fsync, rename, fsync the
    folder. Only the driver writes (under the journal's lock), so the .partial name is its own;
    one left by a killed run belongs to a file that is not journaled done and is redone."""
    path = os.path.join(output_dir, relpath)
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    partial = path + PARTIAL_SUFFIX
    with open(partial, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
