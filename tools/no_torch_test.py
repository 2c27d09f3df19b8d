"""Nothing the CLI loads imports torch or openai-whisper; the reference code is test-only.

1. In a fresh interpreter with this test's import path: import ckw.cli.transcribe and every module
   of the runtime package, run the CLI on the built-in demo clip (so lazy imports count too),
   and list the torch / whisper modules in sys.modules: there must be none. A control run that
   imports whisper shows the check sees them.
2. //tools:transcribe's Bazel dependency graph (genquery :transcribe_deps) has no target of
   the reference package //models/whisper/reference and nothing named torch; every target of
   that package is testonly (genquery :reference_non_testonly is empty), so Bazel refuses any
   non-test target that depends on it.
"""

import json
import os
import subprocess
import sys

from ckw import runfiles

FORBIDDEN = ("torch", "whisper")

SCRIPT = r"""
import json, pkgutil, sys
import ckw.cli.transcribe
import ckw.runtime
for info in pkgutil.iter_modules(ckw.runtime.__path__, "ckw.runtime."):
    if not info.name.endswith("_test"):
        __import__(info.name)
if {run_cli!r}:
    from absl import flags
    flags.FLAGS(["transcribe", "--output_format=json"])
    rc = ckw.cli.transcribe.main(["transcribe"])
    assert rc in (0, None), f"transcribe returned {{rc}}"
{extra}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {forbidden!r})
runtime_modules = sorted(m for m in sys.modules if m.startswith("ckw.runtime."))
print("\n" + json.dumps({{"loaded": loaded, "runtime": runtime_modules}}))
"""


def run(run_cli: bool, extra: str = "") -> tuple:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(run_cli=run_cli, extra=extra, forbidden=FORBIDDEN)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"subprocess failed (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    *printed, last = proc.stdout.strip().splitlines()
    return json.loads(last), "\n".join(printed)


def test_cli_and_runtime_import_no_torch():
    result, printed = run(run_cli=True)
    assert json.loads(printed)["text"].strip(), "the CLI printed no transcript of the demo clip"
    assert {"ckw.runtime.engine", "ckw.runtime.longform", "ckw.runtime.decoding"} <= set(result["runtime"])
    assert result["loaded"] == [], (
        f"the CLI loaded {result['loaded']}: reference code (PyTorch, openai-whisper) belongs in "
        "//models/whisper/reference (testonly), never in runtime/ or ckw/cli/transcribe.py"
    )


def test_the_check_sees_whisper():
    result, _ = run(run_cli=False, extra="import whisper")
    assert "torch" in result["loaded"] and "whisper" in result["loaded"]


def labels(name: str) -> list:
    with open(runfiles.locate("ckw", f"tools/{name}"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def test_transcribe_depends_on_no_reference_target():
    deps = labels("transcribe_deps")
    assert "//ckw/runtime:runtime" in deps and "//ckw/cli:transcribe" in deps
    bad = [d for d in deps if d.startswith("//models/whisper/reference") or "torch" in d.lower()]
    assert bad == [], f"//tools:transcribe depends on reference code: {bad}"


def test_reference_package_is_testonly():
    assert labels("reference_non_testonly") == [], (
        "every target in //models/whisper/reference must be testonly (package(default_testonly = True))"
    )
