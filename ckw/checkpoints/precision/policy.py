"""A precision policy: which tensors of a packed fp32 checkpoint are stored narrower, by name.

    {"format": "ckw-precision-policy-v1", "precision": "bf16", "doc": "...",
     "dtypes": {"bf16": ["model.encoder.layers.*.fc1.weight", ...]},
     "states": {"f16": ["cross_k", "cross_v"]}}

Patterns are fnmatch globs over tensor names (`*` also crosses dots); a tensor no pattern names
stays f32. Every pattern must name at least one tensor, so a renamed tensor cannot silently
leave the policy without effect, and no tensor may be named under two dtypes.

`states` (optional) names circuit states (caches the library computes, not checkpoint tensors)
the build stores in a 16-bit float; the derived manifest carries them as `state_dtypes` and the
compiler stores those states so, choosing kernels that read and write that dtype.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass

from ckw.checkpoints.errors import CheckpointError
from ckw.checkpoints.packed import DTYPE_STORAGE, EXACT_DTYPES

FORMAT = "ckw-precision-policy-v1"


@dataclass(frozen=True)
class Policy:
    path: str
    precision: str  # the variant's name, e.g. "bf16"
    dtypes: dict[str, list[str]]  # dtype -> patterns
    states: dict[str, str]  # circuit state name -> the dtype the build stores it in


def load(path: str) -> Policy:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path}: not a readable precision policy ({e})") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path}: /format: expected {FORMAT!r}")
    unknown = sorted(set(data) - {"format", "precision", "doc", "dtypes", "states"})
    if unknown:
        raise CheckpointError(
            f"{path}: /{unknown[0]}: unknown key; a policy has format, precision, doc, dtypes and states"
        )
    if not isinstance(data.get("precision"), str) or not data["precision"].isidentifier():
        raise CheckpointError(f'{path}: /precision: expected a name such as "bf16"')
    dtypes = data.get("dtypes")
    if not isinstance(dtypes, dict) or not dtypes:
        raise CheckpointError(f"{path}: /dtypes: expected {{dtype: [name patterns]}}")
    for dtype, patterns in dtypes.items():
        if dtype not in DTYPE_STORAGE or dtype in EXACT_DTYPES:
            raise CheckpointError(
                f"{path}: /dtypes/{dtype}: not a narrower dtype the checkpoint format stores "
                f"(known: {', '.join(d for d in DTYPE_STORAGE if d not in EXACT_DTYPES)})"
            )
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) and p for p in patterns):
            raise CheckpointError(f"{path}: /dtypes/{dtype}: expected a non-empty list of name patterns")
    return Policy(path, data["precision"], dtypes, _states(path, data.get("states", {})))


STATE_DTYPES = ("f16", "bf16")


def _states(path: str, states) -> dict[str, str]:
    if not isinstance(states, dict):
        raise CheckpointError(f"{path}: /states: expected {{dtype: [state names]}}")
    result: dict[str, str] = {}
    for dtype, names in sorted(states.items()):
        if dtype not in STATE_DTYPES:
            raise CheckpointError(f"{path}: /states/{dtype}: a state may be stored as {' or '.join(STATE_DTYPES)}")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.isidentifier() for n in names):
            raise CheckpointError(f"{path}: /states/{dtype}: expected a non-empty list of circuit state names")
        for n in names:
            if result.setdefault(n, dtype) != dtype:
                raise CheckpointError(f"{path}: /states/{dtype}: state {n} is also named under {result[n]}")
    return result


def assign(policy: Policy, names: list[str], source: str) -> dict[str, str]:
    """name -> dtype for every tensor of `names` (of checkpoint `source`, for messages)."""
    result = dict.fromkeys(names, "f32")
    claimed: dict[str, str] = {}
    for dtype, patterns in sorted(policy.dtypes.items()):
        for i, pattern in enumerate(patterns):
            matched = fnmatch.filter(names, pattern)
            if not matched:
                raise CheckpointError(
                    f"{policy.path}: /dtypes/{dtype}/{i}: pattern {pattern!r} matches no tensor "
                    f"of {source}; fix or remove it"
                )
            for name in matched:
                if claimed.get(name, dtype) != dtype:
                    raise CheckpointError(
                        f"{policy.path}: /dtypes/{dtype}/{i}: tensor {name} is also named under {claimed[name]}"
                    )
                claimed[name] = result[name] = dtype
    return result
