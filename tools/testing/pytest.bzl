"""`py_pytest`: a py_test that runs its sources under pytest."""

load("@rules_python//python:defs.bzl", "py_test")

def py_pytest(name, srcs, args = [], data = [], **kwargs):
    """Runs pytest on `srcs` as one Bazel test.

    Args:
      name: test name.
      srcs: the test files (test_*.py or *_test.py); all are collected by pytest.
      args: extra pytest arguments.
      data: runfiles; requirements_lock.txt is added, so a change to the pinned packages (which
        the toolchain's .venv holds, outside Bazel's view) runs the test again.
      **kwargs: passed to py_test (deps, size, tags, ...).
    """
    py_test(
        name = name,
        srcs = srcs + ["//tools/testing:pytest_main.py"],
        main = "//tools/testing:pytest_main.py",
        args = args + ["$(rootpath %s)" % s for s in srcs],
        data = data + ["//:requirements_lock.txt"],
        python_version = "PY3",
        **kwargs
    )
