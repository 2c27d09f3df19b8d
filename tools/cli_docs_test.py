"""docs/cli.md documents the CLI as it is, and the README stays a front door.

The flags are read from //tools:transcribe itself (the absl flags its module defines), the
environment variables from the sources that read them (ckw/runtime/*.py and ckw/cli/transcribe.py), so a
new flag or variable fails this test until docs/cli.md describes it.
"""

import glob
import os
import re

from absl import flags

from ckw import runfiles
from ckw.cli import transcribe
from ckw.runtime import engine

README_MAX_LINES = 160
ENV_VAR = re.compile(r"\bCKW_[A-Z0-9_]*[A-Z0-9]\b")


def _read(path: str) -> str:
    with open(runfiles.locate("ckw", path), encoding="utf-8") as f:
        return f.read()


def cli_flags() -> list[str]:
    """Names of the flags ckw/cli/transcribe.py defines (absl's own and other modules' excluded)."""
    return sorted(f.name for f in flags.FLAGS.get_flags_for_module(transcribe))


def documented_flags(doc: str) -> dict[str, str]:
    """`--name` -> its row, for every flag named in the first cell of a table row of `doc`."""
    rows = {}
    for line in doc.splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 2:
            for name in re.findall(r"`--([a-z0-9_]+)", cells[1]):
                rows[name] = line
    return rows


def env_vars_read() -> set[str]:
    """Every CKW_ variable named in the runtime's modules and the CLI (tests excluded)."""
    sources = glob.glob(os.path.join(os.path.dirname(engine.__file__), "*.py")) + [transcribe.__file__]
    names = set()
    for path in sources:
        if not path.endswith("_test.py"):
            with open(path, encoding="utf-8") as f:
                names.update(ENV_VAR.findall(f.read()))
    return names


def test_the_flags_are_found():
    names = cli_flags()
    assert {"wav", "model", "precision", "word_timestamps", "condition_on_previous_text", "threads"} <= set(names)
    assert "help" not in names and "flagfile" not in names  # absl's own, documented in prose


def test_every_flag_has_a_row_in_cli_md():
    rows = documented_flags(_read("docs/cli.md"))
    missing = [f"--{name}" for name in cli_flags() if name not in rows]
    assert not missing, f"docs/cli.md has no table row for {', '.join(missing)}; add one to its flags table"


def test_every_documented_flag_exists():
    stale = [f"--{name}" for name in documented_flags(_read("docs/cli.md")) if name not in cli_flags()]
    assert not stale, f"docs/cli.md documents {', '.join(stale)}, which //tools:transcribe does not define"


def test_every_environment_variable_is_in_cli_md():
    names = env_vars_read()
    assert {"CKW_NUM_THREADS", "CKW_ISA"} <= names, f"the source scan found only {sorted(names)}"
    doc = _read("docs/cli.md")
    missing = sorted(name for name in names if f"`{name}`" not in doc)
    assert not missing, f"docs/cli.md does not describe {', '.join(missing)}"


def test_readme_is_a_front_door():
    lines = _read("README.md").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}; move detail to docs/"
    )
    readme = "\n".join(lines)
    for page in ("cli", "python-api", "corpus", "benchmarks", "precision", "development"):
        assert f"(docs/{page}.md" in readme, f"README.md does not link docs/{page}.md"
