"""A pytest fixture for tests that open models by name (ckw.WhisperModel, Engine.from_name):
each test module gets its own empty model cache and the Hub is never asked, so a test sees the
models the build ships and nothing a machine downloaded earlier.

    from ckw.runtime.testing.offline_cache import offline_cache  # noqa: F401 (autouse fixture)
"""

import pytest


@pytest.fixture(scope="module", autouse=True)
def offline_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CKW_CACHE_DIR", str(tmp_path_factory.mktemp("ckw-cache")))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield
