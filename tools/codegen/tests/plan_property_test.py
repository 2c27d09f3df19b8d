"""Property: in every plan, no two buffers live at the same call share a byte; offsets are
64-byte aligned and inside the arena."""

import json
import pathlib
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.codegen import plan
from tools.codegen.compiler import compile_circuit
from tools.codegen.testing.toy import TOY, circuit, kmap, port, run_pytest, write_case

ADD = kmap(
    "ckw_add",
    "add",
    {"x": port("input", ["M", "N"]), "r": port("input", ["M", "N"]), "y": port("output", ["M", "N"])},
    ["M", "N"],
    scratch="4 * M * N",
)


def assert_sound(arena, buffers):
    assert plan.overlapping_pairs(buffers) == []
    for b in buffers:
        assert b.offset % plan.ALIGN == 0 and b.offset + b.bytes <= arena


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(0, 30), st.integers(0, 8)), min_size=1, max_size=40))
def test_random_lifetimes_never_overlap(specs):
    buffers = [plan.Buffer(f"b{i}", size, first, first + span) for i, (size, first, span) in enumerate(specs)]
    arena = plan._assign_offsets(buffers)
    assert_sound(arena, buffers)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100)), min_size=1, max_size=12),
    st.integers(1, 9),
    st.integers(1, 33),
)
def test_random_circuits_never_overlap(picks, t, d):
    """Random DAGs of `add` ops: each reads two earlier values (or the input)."""
    ops = []
    for i, (a, b) in enumerate(picks):
        src = ["external:x"] + [f"op:n{j}.y" for j in range(i)]
        ops.append({"name": f"n{i}", "kind": "add", "inputs": {"x": src[a % len(src)], "r": src[b % len(src)]}})
    outputs = {
        "out": {
            "from": f"op:n{len(ops) - 1}.y",
            "dtype": "f32",
            "shape": ["T", "D"],
            "layout": "token_major",
            "phases": ["run"],
        }
    }
    with tempfile.TemporaryDirectory() as tmp:
        result = compile_circuit(**write_case(pathlib.Path(tmp), circuit(ops, outputs), [ADD], {"t": t, "d": d}))
    for p in result.plans:
        buffers = [plan.Buffer(a["id"], a["bytes"], a["live"][0], a["live"][1], a["offset"]) for a in p["arena"]]
        assert_sound(p["arena_bytes"], buffers)


def test_toy_plans_never_overlap():
    result = compile_circuit(
        f"{TOY}/toy_decoder.json", [f"{TOY}/kernels"], f"{TOY}/config.json", f"{TOY}/manifest.json", "toy"
    )
    assert len(result.plans) == 2
    for p in result.plans:
        buffers = [plan.Buffer(a["id"], a["bytes"], a["live"][0], a["live"][1], a["offset"]) for a in p["arena"]]
        assert len(buffers) > 5
        assert_sound(p["arena_bytes"], buffers)
    json.dumps(result.ir)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), min_size=1, max_size=40))
def test_run_time_slots_hold_only_disjoint_lifetimes(specs):
    """Plans whose sizes are known only at run time share a slot only between dead and new buffers."""
    buffers = [plan.Buffer(f"b{i}", 0, first, first + span, size_c="n") for i, (first, span) in enumerate(specs)]
    slots = plan._assign_slots(buffers)
    by_id = {b.id: b for b in buffers}
    assert sorted(i for s in slots for i in s) == sorted(by_id)
    for slot in slots:
        members = [by_id[i] for i in slot]
        for a in members:
            for b in members:
                assert a is b or a.last < b.first or b.last < a.first


def test_overlap_detector_can_fail():
    a = plan.Buffer("a", 128, 0, 2, 0)
    b = plan.Buffer("b", 128, 1, 3, 64)
    assert plan.overlapping_pairs([a, b]) == [("a", "b")]


if __name__ == "__main__":
    run_pytest(__file__)
