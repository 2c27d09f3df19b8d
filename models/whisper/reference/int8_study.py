"""How far a quantization scheme moves Whisper from its float32 self, measured two ways on the
shared LibriSpeech clips: the WER gap (greedy decoding, what the old WER gate measured) and,
with far less chance in it, the decoder's next-token distribution teacher-forced on float32's
own tokens (top-1 agreement and KL divergence per token).

    ./bazelw run //models/whisper/reference:int8_study -- --model tiny
    ./bazelw run //models/whisper/reference:int8_study -- --model base --schemes int8,int8-act-g32 --clips 10

Each scheme is simulated on openai-whisper's PyTorch model (the reference, loaded with the packed
checkpoint's weights): every Linear layer and the tied token embedding (lookup and logits) get
fake-quantized weights, and their inputs are fake-quantized as the int8 kernels quantize them
(symmetric, 127 / max|x| over a row or a group of it, nearest even). The simulation is not ckw's
bits (float32 sums stand in for int32 ones), but it is the same quantization error, so it ranks
schemes before a kernel is written. Why it exists: greedy decoding turns any changed logit into
a changed word, so a WER gap of a few words over these clips is mostly chance (docs/precision.md,
"The gates"); the teacher-forced figures are what a more accurate scheme improves, and what
//tests/e2e:precision_{forced,wer}_*_test measure on the engine itself.
"""

import functools
import sys
import time
from typing import NamedTuple, Union

import torch
import torch.nn.functional as F
import whisper
from absl import app, flags

from ckw import runfiles
from ckw.checkpoints.packed import runfiles_checkpoint_dir
from models.whisper.reference.openai_reference import log_mel, read_audio_16k
from models.whisper.reference.openai_whisper_ref import load_openai_whisper
from tools.bench.wer import corpus_word_errors
from tools.testing import audio_manifest

Group = Union[None, str, int]  # None: float32; "row": one scale per row; "bf16": rounded; n: groups of n


class Scheme(NamedTuple):
    weights: Group  # the Linear weights and the token table, along K (the input axis)
    activations: Group  # every Linear's input and the logits' input, along K
    float_logits: bool = False  # the token table (lookup and logits) left float32
    logits_input: Group = "same"  # the logits' input quantized as this ("same": as `activations`)


SCHEMES = {
    "float32": Scheme(None, None),  # the plumbing's check: exactly the reference (KL 0, agreement 100%)
    "int8": Scheme("row", "row"),  # ckw's int8 build (models/whisper/precision_int8.json)
    "int8-f32-logits": Scheme("row", "row", float_logits=True),
    "int8-f32-logits-input": Scheme("row", "row", logits_input=None),
    "int8-logits-input-g32": Scheme("row", "row", logits_input=32),
    "int8-weights-only": Scheme("row", None),
    "int8-mse-scales": Scheme("row-mse", "row"),
    "int8-mse-weights-only": Scheme("row-mse", None),
    "int8-act-only": Scheme(None, "row"),
    "int8-act-g64": Scheme("row", 64),
    "int8-act-g32": Scheme("row", 32),
    "int8-g32": Scheme(32, 32),  # ggml's Q8_0 weights and activations
    "bf16": Scheme("bf16", "bf16"),  # the bf16 build's GEMMs on AVX512-BF16 (inputs rounded too)
}

FLAGS = flags.FLAGS
flags.DEFINE_enum("model", "tiny", ["tiny", "base"], "Built-in variant whose packed checkpoint is studied.")
flags.DEFINE_list("schemes", list(SCHEMES), f"Schemes to compare with float32: {', '.join(SCHEMES)}.")
flags.DEFINE_integer("clips", 0, "Only the first N shared LibriSpeech clips (0: all 41).", lower_bound=0)
flags.DEFINE_integer("threads", 2, "PyTorch threads.", lower_bound=1)


def fake_quantize(t: torch.Tensor, group: Group) -> torch.Tensor:
    """t with its last axis quantized as the int8 kernels do (per row or per group of it), or
    rounded to bf16; float32 out."""
    if group is None:
        return t
    if group == "bf16":
        return t.to(torch.bfloat16).float()
    if group == "row-mse":
        return _mse_rows(t)
    k = t.shape[-1]
    size = k if group == "row" else group
    if k % size:
        raise ValueError(f"a group of {size} does not divide the axis of {k}")
    g = t.reshape(*t.shape[:-1], k // size, size)
    a = g.abs().amax(-1, keepdim=True)
    inv = torch.full_like(a, 127.0) / a
    q = torch.where(a > 0, (g * inv).round().clamp(-127, 127), torch.zeros_like(g))
    return (q * (a / torch.full_like(a, 127.0))).reshape(t.shape)


def _mse_rows(w: torch.Tensor) -> torch.Tensor:
    """w [N, K] quantized per row with the scale of least squared error among max|row| / 127
    times 0.50, 0.51, ..., 1.00 (clipping a row's outliers can lower its error)."""
    a = w.abs().amax(-1, keepdim=True) / 127.0
    best, best_err = w.clone(), torch.full_like(a, float("inf"))
    for f in torch.linspace(0.5, 1.0, 51):
        s = torch.where(a > 0, a * f, torch.ones_like(a))
        q = (w / s).round().clamp(-127, 127) * s
        err = ((q - w) ** 2).sum(-1, keepdim=True)
        better = err < best_err
        best, best_err = torch.where(better, q, best), torch.where(better, err, best_err)
    return torch.where(a > 0, best, torch.zeros_like(w))


def quantized(model: "whisper.model.Whisper", scheme: Scheme) -> None:
    """Makes `model` compute as `scheme` says (instance forwards over its Linear layers and its
    decoder; hooks such as the kv_cache ones keep working)."""
    for module in model.modules():
        if isinstance(module, whisper.model.Linear):
            w = fake_quantize(module.weight.detach(), scheme.weights)
            module.forward = functools.partial(_linear, w=w, bias=module.bias, group=scheme.activations)
    table = model.decoder.token_embedding.weight.detach()
    if not scheme.float_logits:
        table = fake_quantize(table, scheme.weights)
    logits_group = (
        None if scheme.float_logits else scheme.activations if scheme.logits_input == "same" else scheme.logits_input
    )
    model.decoder.forward = functools.partial(_decoder, model.decoder, table=table, group=logits_group)


def _linear(x, w, bias, group):
    return F.linear(fake_quantize(x, group), w, bias)


def _decoder(decoder, tokens, audio_features, kv_cache=None, table=None, group=None):
    """TextDecoder's computation with the token table (lookup and tied logits) and the logits'
    input as the scheme stores and quantizes them."""
    offset = next(iter(kv_cache.values())).shape[1] if kv_cache else 0
    x = F.embedding(tokens, table) + decoder.positional_embedding[offset : offset + tokens.shape[-1]]
    for block in decoder.blocks:
        x = block(x, audio_features, mask=decoder.mask, kv_cache=kv_cache)
    return (fake_quantize(decoder.ln(x), group) @ table.T).float()


class Run(NamedTuple):
    texts: list
    features: list  # encoder outputs, one per clip


def transcribe(model, mels) -> tuple:
    """(Run, tokens per clip): greedy decoding of each clip's 30 s window in English, as the WER
    gate decodes (no fallback)."""
    options = whisper.DecodingOptions(language="en", temperature=0.0, fp16=False)
    texts, features = [], []
    with torch.no_grad():
        for mel in mels:
            features.append(model.encoder(mel[None]))
            texts.append(whisper.decoding.decode(model, features[-1][0], options))  # features: no second encoder run
    return Run([r.text for r in texts], features), [list(r.tokens) for r in texts]


def corpus_wer(texts, references) -> tuple:
    """(corpus WER %, normalized reference words), as the precision gates count them."""
    errors, words = corpus_word_errors(texts, references)
    return 100.0 * errors / max(1, words), words


def next_token_logits(model, run: Run, sequences) -> list:
    """Per clip, the decoder's log-probabilities after each prefix of float32's tokens."""
    with torch.no_grad():
        return [model.decoder(torch.tensor([s]), f)[0].log_softmax(-1) for s, f in zip(sequences, run.features)]


def compare(reference: list, other: list, start: int) -> tuple:
    """(tokens, top-1 disagreements, summed KL(reference || other)) over every position from start."""
    tokens = disagree = 0
    kl = 0.0
    for lp, lq in zip(reference, other):
        lp, lq = lp[start:-1], lq[start:-1]
        tokens += lp.shape[0]
        disagree += int((lp.argmax(-1) != lq.argmax(-1)).sum())
        kl += float((lp.exp() * (lp - lq)).sum())
    return tokens, disagree, kl


def main(argv):
    del argv
    unknown = [s for s in FLAGS.schemes if s not in SCHEMES]
    if unknown:
        sys.exit(f"--schemes: {', '.join(unknown)} unknown; choose from {', '.join(SCHEMES)}")
    torch.set_num_threads(FLAGS.threads)
    rows = audio_manifest.rows(runfiles.locate("test_audio", "librispeech"))
    rows = rows[: FLAGS.clips] if FLAGS.clips else rows
    model = load_openai_whisper(runfiles_checkpoint_dir(FLAGS.model), verify=False)
    mels = [log_mel(model, read_audio_16k(r["path"])) for r in rows]
    references = [r["transcript"] for r in rows]
    tokenizer = whisper.tokenizer.get_tokenizer(
        model.is_multilingual, num_languages=model.num_languages, language="en", task="transcribe"
    )
    prompt = list(tokenizer.sot_sequence)

    t0 = time.perf_counter()
    base, tokens = transcribe(model, mels)
    sequences = [prompt + t + [tokenizer.eot] for t in tokens]
    base_logits = next_token_logits(model, base, sequences)
    base_wer, words = corpus_wer(base.texts, references)
    print(
        f"{FLAGS.model}: {len(rows)} LibriSpeech clips, {words} reference words, "
        f"{sum(len(t) + 1 for t in tokens)} float32 tokens; float32 WER {base_wer:.2f}% "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    print(f"{'scheme':20s} {'WER %':>7s} {'gap':>6s} {'top-1 agree %':>14s} {'disagree':>9s} {'KL/token':>10s}")
    for name in FLAGS.schemes:
        quantized(model, SCHEMES[name])
        run, _ = transcribe(model, mels)
        n, disagree, kl = compare(base_logits, next_token_logits(model, run, sequences), len(prompt) - 1)
        wer, _ = corpus_wer(run.texts, references)
        print(
            f"{name:20s} {wer:7.2f} {wer - base_wer:+6.2f} {100.0 * (n - disagree) / n:14.2f} {disagree:9d} "
            f"{kl / n:10.2e}",
            flush=True,
        )
        _float32(model)


def _float32(model) -> None:
    """Undoes quantized(): the class forwards again."""
    for module in model.modules():
        module.__dict__.pop("forward", None)


if __name__ == "__main__":
    app.run(main)
