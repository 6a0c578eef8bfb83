"""The API's JSON (GET /api/state's body, the screens' feed): the bytes FastAPI's JSONResponse
would write for the same document, whichever encoder made them (controller/api/gate.py's
`json_bytes`: orjson, the standard library where orjson refuses), for what the table says and for
the documents orjson does not take."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.gate import json_bytes, json_text
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table


def stdlib(doc: Any) -> bytes:
    """What FastAPI's JSONResponse writes for `doc`."""
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


@pytest.mark.parametrize(
    "doc",
    [
        {"table": "Mesa Ñ 7 — salle «Élysée»", "seats": [1, 2, 3], "note": "emoji \U0001f0cf and \u2028 and \x00 and \"quotes\" \\"},
        {"big": 2**63 - 1, "small": -(2**63), "bool": True, "none": None, "nested": {"a": [[], {}, [{"b": 0}]]}},
        {"float": 0.1, "whole": 25.0, "tiny": 5e-324, "huge": 1.5e300},
        {1: "a key that is a number", "2": "a key that is a string"},  # orjson refuses: the standard library
        {"beyond 64 bits": 2**64 + 1, "and below": -(2**64)},  # orjson refuses: the standard library
        ["a list at the top", ("a", "tuple")],
    ],
)
def test_the_bytes_are_the_json_of_the_document(doc: Any) -> None:
    body = json_bytes(doc)
    assert json.loads(body) == json.loads(stdlib(doc))
    if not any(isinstance(v, float) for v in (doc.values() if isinstance(doc, dict) else ())):
        assert body == stdlib(doc)  # byte for byte (floats: the same number, spelt the shortest way)
    assert json_text(doc) == body.decode("utf-8")


def test_a_value_json_has_no_form_for_is_refused_not_written() -> None:
    with pytest.raises(TypeError):
        json_bytes({"what": object()})
    with pytest.raises(TypeError):
        json_bytes({"a set": {1, 2}})


def test_a_float_that_is_not_a_number_is_written_null_not_a_broken_answer() -> None:
    # JSON has no NaN: a screen's JSON.parse refuses the bare word, and the strict encoder refused the
    # whole answer. The value is written null, the rest of the state stands.
    assert json.loads(json_bytes({"blur_px": float("nan"), "seat": 3})) == {"blur_px": None, "seat": 3}


def test_get_state_answers_the_state_byte_for_byte(tmp_path: Path) -> None:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    app = create_app(Runtime(table=table, tokens=Tokens("dealer-token-0123456789", "supervisor-token-0123456789")))
    with TestClient(app) as client:
        answer = client.get("/api/state", headers={"Authorization": "Bearer supervisor-token-0123456789"})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.content == stdlib(answer.json())
    assert answer.json()["game"] == "grand-slam"
