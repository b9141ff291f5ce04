"""``python -m mskbench.cli``: the command line."""

from mskbench.cli import main

if __name__ == "__main__":
    main()
