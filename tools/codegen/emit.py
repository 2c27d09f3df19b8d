"""Pass 8: render the call IR through jinja2 templates (StrictUndefined: a missing field is
an error, never an empty string) and write .c, .h, plan_<phase>.json and ir.json."""

import json
import os
from typing import Dict, List

import jinja2

_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

ERRORS = [
    ("OK", 0, "ok"),
    ("E_ARGUMENT", -1, "invalid argument (null pointer or a count out of range)"),
    ("E_IO", -2, "cannot read the weights or manifest file"),
    ("E_MANIFEST_MISMATCH", -3, "manifest_sha256 differs from the one this library was generated for"),
    ("E_WEIGHTS_SIZE", -4, "weights file is smaller than the manifest says"),
    ("E_NO_MEMORY", -5, "out of memory"),
    ("E_MISSING_INPUT", -6, "a required input was not set (call the set_* function first)"),
    ("E_CROSS_KV_INVALID", -7, "cross-K/V cache is not valid: run prefill after setting encoder memory"),
    ("E_CONTEXT_FULL", -8, "the position would pass the text context capacity"),
    ("E_KERNEL", -9, "a kernel reported an error"),
]


def c_string(text: str) -> str:
    """A C string literal for `text` (ASCII; backslash, quote and control bytes escaped)."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["c_string"] = c_string
    return env


def dumps(data) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def render(ir: dict) -> Dict[str, str]:
    """File name -> contents for one artifact."""
    env = _env()
    context = {
        "ir": ir,
        "P": ir["prefix"].upper(),
        "guard": ir["prefix"].upper() + "_H_",
        "errors": [{"name": n, "code": c, "text": t} for n, c, t in ERRORS],
    }
    return {
        f"{ir['prefix']}.h": env.get_template("abi.h.j2").render(context),
        f"{ir['prefix']}.c": env.get_template("model.c.j2").render(context),
        "ir.json": dumps(ir),
    }


def write(out_dir: str, files: Dict[str, str], plans: List[dict]) -> List[str]:
    for plan in plans:
        files[f"plan_{plan['phase']}.json"] = dumps(plan)
    os.makedirs(out_dir, exist_ok=True)
    for name, text in sorted(files.items()):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return sorted(files)
