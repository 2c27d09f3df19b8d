"""Whisper text tokens: the checkpoint's tokenizer.json through the `tokenizers` library.

The shipped tokenizer.json has no timestamp tokens: ids above <|notimestamps|> up to the
vocabulary size are timestamps in 0.02 s steps, mapped here. Special ids are read from the
checkpoint's model config, never hard-coded (they differ between tiny.en and multilingual base).

`decode`, `sot_sequence`, `blank_tokens`, `non_speech_tokens` and `suppress_tokens` equal
openai-whisper's `Tokenizer` / `DecodingTask` values (ckw/runtime/tokenizer_test.py). One deliberate
difference: an English-only checkpoint rejects a non-English language or the translate task,
which openai-whisper's `decode()` silently ignores.
"""

import json
import os
from typing import Dict, List, Optional, Sequence

import tokenizers

from ckw.checkpoints.non_speech import non_speech_tokens
from ckw.checkpoints.tokenizer_merges import RESTORED_KEY

TIME_PRECISION = 0.02

# Language codes that older tokenizer.json files use -> openai-whisper's code for the same token.
LEGACY_LANGUAGE_CODES = {"iw": "he"}
# Special tokens that older tokenizer.json files spell differently -> openai-whisper's spelling.
LEGACY_SPECIAL_TOKENS = {"<|nocaptions|>": "<|nospeech|>"}


class WhisperTokenizer:
    def __init__(self, tokenizer_json: str, model_config: Dict):
        c = model_config
        if RESTORED_KEY not in c:  # the packer records the BPE merges it restored into tokenizer.json
            raise ValueError(
                f"{tokenizer_json}: packed by an older packer (model_config.json has no "
                f"{RESTORED_KEY}); rebuild the checkpoint"
            )
        self.repaired_merges: List[str] = list(c[RESTORED_KEY])
        try:
            self._tok = tokenizers.Tokenizer.from_file(tokenizer_json)
        except Exception as e:  # the library raises a bare Exception on a bad file
            raise ValueError(f"{tokenizer_json}: not a readable tokenizer.json ({e}); rebuild the checkpoint") from e
        self.eot: int = c["eot"]
        self.sot: int = c["sot"]
        self.sot_prev: int = c["sot_prev"]
        self.sot_lm: int = c["sot_lm"]
        self.no_timestamps: int = c["no_timestamps"]
        self.no_speech: Optional[int] = c.get("no_speech")
        self.transcribe: int = c["transcribe"]
        self.translate: int = c["translate"]
        self.timestamp_begin: int = c["timestamp_begin"]
        self.n_vocab: int = c["n_vocab"]
        self.is_multilingual: bool = bool(c["is_multilingual"])
        self.language_ids: Dict[str, int] = dict(c.get("language_ids") or {})
        for legacy, code in LEGACY_LANGUAGE_CODES.items():
            if legacy in self.language_ids and code not in self.language_ids:
                self.language_ids[code] = self.language_ids.pop(legacy)
        # Special tokens as openai-whisper spells them (decode keeps them as text).
        self._special_text: Dict[int, str] = {}
        legacy_text = {f"<|{a}|>": f"<|{b}|>" for a, b in LEGACY_LANGUAGE_CODES.items()}
        legacy_text.update(LEGACY_SPECIAL_TOKENS)
        for t in range(self.eot, self.timestamp_begin):
            text = self._tok.id_to_token(t)
            if text is None:
                raise ValueError(f"{tokenizer_json}: special token id {t} is missing; rebuild the checkpoint")
            self._special_text[t] = legacy_text.get(text, text)
        self._checkpoint_suppress = [int(t) for t in c.get("suppress_tokens") or []]
        self._non_speech: Optional[List[int]] = None

    @classmethod
    def from_checkpoint(cls, directory: str) -> "WhisperTokenizer":
        """The tokenizer of a packed checkpoint directory (tokenizer.json + model_config.json)."""
        with open(os.path.join(directory, "model_config.json"), encoding="utf-8") as f:
            config = json.load(f)
        return cls(os.path.join(directory, "tokenizer.json"), config)

    def encode(self, text: str) -> List[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: Sequence[int]) -> str:
        """Text of the ids as openai-whisper's `Tokenizer.decode`: timestamp tokens are dropped,
        other special tokens are kept as their text (`<|en|>`, `<|endoftext|>`), and bytes that
        do not form valid UTF-8 become U+FFFD."""
        parts: List[str] = []
        run: List[int] = []  # text tokens; decoded together so multi-token characters join up
        for t in ids:
            t = int(t)
            if not 0 <= t < self.n_vocab:
                raise ValueError(f"token id {t} is outside this checkpoint's vocabulary [0, {self.n_vocab})")
            if t < self.eot:
                run.append(t)
            elif t < self.timestamp_begin:
                if run:
                    parts.append(self._tok.decode(run, skip_special_tokens=False))
                    run = []
                parts.append(self._special_text[t])
        if run:
            parts.append(self._tok.decode(run, skip_special_tokens=False))
        return "".join(parts)

    def is_timestamp(self, token: int) -> bool:
        return self.timestamp_begin <= token < self.n_vocab

    def timestamp_seconds(self, token: int) -> float:
        return (token - self.timestamp_begin) * TIME_PRECISION

    def language_token(self, language: str) -> int:
        try:
            return self.language_ids[language]
        except KeyError:
            known = ", ".join(sorted(self.language_ids)) or "none (English-only checkpoint)"
            raise ValueError(f"language {language!r} is not in this checkpoint; known: {known}") from None

    def sot_sequence(self, language: Optional[str], task: str) -> List[int]:
        """The forced prefix before <|notimestamps|>: openai-whisper's `sot_sequence`."""
        if task not in ("transcribe", "translate"):
            raise ValueError(f"task {task!r} is not one of transcribe, translate")
        if not self.is_multilingual:
            if language not in (None, "en"):
                raise ValueError(f"language {language!r} needs a multilingual checkpoint; this one is English-only")
            if task == "translate":
                raise ValueError("task 'translate' needs a multilingual checkpoint; this one is English-only")
            return [self.sot]
        seq = [self.sot]
        seq.append(self.language_token(language or "en"))
        seq.append(self.transcribe if task == "transcribe" else self.translate)
        return seq

    def blank_tokens(self) -> List[int]:
        """Suppressed at the first sampled position (openai-whisper's SuppressBlank)."""
        return self.encode(" ") + [self.eot]

    def non_speech_tokens(self) -> List[int]:
        """openai-whisper's `Tokenizer.non_speech_tokens`, derived from this vocabulary the same way:
        speaker tags, brackets and music symbols (alone or after a space), plus " -" and " '"
        (allowed inside words, not at their start). Basic punctuation stays allowed."""
        if self._non_speech is None:
            self._non_speech = non_speech_tokens(self.encode)
        return list(self._non_speech)

    def checkpoint_suppress_tokens(self) -> List[int]:
        """The checkpoint's own `suppress_tokens` (Hugging Face generation config); a cross-check only."""
        return sorted(set(self._checkpoint_suppress))

    def suppress_tokens(self) -> List[int]:
        """Suppressed at every sampled position: openai-whisper's default (`suppress_tokens="-1"`),
        the non-speech tokens plus the task and control tokens."""
        ids = set(self.non_speech_tokens())
        ids.update([self.transcribe, self.translate, self.sot, self.sot_prev, self.sot_lm])
        if self.no_speech is not None:
            ids.add(self.no_speech)
        return sorted(ids)
