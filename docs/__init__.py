"""The docs generator: ``python -m docs`` (``make docs``) renders every measured section.

See :mod:`docs.render` for the markers, and ``docs/sections/<command>.py`` for the
renderers, one module per command.
"""
