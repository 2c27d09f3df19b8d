"""`py_pytest`: a py_test that runs its sources under pytest."""

load("@rules_python//python:defs.bzl", "py_test")

def py_pytest(name, srcs, args = [], **kwargs):
    """Runs pytest on `srcs` as one Bazel test.

    Args:
      name: test name.
      srcs: the test files (test_*.py or *_test.py); all are collected by pytest.
      args: extra pytest arguments.
      **kwargs: passed to py_test (deps, data, size, tags, ...).
    """
    py_test(
        name = name,
        srcs = srcs + ["//tools/testing:pytest_main.py"],
        main = "//tools/testing:pytest_main.py",
        args = args + ["$(rootpath %s)" % s for s in srcs],
        python_version = "PY3",
        **kwargs
    )
