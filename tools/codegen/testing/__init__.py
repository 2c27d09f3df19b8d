"""Helpers the codegen tests and other components' tests share: the toy circuit, synthetic
checkpoints, the C header reader."""
