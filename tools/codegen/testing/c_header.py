"""A small parser for the generated headers (test helper): every function declaration and
function-pointer typedef, as {"name", "returns", "params": [{"name", "ctype"}]}, with C types
spelled the way abi.json spells them ("const float *", "ckw_x_handle **")."""

import re

from ckw.runtime.abi import normalize_ctype as normalize


def _param(text: str, where: str) -> dict[str, str]:
    m = re.fullmatch(r"(.*?)([A-Za-z_]\w*)", text.strip(), re.DOTALL)
    if not m or not m.group(1).strip():
        raise ValueError(f"{where}: cannot parse parameter {text!r}")
    return {"name": m.group(2), "ctype": normalize(m.group(1))}


def _params(text: str, where: str) -> list[dict[str, str]]:
    text = " ".join(text.split())
    if text in ("", "void"):
        return []
    return [_param(p, where) for p in text.split(",")]


def declarations(header: str) -> dict[str, dict]:
    """Name -> declaration, for every `ret name(params);` and `typedef ret (*name)(params);`."""
    text = re.sub(r"/\*.*?\*/", " ", header, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.MULTILINE)
    text = text.replace('extern "C" {', " ").replace("}", " ")
    out = {}
    for stmt in text.split(";"):
        stmt = " ".join(stmt.split())
        if not stmt or stmt.startswith("typedef struct"):
            continue
        m = re.fullmatch(r"typedef (.+?) \(\*\s*([A-Za-z_]\w*)\)\s*\((.*)\)", stmt)
        if m:
            out[m.group(2)] = {
                "name": m.group(2),
                "kind": "function_pointer",
                "returns": normalize(m.group(1)),
                "params": _params(m.group(3), m.group(2)),
            }
            continue
        m = re.fullmatch(r"(.+?)\b([A-Za-z_]\w*)\s*\((.*)\)", stmt)
        if not m:
            raise ValueError(f"cannot parse declaration {stmt!r}")
        out[m.group(2)] = {
            "name": m.group(2),
            "returns": normalize(m.group(1)),
            "params": _params(m.group(3), m.group(2)),
        }
    return out


def error_codes(header: str, prefix: str) -> dict[str, int]:
    """`#define <PREFIX>_<NAME> <code>` -> {NAME: code} (NAME is OK or E_*)."""
    P = re.escape(prefix.upper())
    return {
        m.group(1): int(m.group(2)) for m in re.finditer(rf"^#define {P}_(OK|E_\w+) (-?\d+)\b", header, re.MULTILINE)
    }
