"""Transcribe audio with the generated Whisper libraries.

    ./bazelw run //tools:transcribe                          # built-in demo clip
    ./bazelw run //tools:transcribe -- --wav meeting.wav --model base --language auto --output_format srt

The whole recording is transcribed in 30 s windows with openai-whisper's `transcribe()`
semantics (runtime/longform.py): timestamps, segments, temperature fallback, conditioning on
the previous text, no-speech skipping.
"""

import os
import sys

from absl import app, flags

from runtime import audio_input, output_formats, runfiles, word_timing
from runtime.engine import Engine, EngineError
from runtime.longform import TranscribeOptions, temperature_schedule
from runtime.output_formats import format_timestamp

FLAGS = flags.FLAGS
flags.DEFINE_string("wav", None, "Audio file (WAV goes straight to the C frontend; flac, ogg, mp3, ... are decoded first). "
                    "Relative to where you ran the command. Default: the built-in demo clip.")
flags.DEFINE_enum("model", "tiny", ["tiny", "base"], "Checkpoint variant (tiny = tiny.en, base = multilingual base).")
flags.DEFINE_string("language", "en", "Spoken language (a code such as en, de, fr), or auto: detect it from the first "
                    "30 s (multilingual models; English-only models always use en).")
flags.DEFINE_enum("task", "transcribe", ["transcribe", "translate"], "Transcribe, or translate to English.")
flags.DEFINE_enum("output_format", "txt", list(output_formats.FORMATS),
                  "txt: one line per segment; json: text, segments, tokens, language, model, timings; "
                  "srt, vtt: subtitles; tsv: start and end in ms, text.")
flags.DEFINE_string("output", None, "Write here instead of stdout (relative to where you ran the command).")
flags.DEFINE_float("temperature", 0.0, "Sampling temperature of the first attempt per window (0: greedy).")
flags.DEFINE_string("temperature_increment_on_fallback", "0.2",
                    "Raise the temperature by this much (up to 1.0) when a window fails the thresholds below; "
                    "none: no fallback.")
flags.DEFINE_string("compression_ratio_threshold", "2.4", "A window whose gzip compression ratio is higher failed "
                    "(too repetitive); none: no check.")
flags.DEFINE_string("logprob_threshold", "-1.0", "A window whose average token log-probability is lower failed; "
                    "none: no check.")
flags.DEFINE_string("no_speech_threshold", "0.6", "A window whose no-speech probability is higher and whose average "
                    "log-probability is below --logprob_threshold is silence: skipped; none: never skip.")
flags.DEFINE_bool("condition_on_previous_text", True, "Prompt each window with the text so far (reset after a window "
                  "that needed a temperature above 0.5).")
flags.DEFINE_string("initial_prompt", None, "Text to prompt the first window with (vocabulary, spelling, style).")
flags.DEFINE_bool("carry_initial_prompt", False, "Prepend --initial_prompt to the prompt of every window.")
flags.DEFINE_bool("without_timestamps", False, "Decode text only: one segment per 30 s window.")
flags.DEFINE_string("clip_timestamps", "0", "Only these parts: start,end,start,end,... in seconds (the last end "
                    "defaults to the end of the recording).")
flags.DEFINE_integer("best_of", 5, "Samples per window when sampling (temperature > 0), decoded side by side; the "
                     "likeliest wins.")
flags.DEFINE_integer("beam_size", 5, "Beams per window at temperature 0 (1 to the decoder's max_beams, 8); 0: greedy.")
flags.DEFINE_string("patience", "none", "Beam search keeps round(beam_size * patience) finished candidates before it "
                    "stops (none: 1.0).")
flags.DEFINE_string("length_penalty", "none", "Ranks beams and samples by log-probability / ((5 + length) / 6) ** "
                    "alpha for this alpha in [0, 1]; none: / length.")
flags.DEFINE_integer("seed", 0, "Seed of the sampler used at temperature > 0.")
flags.DEFINE_bool("word_timestamps", False, "Time every word (start, end, probability) from the alignment heads' "
                  "cross-attention, and refine segment bounds with them.")
flags.DEFINE_string("prepend_punctuations", word_timing.PREPEND_PUNCTUATIONS,
                    "With --word_timestamps: these marks join the following word.")
flags.DEFINE_string("append_punctuations", word_timing.APPEND_PUNCTUATIONS,
                    "With --word_timestamps: these marks join the preceding word.")
flags.DEFINE_bool("highlight_words", False, "With --word_timestamps: srt/vtt underline each word as it is spoken.")
flags.DEFINE_integer("max_line_width", None, "With --word_timestamps: characters per subtitle line before a break.")
flags.DEFINE_integer("max_line_count", None, "With --word_timestamps: lines per subtitle cue.")
flags.DEFINE_integer("max_words_per_line", None, "With --word_timestamps (no effect with --max_line_width): words "
                     "per subtitle line.")
WORD_OPTIONS = ("highlight_words", "max_line_width", "max_line_count", "max_words_per_line")
flags.DEFINE_bool("verbose", False, "Print each segment to stderr as soon as it is decoded.")

DEMO_CLIP = "tools/demo_clip.wav"


def _user_path(path: str) -> str:
    """Paths on the command line are relative to where the user ran `bazel run`."""
    base = os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd())
    return os.path.join(base, os.path.expanduser(path))


def _write_atomically(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _optional_float(name: str):
    text = getattr(FLAGS, name).strip()
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--{name}={text!r} is not a number; give a number or none") from None


def options_from_flags() -> TranscribeOptions:
    if not 0.0 <= FLAGS.temperature <= 1.0:
        raise ValueError(f"--temperature={FLAGS.temperature} is outside [0, 1]")
    if FLAGS.best_of is not None and FLAGS.best_of < 1:
        raise ValueError(f"--best_of={FLAGS.best_of} must be at least 1")
    if FLAGS.beam_size < 0:
        raise ValueError(f"--beam_size={FLAGS.beam_size} is negative; give 0 (greedy) or a beam count")
    for name in WORD_OPTIONS:
        if getattr(FLAGS, name) not in (None, False) and not FLAGS.word_timestamps:
            raise ValueError(f"--{name} needs --word_timestamps")
        if name != "highlight_words" and getattr(FLAGS, name) is not None and getattr(FLAGS, name) < 1:
            raise ValueError(f"--{name}={getattr(FLAGS, name)} must be at least 1")
    language = FLAGS.language.strip()
    return TranscribeOptions(
        language=None if language.lower() == "auto" else language,
        task=FLAGS.task,
        temperature=temperature_schedule(FLAGS.temperature, _optional_float("temperature_increment_on_fallback")),
        compression_ratio_threshold=_optional_float("compression_ratio_threshold"),
        logprob_threshold=_optional_float("logprob_threshold"),
        no_speech_threshold=_optional_float("no_speech_threshold"),
        condition_on_previous_text=FLAGS.condition_on_previous_text,
        initial_prompt=FLAGS.initial_prompt,
        carry_initial_prompt=FLAGS.carry_initial_prompt,
        without_timestamps=FLAGS.without_timestamps,
        clip_timestamps=FLAGS.clip_timestamps,
        best_of=FLAGS.best_of,
        beam_size=FLAGS.beam_size or None,
        patience=_optional_float("patience"),
        length_penalty=_optional_float("length_penalty"),
        seed=FLAGS.seed,
        word_timestamps=FLAGS.word_timestamps,
        prepend_punctuations=FLAGS.prepend_punctuations,
        append_punctuations=FLAGS.append_punctuations,
    )


def _print_segment(segment) -> None:
    print(f"[{format_timestamp(segment['start'])} --> {format_timestamp(segment['end'])}] {segment['text']}",
          file=sys.stderr, flush=True)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    try:
        options = options_from_flags()
        if FLAGS.wav:
            wav = audio_input.load_audio_bytes(_user_path(FLAGS.wav))
        else:
            demo = runfiles.locate("ckw", DEMO_CLIP)
            print(f"transcribe: no --wav given; using the built-in demo clip synthesized by the build with espeak-ng ({DEMO_CLIP})",
                  file=sys.stderr)
            wav = audio_input.load_audio_bytes(demo)
        engine = Engine.from_runfiles(FLAGS.model)
        result = engine.transcribe_long(wav, options, on_segment=_print_segment if FLAGS.verbose else None)
    except (audio_input.AudioInputError, EngineError, ValueError) as e:
        print(f"transcribe: error: {e}", file=sys.stderr)
        return 1
    keys = ("text", "segments", "tokens", "language", "model", "timings_ms")
    out = output_formats.render({k: result[k] for k in keys}, FLAGS.output_format,
                                **{name: getattr(FLAGS, name) for name in WORD_OPTIONS})
    if FLAGS.output:
        _write_atomically(_user_path(FLAGS.output), out)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    app.run(main)
