"""Transcribe audio with the generated Whisper libraries.

    ./bazelw run //tools:transcribe                          # built-in demo clip
    ./bazelw run //tools:transcribe -- --wav meeting.wav --model base --output_format json
"""

import json
import os
import sys

from absl import app, flags

from runtime import audio_input, runfiles
from runtime.decoding import DecodingOptions
from runtime.engine import Engine, EngineError

FLAGS = flags.FLAGS
flags.DEFINE_string("wav", None, "Audio file (WAV goes straight to the C frontend; flac, ogg, mp3, ... are decoded first). "
                    "Relative to where you ran the command. Default: the built-in demo clip.")
flags.DEFINE_enum("model", "tiny", ["tiny", "base"], "Checkpoint variant (tiny = tiny.en, base = multilingual base).")
flags.DEFINE_string("language", "en", "Spoken language (a code such as en, de, fr).")
flags.DEFINE_enum("task", "transcribe", ["transcribe", "translate"], "Transcribe, or translate to English.")
flags.DEFINE_enum("output_format", "txt", ["txt", "json"], "txt: the transcript; json: text, tokens, language, model, timings.")
flags.DEFINE_string("output", None, "Write here instead of stdout (relative to where you ran the command).")

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


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    try:
        if FLAGS.wav:
            wav = audio_input.load_audio_bytes(_user_path(FLAGS.wav))
        else:
            demo = runfiles.locate("ckw", DEMO_CLIP)
            print(f"transcribe: no --wav given; using the built-in demo clip synthesized by the build with espeak-ng ({DEMO_CLIP})",
                  file=sys.stderr)
            wav = audio_input.load_audio_bytes(demo)
        engine = Engine.from_runfiles(FLAGS.model)
        result = engine.transcribe(wav, DecodingOptions(language=FLAGS.language, task=FLAGS.task))
    except (audio_input.AudioInputError, EngineError, ValueError) as e:
        print(f"transcribe: error: {e}", file=sys.stderr)
        return 1
    if FLAGS.output_format == "json":
        out = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
    else:
        out = result["text"] + "\n"
    if FLAGS.output:
        _write_atomically(_user_path(FLAGS.output), out)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    app.run(main)
