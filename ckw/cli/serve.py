"""An OpenAI-compatible transcription server (ckw/server/app.py) on uvicorn.

    ./bazelw run //tools:serve -- --model tiny.en --model base --port 8000
    curl localhost:8000/v1/audio/transcriptions -F file=@talk.wav -F model=base -F response_format=srt

Each --model gets one engine and one scheduler (ckw/runtime/streams.py) that all its requests share;
clients use the openai SDK (`OpenAI(base_url="http://HOST:PORT/v1", api_key=...)`). `whisper-1`
names the first model too. The checkpoints are found (and converted into the ckw cache) before the
server starts, as the CLI finds them; a wrong --model is a one-line error and exit status 1.
"""

import logging
import os
import sys

from absl import app, flags

from ckw.checkpoints.errors import CheckpointError
from ckw.runtime.errors import EngineError
from ckw.runtime.options import PRECISIONS

FLAGS = flags.FLAGS
flags.DEFINE_multi_string(
    "model",
    ["tiny.en"],
    "A Whisper model to serve, as the CLI's --model (tiny.en, base, "
    "small, ..., a Hub id); repeat for several. Requests name it in their model field.",
)
flags.DEFINE_enum("precision", "fp32", list(PRECISIONS), "Weights of every served model, as the CLI's --precision.")
flags.DEFINE_bool("local_files_only", False, "Never contact the Hugging Face Hub (as the CLI's).")
flags.DEFINE_string("host", "127.0.0.1", "Address to listen on (0.0.0.0: every interface).")
flags.DEFINE_integer("port", 8000, "TCP port to listen on.")
flags.DEFINE_string(
    "api_key",
    None,
    "Require the header Authorization: Bearer <key> on /v1/* (default: CKW_API_KEY from the environment, else no key).",
)
flags.DEFINE_integer("max_streams", 8, "Requests per model decoding at once (their decode steps shared).")
flags.DEFINE_integer(
    "max_queue",
    64,
    "Requests per model waiting for a slot beyond --max_streams; more are answered 429 with Retry-After.",
)
flags.DEFINE_float("max_upload_mb", 25.0, "Largest audio upload in MiB (openai's limit is 25 MB); larger: 413.")
flags.DEFINE_float("max_audio_seconds", 4 * 3600.0, "Longest recording in seconds; longer: 400 (0: no limit).")
flags.DEFINE_string("alias", "whisper-1", "A model name that means the first --model too (empty: none).")
flags.DEFINE_integer(
    "threads",
    0,
    "Threads of each model's engine (0: every CPU this process may use; with --ray: "
    "1). On Ray, each engine replica reserves this many Ray CPUs.",
)
flags.DEFINE_bool(
    "ray",
    False,
    "Run as a Ray Serve application: --replicas engines per model, each a Ray actor, "
    "behind the same HTTP API (docs/serve.md).",
)
flags.DEFINE_string(
    "address",
    None,
    "With --ray: the Ray cluster to join (its head's HOST:PORT, or auto); default: "
    "a Ray instance of this machine's own, stopped with the server.",
)
flags.DEFINE_integer("replicas", 2, "With --ray: engine replicas per model (each one engine and its --max_streams).")


def main(argv):
    if len(argv) > 1:
        return _error(f"unexpected argument {argv[1]!r}; every option is a flag (--help)")
    if (FLAGS.address or FLAGS["replicas"].present) and not FLAGS.ray:
        return _error("--address and --replicas serve on Ray: add --ray")
    for name in ("max_streams", "max_queue", "port", "replicas"):
        if getattr(FLAGS, name) < (1 if name != "max_queue" else 0):
            return _error(f"--{name}={getattr(FLAGS, name)} is too small")
    if FLAGS.max_upload_mb <= 0 or FLAGS.threads < 0 or FLAGS.max_audio_seconds < 0:
        return _error("--max_upload_mb must be above 0, --threads and --max_audio_seconds 0 or more")
    if len(set(FLAGS.model)) != len(FLAGS.model):
        return _error(f"--model {' '.join(FLAGS.model)}: a model is named twice")
    import uvicorn

    from ckw import model_spec
    from ckw.runtime.streams import Streams
    from ckw.server.app import Limits, create_app
    from ckw.server.served import ServedModel

    try:
        specs = {
            name: model_spec.engine_spec(name, None, FLAGS.precision, FLAGS.local_files_only) for name in FLAGS.model
        }
    except (CheckpointError, EngineError) as e:
        return _error(str(e), 1)
    limits = dict(
        max_upload_bytes=int(FLAGS.max_upload_mb * 2**20), api_key=FLAGS.api_key or os.environ.get("CKW_API_KEY")
    )
    admission = dict(max_streams=FLAGS.max_streams, max_queue=FLAGS.max_queue, max_audio_s=FLAGS.max_audio_seconds)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if FLAGS.ray:
        from ckw.cli import serve_on_ray
        from ckw.corpus.cluster import ClusterError

        try:
            serve_on_ray.serve_forever(
                specs,
                limits,
                admission,
                FLAGS.alias or None,
                address=FLAGS.address,
                replicas=FLAGS.replicas,
                threads=FLAGS.threads or 1,
                host=FLAGS.host,
                port=FLAGS.port,
            )
        except ClusterError as e:
            return _error(str(e), 1)
        return 0
    loaders = {
        name: (
            lambda n, s: (
                lambda: ServedModel(
                    n,
                    Streams(model_spec.open_engine(s, threads=FLAGS.threads or None), FLAGS.max_streams),
                    FLAGS.max_queue,
                    FLAGS.max_audio_seconds,
                )
            )
        )(name, spec)
        for name, spec in specs.items()
    }
    application = create_app(loaders, Limits(**limits), alias=FLAGS.alias or None)
    uvicorn.run(application, host=FLAGS.host, port=FLAGS.port, log_level="info", access_log=False)
    return 0


def _error(message: str, status: int = 2) -> int:
    print(f"serve: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    app.run(main)
