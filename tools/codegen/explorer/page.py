"""One self-contained HTML page for a library: the phase graphs Graphviz laid out (inline SVG),
the page's own script and style, and the data the script reads (explain.json, the call IR's
calls, the plans, X-ray rows) as inline JSON. Nothing is fetched when the page is viewed."""

import json
import os

import jinja2
from markupsafe import Markup

from tools.codegen.explorer import dot, xray
from tools.codegen.explorer.inputs import Library

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")


def _asset(name: str) -> str:
    with open(os.path.join(ASSETS, name), encoding="utf-8") as f:
        return f.read()


def _calls(ir: dict | None) -> dict:
    """phase -> node -> what the panel shows of its call: arguments and the split it uses."""
    if not ir:
        return {}
    return {
        p["phase"]: {
            c["node"]: {
                "args": c["args"],
                "guarded": c["guarded"],
                "parallel": {"splits": c["parallel"]["splits"]} if c["parallel"] else None,
            }
            for c in p["calls"]
        }
        for p in ir["phases"]
    }


def data(lib: Library, xray_data: dict | None, xray_hint: str = "") -> dict:
    ex = lib.explain
    return {
        "explain": ex,
        "calls": _calls(lib.ir),
        "plans": lib.plans,
        "xray": xray.place(xray_data, ex["part"], lib.ir),
        "xray_hint": xray_hint,
    }


def _json_for_script(value) -> str:
    # "<" only occurs inside JSON strings, where \u003c means the same: no "</script>" can end the block.
    return json.dumps(value, sort_keys=True, separators=(",", ":")).replace("<", "\\u003c")


def title(lib: Library) -> str:
    ex = lib.explain
    return lib.ir["prefix"] if lib.ir else f"{ex.get('part') or 'circuit'} ({ex['source']})"


def render(lib: Library, xray_data: dict | None = None, xray_hint: str = "") -> str:
    ex = lib.explain
    graphs = [
        {
            "phase": p["phase"],
            "status": p["status"],
            "svg": Markup(dot.render_svg(dot.to_dot(p, ex["error"]), f"{ex['source']}: phase {p['phase']}")),
        }
        for p in ex["phases"]
    ]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(ASSETS), autoescape=True, undefined=jinja2.StrictUndefined)
    subtitle = f"{ex['source']} · part {ex.get('part')} · from {lib.origin}"
    if ex["error"]:
        subtitle += " · compile FAILED"
    return env.get_template("page.html.j2").render(
        title=title(lib),
        subtitle=subtitle,
        graphs=graphs,
        css=Markup(_asset("explorer.css")),
        js=Markup(_asset("explorer.js")),
        data=Markup(_json_for_script(data(lib, xray_data, xray_hint))),
    )
