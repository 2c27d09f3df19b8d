"""Headless Chromium for tests, driven through Debian's chromedriver with selenium.

    with chromium() as driver:
        driver.get("file://" + page)

A fresh profile per browser (in the test's temporary folder), no network services, no sandbox
(tests run unprivileged in containers). Missing Chromium or chromedriver is a clear error that
says how to install them."""

import contextlib
import os
import shutil
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
]


def _which(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(
            f"{name} is not on PATH: install Debian's chromium and chromium-driver (./bazelw installs them)"
        )
    return path


@contextlib.contextmanager
def chromium(width: int = 1400, height: int = 900):
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=os.environ.get("TEST_TMPDIR"))
    options = webdriver.ChromeOptions()
    options.binary_location = _which("chromium")
    for flag in FLAGS + [f"--user-data-dir={profile}", f"--window-size={width},{height}"]:
        options.add_argument(flag)
    service = Service(executable_path=_which("chromedriver"), log_output=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
