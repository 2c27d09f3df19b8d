"""Pass 8: render the call IR through jinja2 templates (StrictUndefined: a missing field is
an error, never an empty string) and write .c, .h, abi.json, plan_<phase>.json and ir.json.

The header declares exactly the functions and types of the ABI description (abi.py), which is
also written as abi.json and embedded in the .c as `<prefix>_abi_json()`."""

import json
import os
import re
import textwrap

import jinja2

from tools.codegen import abi as abi_data

_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

# The error table lives with the rest of the ABI description (abi.py); re-exported here.
ERRORS = abi_data.ERRORS
# Generated declarations wrap at this column.
WIDTH = 100


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


def c_text_block(text: str, indent: str = "    ") -> str:
    """`text` as adjacent C string literals, one per line of `text` (each ending in \\n)."""
    lines = text.splitlines(True)
    out = [c_string(line[:-1])[:-1] + '\\n"' if line.endswith("\n") else c_string(line) for line in lines]
    return "\n".join(indent + literal for literal in out) or indent + '""'


def c_doc(item: dict, width: int = WIDTH) -> str:
    """Comment lines for an ABI function or type: its doc (wrapped; "\\n" breaks a line), then
    `//   name: doc` for each parameter that has a doc. "" when there is nothing to say."""
    lines = []
    for para in item.get("doc", "").split("\n"):
        lines += textwrap.wrap(para, width - 3, break_on_hyphens=False) if para.strip() else []
    for p in item.get("params", []):
        if p["doc"]:
            lines += textwrap.wrap(
                f"{p['name']}: {p['doc']}",
                width - 5,
                initial_indent="  ",
                subsequent_indent="    ",
                break_on_hyphens=False,
            )
    return "\n".join("// " + line for line in lines)


_C_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')


def mentions(c_text: str, name: str) -> bool:
    """Whether C text reads the identifier `name` (outside string literals and comments; a member
    `.name` or `->name` is not the identifier). The templates declare a local, or mark a parameter
    unused, by what the code after it reads, so no circuit leaves an unused variable."""
    code = _C_STRING_OR_COMMENT.sub(" ", c_text)
    return re.search(rf"(?<![\w.])(?<!->){re.escape(name)}(?!\w)", code) is not None


def _typed(ctype: str, name: str) -> str:
    return f"{ctype}{'' if ctype.endswith('*') else ' '}{name}"


def c_declaration(item: dict, width: int = WIDTH) -> str:
    """`ret name(params);` for an ABI function, `typedef ret (*name)(params);` for a function
    pointer type; parameters wrap under the opening parenthesis past `width` columns."""
    if item.get("kind") == "struct":
        return f"typedef struct {item['name']} {item['name']};"
    if item.get("kind") == "function_pointer":
        head = f"typedef {item['returns']} (*{item['name']})("
    else:
        head = _typed(item["returns"], item["name"]) + "("
    params = [_typed(p["ctype"], p["name"]) for p in item["params"]] or ["void"]
    lines, line = [], head
    for i, p in enumerate(params):
        piece = p + (", " if i + 1 < len(params) else ");")
        if len(line) + len(piece.rstrip()) > width and line.strip() and not line.endswith("("):
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece
    lines.append(line)
    return "\n".join(lines)


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
    env.filters["c_doc"] = c_doc
    env.filters["c_text_block"] = c_text_block
    env.filters["c_declaration"] = c_declaration
    env.filters["mentions"] = mentions
    return env


def dumps(data) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def render(ir: dict) -> dict[str, str]:
    """File name -> contents for one artifact."""
    env = _env()
    abi = abi_data.describe(ir)
    abi_json = abi_data.dumps(abi)
    context = {
        "ir": ir,
        "abi": abi,
        "abi_json": abi_json,
        "P": ir["prefix"].upper(),
        "guard": ir["prefix"].upper() + "_H_",
        "errors": abi["errors"],
    }
    return {
        f"{ir['prefix']}.h": env.get_template("abi.h.j2").render(context),
        f"{ir['prefix']}.c": env.get_template("model.c.j2").render(context),
        "abi.json": abi_json,
        "ir.json": dumps(ir),
    }


def write(out_dir: str, files: dict[str, str], plans: list[dict]) -> list[str]:
    for plan in plans:
        files[f"plan_{plan['phase']}.json"] = dumps(plan)
    os.makedirs(out_dir, exist_ok=True)
    for name, text in sorted(files.items()):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return sorted(files)
