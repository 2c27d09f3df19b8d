"""`python -m ckw` and the wheel's `ckw` command: //tools:transcribe's CLI, the same flags, defaults,
outputs and errors."""

import sys


def main() -> None:
    from absl import app, flags

    from tools import transcribe

    transcribe.PROGRAM = "ckw"
    # --help lists the key flags of the module named by sys.argv[0] (the console script, or this
    # file under -m): make the CLI's flags that module's.
    for flag in flags.FLAGS.get_key_flags_for_module(transcribe):
        flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)
    app.run(transcribe.main, flags_parser=transcribe.parse_flags)


if __name__ == "__main__":
    main()
