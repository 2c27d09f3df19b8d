"""One phase of explain.json as a Graphviz graph, laid out by `dot` into SVG.

Every node and edge carries an SVG id the page script finds it by (`node/<phase>/<name>`,
`edge/<phase>/<edge id>`) and classes saying what it is (op, converter, guarded, state, cache
kind, placement, failing). Repeat groups (`blocks.3.*`) become clusters; a node outside any
(a converter, a state instance) joins the cluster all its neighbours share.
"""

import re
import shutil
import subprocess

from tools.codegen.explorer.errors import ExploreError

_GROUP = re.compile(r"^([A-Za-z_][\w]*\.\d+)\.")
DOT_TIMEOUT_S = 300

# Fill colours by what a node is; the page's legend repeats them (explorer.css).
_FILL = {
    "op": "#e8f0fe",
    "converter": "#fff1d6",
    "self_kv": "#e3f5e8",
    "cross_kv": "#fde7e4",
    "setter": "#f1e6fb",
    "state": "#e3f5e8",
    "argument": "#eeeeee",
    "output": "#eeeeee",
}
_EDGE_STYLE = {
    "arena": 'color="#5f6368"',
    "state": 'color="#8430ce", penwidth=1.6',
    "external": 'color="#1a73e8", style=dashed',
    "weights": 'color="#999999"',
}


def quote(*lines: str) -> str:
    """A DOT string; several lines are joined with dot's centred line break."""
    return '"' + "\\n".join(t.replace("\\", "\\\\").replace('"', '\\"') for t in lines) + '"'


def node_id(phase: str, name: str) -> str:
    return f"node/{phase}/{name}"


def edge_id(phase: str, eid: str) -> str:
    return f"edge/{phase}/{eid}"


def _holders(phase: dict) -> dict[str, dict]:
    """Graph nodes that are values: state, arguments and the caller's outputs."""
    calls = {n["name"] for n in phase["nodes"]}
    result = {}
    for e in phase["edges"]:
        for end in (e["from"], e["to"]):
            if end in calls or end in result:
                continue
            if end.startswith("output:"):
                result[end] = {"kind": "output", "value": e["value"]}
            else:
                result[end] = {"kind": "holder", "value": end}
    return result


def _clusters(phase: dict, holders: dict[str, dict]) -> dict[str, str | None]:
    names = [n["name"] for n in phase["nodes"]] + sorted(holders)
    group = {n: (m.group(1) if (m := _GROUP.match(n)) else None) for n in names}
    neighbours: dict[str, set] = {n: set() for n in names}
    for e in phase["edges"]:
        if e["from"] in neighbours and e["to"] in neighbours:
            neighbours[e["from"]].add(e["to"])
            neighbours[e["to"]].add(e["from"])
    changed = True
    while changed:  # converters first, then the state they write: a few rounds at most
        changed = False
        for n in names:
            if group[n] is None:
                shared = {group[m] for m in neighbours[n]}
                if len(shared) == 1 and None not in shared:
                    group[n] = shared.pop()
                    changed = True
    return group


def _short(name: str, group: str | None) -> str:
    return name[len(group) + 1 :] if group and name.startswith(group + ".") else name


def _value_label(v: dict) -> tuple:
    shape = "[" + ", ".join(v["shape"]) + "]" if v.get("shape") is not None else "[?]"
    return f"{v.get('dtype') or '?'} {shape}", f"{v.get('layout') or '?'} · {v.get('placement') or '?'}"


def _node_stmt(phase: str, n: dict, group: str | None, failing_op: str | None) -> str:
    classes = [n["kind"]] + (["guarded"] if n["guarded"] else []) + (["failing"] if n["name"] == failing_op else [])
    style = "rounded,filled" + (",dashed" if n["kind"] == "converter" or n["guarded"] else "")
    kernel = n["kernel"] or "(no kernel)"
    label = quote(_short(n["name"], group), kernel)
    color = ', color="#d93025", penwidth=3' if n["name"] == failing_op else ""
    return (
        f"{quote(n['name'])} [id={quote(node_id(phase, n['name']))}, class={quote(' '.join(classes))}, "
        f"label={label}, style={quote(style)}, fillcolor={quote(_FILL[n['kind']])}{color}];"
    )


def _holder_stmt(phase: str, name: str, h: dict, values: dict[str, dict]) -> str:
    v = values.get(h["value"], {})
    if h["kind"] == "output":
        kind, shape, classes = "output", "invhouse", "holder output"
    elif v.get("placement") == "state":
        kind, shape = v.get("cache") or "state", "cylinder"
        classes = f"holder state {kind}"
    else:
        kind, shape, classes = "argument", "house", "holder argument"
    return (
        f"{quote(name)} [id={quote(node_id(phase, name))}, class={quote(classes)}, label={quote(name)}, "
        f"shape={shape}, style=filled, fillcolor={quote(_FILL[kind])}];"
    )


def _failure_label(error: dict) -> tuple:
    """The failing edge's label: what failed, and the layouts a missing route should join."""
    route = error.get("route")
    reason = error["message"].split(": ")[1] if ": " in error["message"] else "compile error"
    return (f"FAILED: {reason}",) + (
        (f"{route['from_layout']} -> {route['to_layout']} ({route['dtype']})",) if route else ()
    )


def _edge_stmt(phase: str, e: dict, values: dict[str, dict], error: dict | None) -> str:
    v = values.get(e["value"], {})
    placement = v.get("placement") or "arena"
    failing = bool(error and error.get("edge") and error["edge"]["id"] == e["id"] and error["edge"]["phase"] == phase)
    classes = ["placement-" + placement] + (["failing"] if failing else [])
    style = 'color="#d93025", penwidth=4, fontcolor="#d93025"' if failing else _EDGE_STYLE.get(placement, "")
    label = quote(*_failure_label(error)) if failing else quote(*_value_label(v))
    return (
        f"{quote(e['from'])} -> {quote(e['to'])} [id={quote(edge_id(phase, e['id']))}, "
        f"class={quote(' '.join(classes))}, label={label}, {style}];"
    )


def to_dot(phase: dict, error: dict | None) -> str:
    """DOT text for one phase of explain.json; `error` is explain.json's error (drawn if it is here)."""
    name = phase["phase"]
    failing_op = error["op"] if error and error.get("phase") == name else None
    holders = _holders(phase)
    groups = _clusters(phase, holders)
    lines = [
        f"digraph {quote(name)} {{",
        '  graph [rankdir=TB, nodesep=0.25, ranksep=0.35, fontname="Helvetica", fontsize=11, '
        'bgcolor="transparent", id=' + quote(f"graph/{name}") + "];",
        '  node [shape=box, fontname="Helvetica", fontsize=10, margin="0.12,0.04", color="#5f6368"];',
        '  edge [fontname="Helvetica", fontsize=8, fontcolor="#5f6368", arrowsize=0.6];',
    ]
    members: dict[str | None, list[str]] = {}
    for n in phase["nodes"]:
        members.setdefault(groups[n["name"]], []).append(_node_stmt(name, n, groups[n["name"]], failing_op))
    for h in sorted(holders):
        members.setdefault(groups[h], []).append(_holder_stmt(name, h, holders[h], phase["values"]))
    for group in sorted(members, key=lambda g: (g is not None, g or "")):
        if group is None:
            lines += ["  " + s for s in members[group]]
            continue
        lines.append(f"  subgraph {quote('cluster_' + group)} {{")
        lines.append(
            f'    label={quote(group)}; style="rounded,dashed"; color="#bdc1c6"; id={quote(f"cluster/{name}/{group}")};'
        )
        lines += ["    " + s for s in members[group]]
        lines.append("  }")
    lines += ["  " + _edge_stmt(name, e, phase["values"], error) for e in phase["edges"]]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(dot_text: str, what: str) -> str:
    """The SVG element dot lays out for `dot_text` (XML prologue stripped, for inlining)."""
    exe = shutil.which("dot")
    if exe is None:
        raise ExploreError("Graphviz's dot is not on PATH: install Debian's graphviz (./bazelw installs it)")
    try:
        done = subprocess.run(
            [exe, "-Tsvg"], check=False, input=dot_text, capture_output=True, text=True, timeout=DOT_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise ExploreError(f"{what}: dot took over {DOT_TIMEOUT_S} s to lay out the graph") from None
    if done.returncode != 0:
        raise ExploreError(
            f"{what}: dot failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
        )
    svg = done.stdout
    return svg[svg.index("<svg") :]
