"""Where a model's engine comes from: found once (converted or derived into the ckw cache if need
be) as plain data, then opened; shared by the CLI, the corpus tool's workers and the server."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runtime.engine import Engine


def engine_spec(
    model: str, model_dir: str | None = None, precision: str = "fp32", local_files_only: bool = False
) -> dict:
    """{checkpoint_dir, model}: open_engine's argument. CheckpointError when the checkpoint cannot
    be found, EngineError when this build has no libraries at `precision` for it."""
    from models.whisper.checkpoint import store
    from models.whisper.checkpoint.precision import derived
    from runtime import libraries

    directory = store.resolve(model, model_dir, local_files_only)
    if precision != "fp32":
        libraries.check_precision(directory, precision)
        directory = derived.derived(directory, precision)
    return {"checkpoint_dir": directory, "model": None if model_dir else store.model_name(model)}


def open_engine(spec: dict, verify_weights: bool = False, threads: int | None = None) -> "Engine":
    """The engine of an engine_spec() (EngineError)."""
    from runtime.engine import Engine

    return Engine.from_checkpoint(
        spec["checkpoint_dir"], verify_weights=verify_weights, threads=threads, model=spec["model"]
    )
