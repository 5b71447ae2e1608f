"""One Typer sub-app per subcommand: parse options, call core, render (see cli.py)."""
