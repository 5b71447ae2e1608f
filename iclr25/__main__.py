"""`python -m iclr25` is the same as the `iclr25` console script."""

from iclr25.cli import main

if __name__ == "__main__":
    main()
