"""Bazel 4.2.3 stays offline only while WORKSPACE binds these four names to the local shims."""

import os
import re

import pytest

RUNFILES = os.environ["TEST_SRCDIR"]
SHIMS = ["rules_cc", "rules_java", "rules_python", "remote_coverage_tools"]


def _read(rel):
    """`rel` is `<repository>/<path>`; the main repository is `ckw`."""
    with open(os.path.join(RUNFILES, rel), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("name", SHIMS)
def test_workspace_binds_shim_locally(name):
    ws = _read("ckw/WORKSPACE")
    m = re.search(r'local_repository\(\s*name = "%s",\s*path = "([^"]+)"' % name, ws)
    assert m, f"WORKSPACE does not bind {name} with local_repository"
    assert m.group(1) == f"third_party/{name}"
    assert f'workspace(name = "{name}")' in _read(f"{name}/WORKSPACE")


def test_no_network_fetch_in_workspace():
    ws = _read("ckw/WORKSPACE")
    assert "http_archive" not in ws and "git_repository" not in ws


@pytest.mark.parametrize(
    "shim,rules",
    [
        ("rules_cc/cc/defs.bzl", ["cc_binary", "cc_library", "cc_test"]),
        ("rules_java/java/defs.bzl", ["java_binary", "java_library", "java_test"]),
        ("rules_python/python/defs.bzl", ["py_binary", "py_library", "py_test", "py_runtime"]),
    ],
)
def test_shim_reexports_native_rules(shim, rules):
    text = _read(shim)
    for rule in rules:
        assert re.search(r"def %s\(\*\*attrs\):\s*native\.%s\(\*\*attrs\)" % (rule, rule), text), f"{shim}: {rule}"


def test_rules_python_reexports_runtime_pair():
    assert "py_runtime_pair" in _read("rules_python/python/defs.bzl")
