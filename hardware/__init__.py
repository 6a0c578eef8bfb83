"""The table's shipped hardware data, installed with tablectl as package data.

`pins.toml` (the pin maps) and `layouts/*.toml` (the printed felts the camera reads) are read at
run time through `importlib.resources`, so a wheel installed anywhere finds them; an operator's own
file (`indicators.pin_file`, a layout given by path) still overrides them by path. The Markdown
files beside them are the wiring, install and protocol documents.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped(*parts: str) -> Path:
    """The path of a file or folder shipped in this package (`shipped("layouts")`).

    tablectl is installed unpacked (pip installs wheels so), which makes every resource a real
    file; a zipped install is refused here in plain words rather than later with a wrong path."""
    resource = resources.files(__name__).joinpath(*parts)
    if not isinstance(resource, Path):
        raise RuntimeError(f"tablectl's hardware data is not on the file system ({resource}): install it unzipped")
    return resource
