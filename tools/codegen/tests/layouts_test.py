"""Layout joins: the cheapest declared converter route is inserted; no route or a tie fails
with the edge diagnostic naming both endpoints."""

import pytest

from tools.codegen import graph, layouts, load, selection
from tools.codegen.errors import CompileError
from tools.codegen.testing.toy import circuit, converter, run_pytest, unary, write_case

PRODUCER = unary("ckw_tok", "producer", "token_major", "token_major")
CONSUMER = unary("ckw_head", "consumer", "head_major", "head_major")
OPS = [
    {"name": "producer", "kind": "producer", "inputs": {"x": "external:x"}},
    {"name": "consumer", "kind": "consumer", "inputs": {"x": "op:producer.y"}},
]


def join(tmp_path, maps):
    args = write_case(tmp_path, circuit(OPS), maps)
    maps_docs = load.load_kernel_maps(load.find_kernel_maps(args["kernel_map_paths"]))
    g = graph.build(load.load_circuit(args["circuit_path"]), load.load_config(args["config_path"]))
    return layouts.join(g, selection.select(g, maps_docs), maps_docs, "run")


def kernels(pg):
    return [n.kernel for n in pg.nodes]


def test_route_through_cheapest_converter(tmp_path):
    maps = [
        PRODUCER,
        CONSUMER,
        converter("ckw_slow", "token_major", "head_major", 5),
        converter("ckw_fast", "token_major", "head_major", 2),
    ]
    assert kernels(join(tmp_path, maps)) == ["ckw_tok", "ckw_fast", "ckw_head"]


def test_two_step_chain_wins_when_cheaper(tmp_path):
    maps = [
        PRODUCER,
        CONSUMER,
        converter("ckw_direct", "token_major", "head_major", 5),
        converter("ckw_a", "token_major", "channel_major", 1),
        converter("ckw_b", "channel_major", "head_major", 1),
    ]
    assert kernels(join(tmp_path, maps)) == ["ckw_tok", "ckw_a", "ckw_b", "ckw_head"]


def test_no_route_names_both_endpoints(tmp_path):
    with pytest.raises(CompileError) as e:
        join(tmp_path, [PRODUCER, CONSUMER])
    assert str(e.value) == (
        "producer:y/token_major/arena -> consumer:x/head_major/arena: no route: "
        "no declared converter chain from token_major to head_major for f32"
    )


def test_converter_in_the_wrong_direction_is_no_route(tmp_path):
    with pytest.raises(CompileError, match="producer:y/token_major/arena -> consumer:x/head_major/arena: no route"):
        join(tmp_path, [PRODUCER, CONSUMER, converter("ckw_back", "head_major", "token_major", 1)])


def test_tie_is_an_error(tmp_path):
    maps = [
        PRODUCER,
        CONSUMER,
        converter("ckw_one", "token_major", "head_major", 2),
        converter("ckw_two", "token_major", "head_major", 2),
    ]
    with pytest.raises(CompileError) as e:
        join(tmp_path, maps)
    assert str(e.value).startswith("producer:y/token_major/arena -> consumer:x/head_major/arena: tie:")
    assert "ckw_one vs ckw_two" in str(e.value)


def test_same_layout_needs_no_converter(tmp_path):
    maps = [PRODUCER, unary("ckw_tok2", "consumer"), converter("ckw_fast", "token_major", "head_major", 2)]
    assert kernels(join(tmp_path, maps)) == ["ckw_tok", "ckw_tok2"]


if __name__ == "__main__":
    run_pytest(__file__)
