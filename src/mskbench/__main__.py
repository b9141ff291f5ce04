"""``python -m mskbench``: the command line (:mod:`mskbench.cli`)."""

from mskbench.cli import main

if __name__ == "__main__":
    main(prog_name="mskbench")
