"""tools/lint/layers.py on small trees: an upward import and an import of tests are found, with
file and line; downward imports, test code and third-party imports pass."""

from tools.lint import layers


def test_upward_imports_and_imports_of_tests_are_found():
    found = layers.violations(
        {
            "ckw/runtime/engine.py": (
                "import numpy\nfrom ckw.checkpoints import packed\n\ndef f():\n    from ckw.cli import x\n"
            ),
            "ckw/checkpoints/store.py": "from ckw import runfiles\nfrom ckw import whisper_model\n",
            "ckw/server/app.py": "from tools import model_spec\n",
            "tools/bench/wer.py": "from tests.e2e import clips\n",
        }
    )
    assert found == [
        "ckw/checkpoints/store.py:2: imports ckw.whisper_model, a higher layer (tools/lint/layers.py LAYERS)",
        "ckw/runtime/engine.py:5: imports ckw.cli, a higher layer (tools/lint/layers.py LAYERS)",
        "ckw/server/app.py:1: imports tools, a higher layer (tools/lint/layers.py LAYERS)",
        "tools/bench/wer.py:1: imports tests.e2e, test code; only tests may",
    ]


def test_downward_imports_and_test_code_pass():
    assert not layers.violations(
        {
            "ckw/cli/transcribe.py": "from ckw.runtime import engine\nfrom ckw import runfiles\n",
            "ckw/whisper_model.py": "from ckw.cli import transcribe\n",
            "tools/benchmark_e2e.py": "from ckw.runtime.testing import doubles\nimport ckw\n",
            "ckw/runtime/engine_test.py": "from tests.e2e import clips\nfrom tools.bench import wer\n",
            "tests/e2e/x.py": "from tools.bench import wer\n",
        }
    )
