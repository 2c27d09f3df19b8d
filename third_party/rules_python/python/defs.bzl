"""Offline shim for @rules_python: the native Python rules under their usual load path."""

load("@bazel_tools//tools/python:toolchain.bzl", _py_runtime_pair = "py_runtime_pair")

py_runtime_pair = _py_runtime_pair

def py_binary(**attrs):
    native.py_binary(**attrs)

def py_library(**attrs):
    native.py_library(**attrs)

def py_runtime(**attrs):
    native.py_runtime(**attrs)

def py_test(**attrs):
    native.py_test(**attrs)
