"""Messages compare and print field by field (one shared `__eq__`/`__repr__`, see messages.py)."""

from __future__ import annotations

import dataclasses

import pytest

from slmactor.protocol.messages import MESSAGES, Message, Ping, RecordTool


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_equal_by_fields_and_unequal_when_any_field_differs(kind: str) -> None:
    cls = MESSAGES[kind]
    assert cls() == cls()
    for f in dataclasses.fields(cls):
        other = cls()
        current = getattr(other, f.name)
        changed = {str: "x", int: 7, float: 0.5, bool: not current, list: ["x"], dict: {"x": 1}}
        setattr(other, f.name, changed.get(type(current), "x"))
        assert other != cls(), f"{kind}.{f.name}"


def test_a_different_kind_is_never_equal_and_messages_are_unhashable() -> None:
    assert Ping(actor="working") != RecordTool(run_id="working")
    assert Ping() != "ping"
    with pytest.raises(TypeError):
        hash(Ping())
    assert isinstance(Ping(), Message)


def test_repr_names_every_field_in_order() -> None:
    text = repr(RecordTool(run_id="r", tool="Bash"))
    assert text == ("RecordTool(id='', project='', client='', seq=0, run_id='r', tool='Bash', "
                    "path='', args='', command='', ok=True, error='', key='', at=0.0)")
