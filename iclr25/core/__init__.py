"""The methods themselves: plain Python/numpy/torch, no typer, no rich."""
