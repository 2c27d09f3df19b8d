"""The IR explorer pages (//models/whisper:<library>_explorer) in headless Chromium. Every page
of tiny and base (frontend, encoder, decoder) draws every node of its ir.json and every edge and
value holder of its explain.json, phase by phase, the converters that write cross-K/V state
included. On tiny's decoder: clicking the cross-attention op opens its panel with its kernel,
every rejected candidate and the generated call; each phase's arena timeline peaks where the plan
JSON says; search finds ops by kernel name and finds the converters; X-ray rows colour their edges
(a converter's into its state cylinder too) and are listed; a screenshot of the prefill phase with
the converter into cross_k[0] selected is taken (explorer_tiny_decoder.png in the test's outputs)
and is not blank. Base's decoder, the largest graph, answers a search (times printed, not
asserted)."""

import io
import json
import os
import sys
import time

import pytest
from PIL import Image
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tools.codegen.explorer import main
from tools.testing.browser import chromium

HERE = "models/whisper"
CROSS_ATTN = "blocks.0.cross_attn"
CONVERTER = "state:cross_k[0]<-head_major"  # writes layer 0's cross-attention keys
WAIT_S = 60  # for the page and for elements to appear: generous on a loaded CI machine


def outputs(library: str, name: str):
    with open(f"{HERE}/{library}_c/{name}", encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def driver():
    with chromium() as d:
        yield d


def load(driver, path: str) -> float:
    start = time.monotonic()
    driver.get("file://" + os.path.abspath(path))
    WebDriverWait(driver, WAIT_S).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    return time.monotonic() - start


def open_phase(driver, phase: str) -> None:
    driver.find_element(By.CSS_SELECTOR, "#view-tabs button[data-view=graph]").click()
    driver.find_element(By.CSS_SELECTOR, f"#phase-tabs button[data-phase={phase}]").click()


@pytest.fixture(scope="module")
def tiny(driver):
    load(driver, f"{HERE}/tiny_decoder_explorer.html")
    return driver


def test_cross_attention_panel(tiny):
    explain = outputs("tiny_decoder", "explain.json")
    open_phase(tiny, "decode")
    tiny.find_element(By.ID, f"node/decode/{CROSS_ATTN}").click()
    assert tiny.find_element(By.ID, "panel-title").text == CROSS_ATTN
    assert tiny.find_element(By.ID, "panel-kernel").text == "ckw_f32_attention"
    selected = tiny.find_elements(By.CSS_SELECTOR, "#panel-candidates tr.selected-kernel")
    assert [r.get_attribute("data-kernel") for r in selected] == ["ckw_f32_attention"]
    rejected = tiny.find_elements(By.CSS_SELECTOR, "#panel-candidates tr.rejected")
    assert {r.get_attribute("data-kernel") for r in rejected} == set(explain["kernels"]) - {"ckw_f32_attention"}
    # every other map is of another kind, but the bf16 build's attention (made for another build)
    # and the attention on an f16 cache (this build stores cross_k as f32)
    why = {r.get_attribute("data-kernel"): r.text for r in rejected}
    assert "rejected: made for the bf16 build(s), not this one" in why.pop("ckw_bf16_attention")
    assert "rejected: port 'k' reads f16, but state cross_k is f32" in why.pop("ckw_f16kv_attention")
    assert all("rejected: provides '" in text for text in why.values()), why
    call = tiny.find_element(By.ID, "panel-call").text
    ir_call = next(
        c
        for p in outputs("tiny_decoder", "ir.json")["phases"]
        if p["phase"] == "decode"
        for c in p["calls"]
        if c["node"] == CROSS_ATTN
    )
    assert call.startswith("ckw_f32_attention(")
    assert all(f"{a['c']}" in call and a["source"] in call for a in ir_call["args"])
    declared = explain["kernels"]["ckw_f32_attention"]["parallel"]
    assert declared and len(tiny.find_elements(By.CSS_SELECTOR, "#panel table.splits tbody tr")) == len(declared)
    used = ir_call["parallel"]["splits"]
    assert tiny.find_element(By.ID, "panel-split-call").text.startswith(f"this call: split {used[0]['split']} ")


def test_arena_peak_equals_the_plan(tiny):
    tiny.find_element(By.CSS_SELECTOR, "#view-tabs button[data-view=memory]").click()
    for phase in ("prefill", "decode"):
        plan = outputs("tiny_decoder", f"plan_{phase}.json")
        peak = tiny.find_element(By.ID, f"arena-peak-{phase}")
        assert int(peak.get_attribute("data-bytes")) == plan["arena_bytes"] > 0
        rects = tiny.find_elements(By.CSS_SELECTOR, f"#timeline-{phase} rect.buffer")
        assert len(rects) == len(plan["arena"])


def test_search_by_kernel_name(tiny):
    ir = outputs("tiny_decoder", "ir.json")
    want = sum("ckw_f32_attention" in c["kernel"] for p in ir["phases"] for c in p["calls"])  # a substring search
    box = tiny.find_element(By.ID, "search")
    box.clear()
    box.send_keys("ckw_f32_attention")
    WebDriverWait(tiny, WAIT_S).until(lambda d: d.find_element(By.ID, "search-count").text.startswith(f"{want} match"))
    assert len(tiny.find_elements(By.CSS_SELECTOR, "#search-results li")) == want
    box.send_keys(Keys.ESCAPE)


def test_search_finds_the_cross_kv_converters(tiny):
    box = tiny.find_element(By.ID, "search")
    box.clear()
    box.send_keys("<-head_major")  # the converters into state, by name
    layers = outputs("tiny_decoder", "ir.json")["dims"]["n_text_layer"]
    WebDriverWait(tiny, WAIT_S).until(
        lambda d: d.find_element(By.ID, "search-count").text.startswith(f"{2 * layers} match")
    )
    names = [li.get_attribute("data-node") for li in tiny.find_elements(By.CSS_SELECTOR, "#search-results li")]
    assert CONVERTER in names
    box.send_keys(Keys.ESCAPE)


def test_screenshot_is_not_blank(tiny):
    open_phase(tiny, "prefill")
    node = tiny.find_element(By.ID, f"node/prefill/{CONVERTER}")
    tiny.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'});", node)
    node.click()
    assert tiny.find_element(By.ID, "panel-title").text == CONVERTER
    png = tiny.get_screenshot_as_png()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 20)
    white = max(colors)[0] / (image.width * image.height)
    assert len(colors) > 100 and white < 0.9, f"{len(colors)} colours, {white:.0%} background"
    out = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out:  # a small copy for the README (docs/explorer.png)
        small = image.resize((image.width * 3 // 4, image.height * 3 // 4), Image.LANCZOS).quantize(colors=128)
        small.save(os.path.join(out, "explorer_tiny_decoder.png"), optimize=True)


def test_xray_rows_colour_their_edges(driver, tmp_path):
    """The X-ray parity test's JSON format, drawn: a row within the bounds and one over them."""
    rows = {
        "variant": "tiny",
        "bounds": {"max_rel": 1e-3, "rmse_rel": 2e-4},
        "rows": [
            {
                "part": "decoder",
                "phase": "decode",
                "edge": f"{CROSS_ATTN}.o",
                "max_abs": 1e-6,
                "max_rel": 2e-6,
                "rmse": 1e-7,
                "rmse_rel": 1e-6,
                "error": "",
            },
            {
                "part": "decoder",
                "phase": "decode",
                "edge": "blocks.1.fc1.y",
                "max_abs": 0.5,
                "max_rel": 2e-2,
                "rmse": 0.1,
                "rmse_rel": 1e-2,
                "error": "max_rel 2.00e-02 > 1e-03",
            },
            {
                "part": "decoder",
                "phase": "prefill",
                "edge": f"{CONVERTER}.dst",
                "max_abs": 2e-6,
                "max_rel": 3e-6,
                "rmse": 1e-7,
                "rmse_rel": 1e-6,
                "error": "",
            },
            {"part": "encoder", "phase": "run", "edge": "conv1.y", "max_abs": 1e-6, "max_rel": 1e-6},
        ],
    }
    (tmp_path / "xray_tiny.json").write_text(json.dumps(rows))
    page = str(tmp_path / "tiny_decoder_xray.html")
    assert (
        main.main(["--outputs", f"{HERE}/tiny_decoder_c", "--xray", str(tmp_path / "xray_tiny.json"), "--out", page])
        == 0
    )
    load(driver, page)
    good = driver.find_elements(By.CSS_SELECTOR, "#graph-decode g.edge.xray-good")
    over = driver.find_elements(By.CSS_SELECTOR, "#graph-decode g.edge.xray-over")
    assert good and all(f"/{CROSS_ATTN}.o: " in e.get_attribute("id") for e in good)
    assert over and all("/blocks.1.fc1.y: " in e.get_attribute("id") for e in over)
    hover = driver.execute_script("return arguments[0].querySelector('title').textContent", over[0])
    assert hover.endswith("X-ray blocks.1.fc1.y: max_rel 2.00e-2, rmse_rel 1.00e-2 (OVER)")
    driver.find_element(By.CSS_SELECTOR, "#view-tabs button[data-view=xray]").click()
    into_state = driver.find_elements(By.CSS_SELECTOR, "#graph-prefill g.edge.xray-good")
    assert any(
        e.get_attribute("id") == f"edge/prefill/state:cross_k[0]: {CONVERTER} -> state:cross_k[0]" for e in into_state
    ), "the converter's edge into its state cylinder is not coloured"
    table = driver.find_elements(By.CSS_SELECTOR, "#xray-table tbody tr")
    assert len(table) == 3  # the decoder's rows only
    assert any(f"{CONVERTER}.dst" in r.text for r in table)
    table[0].click()  # worst first: the one over the bound
    assert "blocks.1.fc1.y" in driver.find_element(By.ID, "panel-title").text
    assert "2.00e-2" in driver.find_element(By.ID, "panel").text


def test_base_decoder_stays_responsive(driver):
    seconds = load(driver, f"{HERE}/base_decoder_explorer.html")
    start = time.monotonic()
    box = driver.find_element(By.ID, "search")
    box.send_keys("blocks.5.cross_attn")
    WebDriverWait(driver, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results li"))
    box.send_keys(Keys.ENTER)
    node = driver.find_element(By.ID, "node/prefill/blocks.5.cross_attn")
    WebDriverWait(driver, WAIT_S).until(lambda d: "selected" in node.get_attribute("class").split())
    found = time.monotonic() - start
    print(f"\nbase decoder page: loaded in {seconds:.2f} s, search and select in {found:.2f} s", file=sys.stderr)
    assert driver.find_element(By.ID, "panel-title").text == "blocks.5.cross_attn"


LIBRARIES = ["frontend", "tiny_encoder", "tiny_decoder", "base_encoder", "base_decoder"]


def drawn_ids(library: str) -> dict[str, list[str]]:
    """phase -> the SVG ids its graph must hold: a node per call of ir.json (what the compiler
    emits, converters into state included), a node per value holder and an edge per edge of
    explain.json."""
    ir, explain = outputs(library, "ir.json"), outputs(library, "explain.json")
    edges = {p["phase"]: p["edges"] for p in explain["phases"]}
    ids = {}
    for p in ir["phases"]:
        phase = p["phase"]
        calls = [c["node"] for c in p["calls"]]
        holders = sorted({end for e in edges[phase] for end in (e["from"], e["to"])} - set(calls))
        ids[phase] = [f"node/{phase}/{n}" for n in calls + holders] + [f"edge/{phase}/{e['id']}" for e in edges[phase]]
    return ids


@pytest.mark.parametrize("library", LIBRARIES)
def test_every_node_and_edge_is_drawn(driver, library):
    load(driver, f"{HERE}/{library}_explorer.html")
    ids = drawn_ids(library)
    counts = []
    for phase, want in ids.items():
        drawn = driver.execute_script(
            "const g = document.getElementById('graph-' + arguments[0]);"
            "return Array.from(g.querySelectorAll('g.node, g.edge'), (e) => e.id);",
            phase,
        )
        missing = [i for i in want if i not in set(drawn)]
        assert not missing, f"{library} {phase}: {len(missing)} of {len(want)} not drawn, first: {missing[:5]}"
        counts.append(
            f"{phase} {sum(i.startswith('node/') for i in want)} nodes, "
            f"{sum(i.startswith('edge/') for i in want)} edges"
        )
    print(f"\n{library}: {'; '.join(counts)} (all drawn)", file=sys.stderr)
    if library.endswith("decoder"):  # the converters into cross-K/V state are among them
        converters = [i for i in ids["prefill"] if i.startswith("node/prefill/state:cross_") and "<-" in i]
        assert len(converters) == 2 * outputs(library, "ir.json")["dims"]["n_text_layer"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-s", "-p", "no:cacheprovider"]))
