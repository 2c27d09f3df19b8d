"""A model's packed layout from its dimensions alone (layout.py) is the layout its published
checkpoints pack to: tiny.en's and base's, from the real checkpoints; the table of published
dimensions against openai-whisper's own alignment-head masks (one flag per decoder head)."""

import base64
import gzip
import json
import os

import numpy as np
import pytest
import whisper

from ckw.checkpoints import layout
from ckw.checkpoints.canonical import DIM_KEYS, ModelDims
from ckw.checkpoints.packed import LAYOUT_KEYS, runfiles_checkpoint_dir

# The build's checkpoints (@whisper_<variant>) and the published model each one is.
CHECKPOINTS = {"tiny": "tiny.en", "base": "base"}


@pytest.mark.parametrize("variant", sorted(CHECKPOINTS))
def test_a_real_checkpoint_packs_to_the_layout_of_its_dimensions(variant):
    folder = runfiles_checkpoint_dir(variant)
    with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    with open(os.path.join(folder, "model_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    dims = ModelDims(**{k: config[k] for k in DIM_KEYS})
    assert dims == layout.STANDARD[CHECKPOINTS[variant]]
    entries, nbytes = layout.layout(dims)
    assert [{k: t[k] for k in LAYOUT_KEYS} for t in manifest["tensors"]] == entries
    assert nbytes == manifest["weights_nbytes"]
    assert layout.layout_sha256(dims) == manifest["layout_sha256"]


@pytest.mark.parametrize("name", sorted(whisper._ALIGNMENT_HEADS))
def test_published_dimensions_match_openai_whispers_alignment_heads(name):
    dims = layout.STANDARD[{"large": "large-v3", "turbo": "large-v3-turbo"}.get(name, name)]
    mask = np.frombuffer(gzip.decompress(base64.b85decode(whisper._ALIGNMENT_HEADS[name])), dtype=bool)
    assert mask.size == dims.n_text_layer * dims.n_text_head


def test_every_published_model_has_a_layout_and_sizes_differ_only_in_name():
    digests = {name: layout.layout_sha256(dims) for name, dims in layout.STANDARD.items()}
    by_digest = {}
    for name, digest in digests.items():
        by_digest.setdefault(digest, []).append(name)
    # large-v1 and large-v2 differ in weights only: one layout, one set of libraries.
    assert sorted(sorted(v) for v in by_digest.values() if len(v) > 1) == [["large-v1", "large-v2"]]
    entries, nbytes = layout.layout(layout.STANDARD["large-v3"])
    assert entries[0]["shape"] == [1280, 128, 3]  # conv1 over 128 mel bins
    assert nbytes > 1_500_000_000  # ~1.55 B parameters, the GEMM weights in f16


def test_offsets_are_aligned_and_tensors_do_not_overlap():
    entries, nbytes = layout.layout(layout.STANDARD["small"])
    end = 0
    for t in entries:
        assert t["offset"] % 64 == 0 and t["offset"] >= end
        end = t["offset"] + t["nbytes"]
    assert end == nbytes


def test_inconsistent_dimensions_are_refused():
    bad = ModelDims(**{**layout.STANDARD["tiny"].to_dict(), "n_text_head": 5})
    with pytest.raises(Exception, match="not divisible by its 5 heads"):
        layout.layout(bad)
