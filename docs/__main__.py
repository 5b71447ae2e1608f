"""``python -m docs [--check]``: render the measured sections of README.md and docs/*.md.

Without ``--check`` the files are rewritten in place (atomically); with ``--check`` nothing
is written and the exit code is 1 when a section differs from what its result files render.
"""

from __future__ import annotations

import argparse
import sys

from docs.render import RenderError, render_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs")
    parser.add_argument("--check", action="store_true", help="report stale sections, write nothing")
    args = parser.parse_args(argv)
    try:
        changed = render_all(write=not args.check)
    except RenderError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    verb = "stale" if args.check else "rewritten"
    for path, keys in changed.items():
        print(f"{verb}: {path}: {', '.join(keys)}", file=sys.stderr)
    if not changed:
        print("docs: every generated section is up to date", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
