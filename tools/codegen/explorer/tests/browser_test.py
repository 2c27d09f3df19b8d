"""A compile that fails still yields a page, checked in headless Chromium: the toy decoder without
its layout converter (no route) shows the error and the failing edge highlighted and selected;
without its attention kernel (no provider) the op that has none, with every candidate rejected."""

import os
import shutil

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tools.codegen.explorer import main
from tools.codegen.testing.toy import TOY, run_pytest
from tools.testing.browser import chromium


def failed_page(tmp_path, drop: str) -> str:
    maps = tmp_path / "maps"
    shutil.copytree(os.path.join(TOY, "kernels"), maps)
    os.remove(maps / drop)
    out = str(tmp_path / f"without_{drop}.html")
    assert (
        main.main(
            [
                "--circuit",
                f"{TOY}/toy_decoder.json",
                "--kernel_maps",
                str(maps),
                "--config",
                f"{TOY}/config.json",
                "--variant",
                "toy",
                "--out",
                out,
            ]
        )
        == 1
    )
    return out


@pytest.fixture(scope="module")
def driver():
    with chromium() as d:
        yield d


def load(driver, path):
    driver.get("file://" + path)
    WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    return driver.execute_script("return JSON.parse(document.getElementById('explorer-data').textContent).explain")


def test_no_route_shows_the_failing_edge(driver, tmp_path):
    ex = load(driver, failed_page(tmp_path, "token_to_head_major.json"))
    err = ex["error"]
    banner = driver.find_element(By.ID, "error-banner")
    assert banner.is_displayed() and driver.find_element(By.ID, "error-message").text == err["message"]
    assert "no route" in err["message"]
    edge = driver.find_element(By.ID, f"edge/prefill/{err['edge']['id']}")
    classes = edge.get_attribute("class").split()
    assert "failing" in classes and "selected" in classes and edge.is_displayed()
    assert driver.find_elements(By.CSS_SELECTOR, "g.edge.failing") == [edge]  # only that edge
    tab = driver.find_element(By.CSS_SELECTOR, "#phase-tabs button.active")
    assert tab.get_attribute("data-phase") == "prefill" and "status-failed" in tab.get_attribute("class")
    panel = driver.find_element(By.ID, "panel").text
    assert err["message"] in panel and "no route: none of the declared converters (none)" in panel
    # The rest of the circuit is still drawn (from its declared edges), in both phases.
    for name in ("blocks.1.cross_attn", "logits"):
        assert driver.find_elements(By.ID, f"node/prefill/{name}") and driver.find_elements(
            By.ID, f"node/decode/{name}"
        )


def test_no_provider_shows_the_op_and_its_rejected_candidates(driver, tmp_path):
    ex = load(driver, failed_page(tmp_path, "attention.json"))
    err = ex["error"]
    node = driver.find_element(By.ID, f"node/prefill/{err['op']}")
    assert {"failing", "selected"} <= set(node.get_attribute("class").split())
    assert driver.find_element(By.ID, "panel-kernel").text == "(none selected)"
    rows = driver.find_elements(By.CSS_SELECTOR, "#panel-candidates tr.candidate")
    assert len(rows) == len(ex["kernels"]) and all(r.get_attribute("class").endswith("rejected") for r in rows)
    assert "no provider" in driver.find_element(By.ID, "error-message").text


if __name__ == "__main__":
    run_pytest(__file__)
