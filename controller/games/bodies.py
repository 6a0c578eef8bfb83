"""What every game's API bodies share: strict pydantic models that refuse unknown keys.

The models check shape and types (strict: "10" is not a number of chips); the engine checks the
rules (wager order, limits, seats) and says which rule, so no rule is written twice.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
