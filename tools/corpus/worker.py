"""One corpus worker: a Ray actor process that holds one engine and transcribes files by path.

The generated libraries are loaded once per actor and the weights file is memory-mapped
read-only by the C side, so the actors on one node share its pages in the page cache. The
actor reads each file itself (the object store carries paths in and transcripts out, never
audio) and returns the rendered output; the driver writes it and journals it.
"""

import os
import socket
import struct
import time

from runtime import audio_input
from runtime.engine import Engine, EngineError
from runtime.longform import TranscribeOptions
from tools import transcribe


def wav_seconds(wav: bytes) -> float | None:
    """Duration of a RIFF/WAVE file from its fmt and data chunks (None if they are unreadable;
    the frontend then reports the file)."""
    rate = block = None
    pos = 12
    while pos + 8 <= len(wav):
        chunk, size = wav[pos:pos + 4], struct.unpack_from("<I", wav, pos + 4)[0]
        if chunk == b"fmt " and size >= 16 and pos + 24 <= len(wav):
            rate, block = struct.unpack_from("<I", wav, pos + 12)[0], struct.unpack_from("<H", wav, pos + 20)[0]
        elif chunk == b"data":
            if not rate or not block:
                return None
            size = min(size, len(wav) - pos - 8)  # streamed WAVs may declare 0xFFFFFFFF
            return size // block / rate
        pos += 8 + size + (size & 1)
    return None


class CorpusWorker:
    def __init__(self, model: str, options: TranscribeOptions, output_format: str):
        # The engine's thread count comes from CKW_NUM_THREADS in the actor's runtime_env.
        self.engine = Engine.from_runfiles(model)
        # Options the checkpoint cannot honour (--language=de on tiny.en) stop the batch here, once.
        self.engine.tokenizer.sot_sequence(options.language, options.task)
        self.options = options
        self.output_format = output_format
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def info(self) -> dict:
        """Who this actor is (the driver asks again after a restart: a new process)."""
        return {"worker": self.name, "pid": os.getpid(), "threads": self.engine.encoder.handle.num_threads}

    def transcribe(self, path: str) -> dict:
        """{output, audio_seconds, wall_seconds}, or {error, wall_seconds} for a bad file."""
        t0 = time.perf_counter()
        try:
            wav = audio_input.load_audio_bytes(path)
            result = self.engine.transcribe_long(wav, self.options)
            output = transcribe.render_output(result, self.output_format)
        except (audio_input.AudioInputError, EngineError, ValueError) as e:
            message = str(e) if path in str(e) else f"{path}: {e}"
            return {"error": message, "wall_seconds": time.perf_counter() - t0}
        return {"output": output, "audio_seconds": wav_seconds(wav), "wall_seconds": time.perf_counter() - t0}
