"""Where a model's engine comes from: found once (converted or derived into the ckw cache if need
be) as plain data, then opened; shared by the CLI, the corpus tool's workers and the server."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ckw.runtime.engine import Engine


def engine_spec(
    model: str | None,
    model_dir: str | None = None,
    precision: str = "fp32",
    local_files_only: bool = False,
    cache_root: str | None = None,
) -> dict:
    """{checkpoint_dir, model}: open_engine's argument, for model name `model` or the local files
    `model_dir`, at `precision` (derived into the ckw cache, or `cache_root`, once). EngineError
    when this build has no libraries at `precision` for it, CheckpointError when the checkpoint
    cannot be found. Callers check a model name against libraries.models_at(precision) first, in
    their own words (a flag, a keyword), before any conversion."""
    from ckw.checkpoints import store
    from ckw.checkpoints.precision import derived
    from ckw.runtime import libraries

    directory = store.resolve(model, model_dir, local_files_only=local_files_only, cache_root=cache_root)
    if precision != "fp32":
        libraries.check_precision(directory, precision)
        directory = derived.derived(directory, precision, cache_root=cache_root)
    return {"checkpoint_dir": directory, "model": None if model_dir else store.model_name(model)}


def open_engine(spec: dict, verify_weights: bool = False, threads: int | None = None) -> "Engine":
    """The engine of an engine_spec() (EngineError)."""
    from ckw.runtime.engine import Engine

    return Engine.from_checkpoint(
        spec["checkpoint_dir"], verify_weights=verify_weights, threads=threads, model=spec["model"]
    )
