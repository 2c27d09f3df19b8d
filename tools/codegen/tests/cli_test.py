"""The CLI: exit 1 with one diagnostic line on failure, --check writes nothing, relative paths
resolve from BUILD_WORKING_DIRECTORY."""

import os

from tools.codegen import main
from tools.codegen.testing.toy import TOY, run_pytest

TOY_ARGS = [
    "--circuit",
    f"{TOY}/toy_decoder.json",
    "--kernel_maps",
    f"{TOY}/kernels",
    "--config",
    f"{TOY}/config.json",
    "--variant",
    "toy",
]


def test_check_only_validates(tmp_path, capsys):
    assert main.main(TOY_ARGS + ["--check", "--out_dir", str(tmp_path / "o")]) == 0
    assert not (tmp_path / "o").exists()
    assert capsys.readouterr().out.startswith("ok: ")


def test_failure_is_exit_1_and_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"circuit": "x"}')
    args = ["--circuit", str(bad), "--kernel_maps", f"{TOY}/kernels", "--config", f"{TOY}/config.json", "--check"]
    assert main.main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {bad}: /: expected property 'dims'")


def test_relative_paths_from_build_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("BUILD_WORKING_DIRECTORY", TOY)
    cwd = os.getcwd()
    try:
        rc = main.main(
            [
                "--circuit",
                "toy_decoder.json",
                "--kernel_maps",
                "kernels",
                "--config",
                "config.json",
                "--variant",
                "toy",
                "--out_dir",
                "out_rel_test",
            ]
        )
    finally:
        os.chdir(cwd)
    out = os.path.join(TOY, "out_rel_test")
    try:
        assert rc == 0
        assert sorted(os.listdir(out)) == [
            "abi.json",
            "ckw_toy_decoder.c",
            "ckw_toy_decoder.h",
            "explain.json",
            "ir.json",
            "plan_decode.json",
            "plan_prefill.json",
        ]
    finally:
        for f in os.listdir(out) if os.path.isdir(out) else []:
            os.remove(os.path.join(out, f))
        if os.path.isdir(out):
            os.rmdir(out)


def test_two_runs_byte_identical(tmp_path):
    for d in ("a", "b"):
        assert main.main(TOY_ARGS + ["--out_dir", str(tmp_path / d)]) == 0
    for name in os.listdir(tmp_path / "a"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


if __name__ == "__main__":
    run_pytest(__file__)
