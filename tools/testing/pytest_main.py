"""Runs pytest on the test files a py_test names, so Bazel's exit code is pytest's."""

import os
import sys

import pytest

if __name__ == "__main__":
    args = ["-q", "-p", "no:cacheprovider"]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append(f"--junitxml={xml}")
    sys.exit(pytest.main(args + sys.argv[1:]))
