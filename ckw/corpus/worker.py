"""One corpus worker: a Ray actor process that holds one engine and transcribes files by path.

The generated libraries are loaded once per actor and the weights file is memory-mapped
read-only by the C side, so the actors on one node share its pages in the page cache. The actor
takes `streams` files at once (Ray runs its calls on as many threads) into its engine's
ckw/runtime/streams.py, whose decode steps serve them all; each output is the single-file CLI's. The
actor reads each file itself (the object store carries paths in and transcripts out, never
audio) and returns the rendered output; the driver writes it and journals it.

The cluster's workers import this module from the ckw wheel (ckw.corpus.worker, through
ckw/corpus/actor.py): its arguments are plain data, since the driver's classes live under other
module names there.
"""

import dataclasses
import os
import socket
import time

from ckw.runtime import audio_input, output_formats
from ckw.runtime.engine import EngineError
from ckw.runtime.streams import Streams


class CorpusWorker:
    def __init__(self, engine_spec: dict, options: dict, output_format: str, streams: int = 1):
        from ckw import model_spec  # the CLI's engine: the same libraries for the same checkpoint

        # The engine's thread count comes from CKW_NUM_THREADS in the actor's runtime_env.
        self.engine = model_spec.open_engine(engine_spec)
        # Options the checkpoint cannot honour (--language=de on tiny.en) stop the batch here, once.
        self.options = self.engine.check_options(**options)
        self.streams = Streams(self.engine, max_streams=streams)
        self.output_format = output_format
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def info(self) -> dict:
        """Who this actor is (the driver asks again after a restart: a new process)."""
        return {"worker": self.name, "pid": os.getpid(), "threads": self.engine.encoder.handle.num_threads}

    def transcribe(self, path: str) -> dict:
        """{output, audio_seconds, wall_seconds}, or {error, wall_seconds} for a bad file."""
        t0 = time.perf_counter()
        try:
            # The single-file CLI's path: the engine reads the file (WAV by the C parser, other
            # containers by PyAV), so each output equals //tools:transcribe's.
            request = self.streams.submit(path, **dataclasses.asdict(self.options))
            result, info = request.result(), request.info
            output = output_formats.render_transcript(result, self.output_format)
        except (audio_input.AudioInputError, EngineError, ValueError) as e:
            message = str(e) if path in str(e) else f"{path}: {e}"
            return {"error": message, "wall_seconds": time.perf_counter() - t0}
        return {"output": output, "audio_seconds": info.duration, "wall_seconds": time.perf_counter() - t0}
