"""`python -m ckw` and the wheel's `ckw` command: //tools:transcribe's CLI, the same flags, defaults,
outputs and errors."""


def main() -> None:
    from ckw.cli import transcribe

    transcribe.run("ckw")


if __name__ == "__main__":
    main()
