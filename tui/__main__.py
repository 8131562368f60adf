"""`python -m tui` runs the same command line as the `tracetui` script."""

from tui.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
