"""The explorer page without a browser: built from the toy decoder's compiler outputs (the build's
toy_decoder_c), it holds every call of the IR as an SVG node and every edge of explain.json,
needs nothing from the network, and embeds its data safely; X-ray rows are placed on the values
the call IR's taps name; bad inputs are one-line errors naming the file or flag."""

import html
import json
import os
import re
import zipfile

import pytest

from tools.codegen.explorer import inputs, main, page, xray
from tools.codegen.explorer.errors import ExploreError
from tools.codegen.testing.toy import TOY, run_pytest

OUTPUTS = "tools/codegen/testdata/toy/toy_decoder_c"  # the build's compiler outputs (runfiles)


@pytest.fixture(scope="module")
def toy():
    return inputs.from_outputs(OUTPUTS)


@pytest.fixture(scope="module")
def toy_page(toy):
    return page.render(toy)


def svg_ids(text):
    return {html.unescape(i) for i in re.findall(r'<g id="([^"]+)" class="(?:node|edge)', text)}


def embedded(text):
    block = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', text, re.DOTALL).group(1)
    return json.loads(block)


def test_every_call_and_edge_is_drawn(toy, toy_page):
    ids = svg_ids(toy_page)
    for phase in toy.ir["phases"]:
        for call in phase["calls"]:
            assert f"node/{phase['phase']}/{call['node']}" in ids
    for phase in toy.explain["phases"]:
        for e in phase["edges"]:
            assert f"edge/{phase['phase']}/{e['id']}" in ids


def test_page_is_self_contained(toy_page):
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", toy_page)
    assert "url(" not in toy_page and "@import" not in toy_page and "fetch(" not in toy_page
    # The only absolute URLs are SVG namespace names, which are never fetched.
    assert set(re.findall(r"https?://[^\s\"']+", toy_page)) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
    }


def test_data_round_trips(toy, toy_page):
    data = embedded(toy_page)
    assert data["explain"] == toy.explain
    assert data["plans"] == toy.plans
    call = data["calls"]["decode"]["blocks.0.cross_attn"]
    assert [a["arg"] for a in call["args"]][:4] == ["y", "q", "k", "v"]


def test_script_text_cannot_close_the_block():
    text = page._json_for_script({"x": "</script><script>alert(1)</script>"})
    assert "</" not in text and json.loads(text)["x"].startswith("</script>")


def test_xray_rows_land_on_tapped_values(toy):
    data = {
        "rows": [
            {"part": "decoder", "phase": "prefill", "edge": "blocks.0.cross_attn.y", "max_rel": 1e-6},
            {
                "part": "decoder",
                "phase": "decode",
                "edge": "state:self_k[1,0]<-head_major.y",
                "max_rel": 2e-3,
                "error": "max_rel 2.00e-03 > 1e-03",
            },
            {"part": "decoder", "phase": "prefill", "edge": "blocks.0.mlp.y - blocks.0.cross_attn.y", "max_rel": 1e-6},
            {"part": "encoder", "phase": "run", "edge": "conv1.y", "max_rel": 1e-6},
        ]
    }
    placed = xray.place(data, "decoder", toy.ir)["rows"]
    assert [r["value"] for r in placed] == ["blocks.0.cross_attn.y", "state:self_k[1,0]", None]
    assert [r["over"] for r in placed] == [False, True, False]


def test_xray_input_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ExploreError, match=rf"^{re.escape(str(bad))}:1:2: invalid JSON"):
        xray.load(str(bad))
    bad.write_text(json.dumps({"rows": [{"part": "decoder", "edge": "x"}]}))
    with pytest.raises(ExploreError, match=r"/rows/0: missing or not a string: phase"):
        xray.load(str(bad))
    archive = tmp_path / "outputs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("xray_tiny.tsv", "")
    with pytest.raises(ExploreError, match="holds no xray_"):
        xray.load(str(archive))
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("xray_tiny.json", json.dumps({"rows": []}))
    assert xray.load(str(tmp_path))["source"].endswith("outputs.zip!xray_tiny.json")


def one_line_error(capsys, argv):
    assert main.main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("explore: error: "), err
    return err


def test_cli_errors(tmp_path, capsys):
    assert "--out FILE.html is required" in one_line_error(capsys, ["--outputs", OUTPUTS])
    assert "exactly one of" in one_line_error(capsys, ["--outputs", OUTPUTS, "--circuit", "x.json", "--out", "x"])
    assert "not a directory" in one_line_error(capsys, ["--outputs", str(tmp_path / "none"), "--out", "x.html"])
    assert "explain.json: not found" in one_line_error(capsys, ["--outputs", str(tmp_path), "--out", "x.html"])
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"libraries": {"tiny/decoder": {"outputs": "x"}}}))
    err = one_line_error(capsys, ["--index", str(index), "--model", "small", "--part", "decoder"])
    assert "no such library; choose one of tiny/decoder" in err
    assert not (tmp_path / "x.html").exists()


def test_cli_writes_the_page(tmp_path, capsys):
    out = tmp_path / "toy.html"
    assert main.main(["--outputs", OUTPUTS, "--out", str(out)]) == 0
    assert f"file://{out}" in capsys.readouterr().out
    assert "node/decode/blocks.1.cross_attn" in out.read_text()


def test_failed_compile_still_writes_the_page(tmp_path, capsys):
    maps = [os.path.join(TOY, "kernels", f) for f in os.listdir(os.path.join(TOY, "kernels")) if f != "attention.json"]
    out = tmp_path / "failed.html"
    argv = [
        "--circuit",
        f"{TOY}/toy_decoder.json",
        "--config",
        f"{TOY}/config.json",
        "--variant",
        "toy",
        "--out",
        str(out),
    ]
    for m in maps:
        argv += ["--kernel_maps", m]
    assert main.main(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert "no provider" in err[0] and err[1].endswith("it shows the error and the failing op")
    data = embedded(out.read_text())
    assert data["explain"]["error"]["op"] == "blocks.0.self_attn"
    assert 'class="node op failing"' in out.read_text()


if __name__ == "__main__":
    run_pytest(__file__)
