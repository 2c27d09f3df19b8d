"""The shared test audio's MANIFEST.tsv (one per folder of ../shared/data/audio): its one reader,
for tests, benchmarks and tools alike."""

import csv
import os


def rows(folder: str) -> list[dict[str, str]]:
    """The rows of `folder`/MANIFEST.tsv in order, each by the header's column names (file, seconds,
    language, transcript, ...), plus `path`: the file's absolute path."""
    manifest = os.path.join(folder, "MANIFEST.tsv")
    with open(manifest, encoding="utf-8", newline="") as f:
        table = [row for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if row.get("file")]
    for row in table:
        row["path"] = os.path.join(os.path.abspath(folder), row["file"])
    return table
