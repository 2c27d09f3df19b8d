"""The README's Python examples run as written: each indented code block of its "Python API"
section and the faster-whisper script of "As a package", executed in a directory holding
jfk.wav, print JFK's words. The same text a pip user copies (`import ckw`, `from ckw import
WhisperModel`) runs in the tree, so the README cannot drift from the package."""

import contextlib
import io
import os
import re
import shutil

import pytest

from ckw import runfiles
from ckw.runtime.testing.offline_cache import offline_cache  # noqa: F401 (autouse fixture: no Hub, own cache)


def code_blocks(section: str) -> list[str]:
    """The indented (4-space) code blocks under README heading `section`, dedented."""
    with open(runfiles.locate("ckw", "README.md"), encoding="utf-8") as f:
        readme = f.read()
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert match, f"README.md has no section '## {section}'"
    blocks = re.findall(r"(?:^(?: {4}.*)?\n)+", match.group(1), re.M)
    return [re.sub(r"^ {4}", "", b, flags=re.M).strip("\n") + "\n" for b in blocks if b.strip()]


EXAMPLES = [code_blocks("Python API")[0]] + [
    b for b in code_blocks("As a package: `pip install`, `ckw`, `import ckw`") if b.startswith("from ckw import")
]


@pytest.mark.parametrize("code", EXAMPLES, ids=["engine", "faster_whisper_drop_in"])
def test_the_readme_example_runs_as_written(code, tmp_path, monkeypatch):
    shutil.copyfile(runfiles.locate("test_audio", "jfk.wav"), tmp_path / "jfk.wav")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102 (the README's own code)
    words = " ".join(re.findall(r"[a-z]+", out.getvalue().lower()))
    assert "ask not what your country can do for you" in words, out.getvalue()
    assert os.listdir(tmp_path) == ["jfk.wav"]  # the examples write nothing
