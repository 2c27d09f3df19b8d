"""Whisper's tokenizer by kind, for checkpoints that ship none (openai-whisper `.pt` files, Hugging
Face directories without tokenizer.json).

There are three kinds, told apart by the vocabulary size: English-only (51864 ids, GPT-2's 50256
ranks), multilingual (51865, 50257 ranks) and v3 (51866: one more language token, <|yue|>).
openai-whisper builds them in `whisper/tokenizer.py:get_encoding` from its shipped rank files
(`assets/gpt2.tiktoken`, `assets/multilingual.tiktoken`: base64 token bytes and rank per line) and
its `LANGUAGES` table. This module derives the same vocabulary as a Hugging Face tokenizer.json
that the `tokenizers` library (ckw/runtime/tokenizer.py) loads:

  * vocab: every ranked token's bytes written in GPT-2's byte-to-unicode alphabet, id = rank;
  * merges: for each multi-byte token, the two parts that tiktoken's BPE holds just before it
    forms the token (BPE over its bytes with only lower ranks allowed), in rank order, so the
    Hugging Face BPE merges exactly as tiktoken does;
  * added tokens: the specials after the ranks in get_encoding's order (<|endoftext|>,
    <|startoftranscript|>, the first n languages, <|translate|>, <|transcribe|>, <|startoflm|>,
    <|startofprev|>, <|nospeech|>, <|notimestamps|>). The 1501 timestamp ids that follow are not
    written: ckw/runtime/tokenizer.py maps them itself, as for the shipped files.

The files are build outputs (genrule `:kind_tokenizers` runs this as `:tokenizer_kinds`), data of
`:checkpoint`. Where they are not built (the repository rule runs fetch.py from the source tree),
`tokenizer_path` derives the kind's file once into a temporary directory. Only the asset files
are read: openai-whisper itself is never imported (it imports torch).
"""

from __future__ import annotations

import argparse
import ast
import atexit
import base64
import importlib.util
import json
import os
import shutil
import sys
import tempfile

from ckw.checkpoints.errors import CheckpointError

N_TIMESTAMPS = 1501
# The specials after the language tokens, in get_encoding's order.
_TASK_SPECIALS = (
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nospeech|>",
    "<|notimestamps|>",
)
# kind -> (openai-whisper rank file, vocabulary size of the model)
KINDS = {
    "english": ("gpt2", 51864),
    "multilingual": ("multilingual", 51865),
    "v3": ("multilingual", 51866),
}
# Same as the official openai/whisper-* tokenizer.json files.
_PRE_TOKENIZER = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_DECODER = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
_WORKSPACE = "ckw"
_PACKAGE = "ckw/checkpoints"


def file_name(kind: str) -> str:
    return f"tokenizer_{kind}.json"


def kind_for_n_vocab(n_vocab: int, where: str) -> str:
    """The tokenizer kind of a model with `n_vocab` output ids."""
    for kind, (_, n) in KINDS.items():
        if n == n_vocab:
            return kind
    known = ", ".join(f"{n} ({k})" for k, (_, n) in KINDS.items())
    raise CheckpointError(
        f"{where}: vocabulary size {n_vocab} is none of Whisper's ({known}); the checkpoint has no tokenizer "
        "to derive, give one with its tokenizer.json"
    )


def whisper_assets() -> str:
    """openai-whisper's package directory, found without importing it (that would import torch)."""
    spec = importlib.util.find_spec("whisper")
    if spec is None or not spec.submodule_search_locations:
        raise CheckpointError(
            f"Python package 'openai-whisper' is not installed in {sys.prefix}; its vocabulary files are needed "
            "for a checkpoint without tokenizer.json (run ./bazelw, it builds .venv from requirements_lock.txt)"
        )
    return next(iter(spec.submodule_search_locations))


def _read_ranks(path: str) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    try:
        with open(path, encoding="ascii") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: unreadable rank file ({e}); reinstall openai-whisper") from e
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise CheckpointError(f"{path}: ranks are not 0..{len(ranks) - 1} without gaps; reinstall openai-whisper")
    return ranks


def _read_languages(path: str) -> list[str]:
    """The language codes of openai-whisper's LANGUAGES, in order, read from its source (not imported)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError) as e:
        raise CheckpointError(f"{path}: unreadable ({e}); reinstall openai-whisper") from e
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "LANGUAGES" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise CheckpointError(f"{path}: no LANGUAGES table; this openai-whisper version is not supported")


def byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> printable character map: printable Latin-1 bytes stand for themselves, the
    others (controls, space, ...) take the code points from 256 on, in byte order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    out = {b: chr(b) for b in keep}
    extra = 256
    for b in range(256):
        if b not in out:
            out[b] = chr(extra)
            extra += 1
    return out


def _last_merge(token: bytes, rank: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """The two parts tiktoken's BPE joins last when it encodes `token` (merging only lower ranks)."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, at = rank, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1], rank)
            if r < best:
                best, at = r, i
        if at < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    if len(parts) != 2:
        raise CheckpointError(f"token {token!r} (rank {rank}) is not the merge of two lower-ranked tokens")
    return parts[0], parts[1]


def derive(kind: str, package_dir: str) -> dict:
    """The tokenizer.json document of `kind` from openai-whisper's files under `package_dir`."""
    if kind not in KINDS:
        raise CheckpointError(f"unknown tokenizer kind '{kind}'; expected one of {sorted(KINDS)}")
    asset, n_vocab = KINDS[kind]
    ranks_path = os.path.join(package_dir, "assets", f"{asset}.tiktoken")
    ranks = _read_ranks(ranks_path)
    languages = _read_languages(os.path.join(package_dir, "tokenizer.py"))
    n_languages = n_vocab - len(ranks) - 2 - len(_TASK_SPECIALS) - N_TIMESTAMPS
    if not 0 < n_languages <= len(languages):
        raise CheckpointError(
            f"{ranks_path}: {len(ranks)} ranks leave {n_languages} language tokens for the {n_vocab}-id {kind} "
            f"vocabulary, but openai-whisper knows {len(languages)}; this openai-whisper version does not fit"
        )
    alphabet = byte_alphabet()

    def text(token: bytes) -> str:
        return "".join(alphabet[b] for b in token)

    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    if sorted(t for t, _ in by_rank if len(t) == 1) != [bytes([b]) for b in range(256)]:
        raise CheckpointError(f"{ranks_path}: not every byte is a token; not a byte-level BPE vocabulary")
    merges = [" ".join(map(text, _last_merge(token, rank, ranks))) for token, rank in by_rank if len(token) > 1]
    specials = [
        "<|endoftext|>",
        "<|startoftranscript|>",
        *(f"<|{code}|>" for code in languages[:n_languages]),
        *_TASK_SPECIALS,
    ]
    vocab = {text(token): rank for token, rank in by_rank}
    vocab[specials[0]] = len(ranks)  # as in the official files: <|endoftext|> is also in the BPE vocab
    added = [
        {
            "id": len(ranks) + i,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, s in enumerate(specials)
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": dict(_PRE_TOKENIZER),
        # No template: the runtime builds its own prompts and encodes without special tokens.
        "post_processor": None,
        "decoder": dict(_DECODER),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


def write(kind: str, package_dir: str, path: str) -> None:
    doc = derive(kind, package_dir)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)


_derived_dir: list[str] = []  # the temporary directory of on-demand derivations, made at most once


def _built(kind: str) -> str | None:
    name = file_name(kind)
    candidates = [os.path.join(os.path.dirname(os.path.abspath(__file__)), name)]
    for var in ("RUNFILES_DIR", "TEST_SRCDIR"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], _WORKSPACE, _PACKAGE, name))
    return next((c for c in candidates if os.path.isfile(c)), None)


def tokenizer_path(kind: str) -> str:
    """Path of the tokenizer.json of `kind`: the built file (next to this module in a Bazel
    runfiles tree, or under RUNFILES_DIR/TEST_SRCDIR), else derived now into a temporary
    directory that lives until the process exits."""
    if kind not in KINDS:
        raise CheckpointError(f"unknown tokenizer kind '{kind}'; expected one of {sorted(KINDS)}")
    found = _built(kind)
    if found:
        return found
    if not _derived_dir:
        _derived_dir.append(tempfile.mkdtemp(prefix="ckw-tokenizers-"))
        atexit.register(shutil.rmtree, _derived_dir[0], True)
    path = os.path.join(_derived_dir[0], file_name(kind))
    if not os.path.isfile(path):
        write(kind, whisper_assets(), path)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write Whisper's tokenizer.json of each kind from openai-whisper's files.")
    ap.add_argument("--out_dir", required=True)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ", ".join(KINDS))
    args = ap.parse_args(argv)
    try:
        package_dir = whisper_assets()
        for kind in args.kinds.split(","):
            write(kind, package_dir, os.path.join(args.out_dir, file_name(kind)))
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
