"""Deep-frozen JSON: what hooks and handlers see of a call's arguments."""

from __future__ import annotations

import copy
import json
import math
import pickle
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

from codemode.dispatch.frozen import FrozenDict, NotJSONError, dumps, freeze, thaw

if TYPE_CHECKING:
    from collections.abc import Callable

NESTED = {"a": [1, {"b": [2.5, None, True]}], "c": {"d": "x"}}


def test_freeze_makes_frozen_dicts_and_tuples() -> None:
    frozen = freeze(NESTED)
    assert isinstance(frozen, FrozenDict)
    assert isinstance(frozen["a"], tuple)
    assert isinstance(frozen["a"][1], FrozenDict)
    assert frozen["a"][1]["b"] == (2.5, None, True)
    assert frozen == {"a": (1, {"b": (2.5, None, True)}), "c": {"d": "x"}}


def test_freeze_is_detached_from_the_source() -> None:
    source = copy.deepcopy(NESTED)
    frozen = freeze(source)
    source["a"][1]["b"].append("later")
    source["c"]["d"] = "changed"
    del source["a"]
    assert frozen == freeze(NESTED)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.__setitem__("k", 1),
        lambda d: d.__delitem__("c"),
        lambda d: d.update(k=1),
        lambda d: d.pop("c"),
        lambda d: d.popitem(),
        lambda d: d.clear(),
        lambda d: d.setdefault("k", 1),
        lambda d: d.__ior__({"k": 1}),
        lambda d: d["c"].__setitem__("d", "y"),
    ],
    ids=["setitem", "delitem", "update", "pop", "popitem", "clear", "setdefault", "ior", "nested"],
)
def test_frozen_dict_refuses_writes(mutate: Callable[[FrozenDict], object]) -> None:
    frozen = freeze(NESTED)
    with pytest.raises(TypeError, match="frozen"):
        mutate(frozen)
    assert frozen == freeze(NESTED)


def test_frozen_arrays_cannot_be_appended_to() -> None:
    frozen = freeze(NESTED)
    with pytest.raises(AttributeError):
        frozen["a"].append(3)


def test_thaw_gives_a_plain_mutable_copy() -> None:
    frozen = freeze(NESTED)
    plain = thaw(frozen)
    assert plain == NESTED
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is dict
    plain["a"].append(1)
    assert len(frozen["a"]) == 2


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        ({"a": {1, 2}}, "$.a", "set"),
        ({"a": [1, b"x"]}, "$.a[1]", "bytes"),
        ({"a": {"b": math.nan}}, "$.a.b", "float"),
        ({"a": math.inf}, "$.a", "float"),
        ({"a": object()}, "$.a", "object"),
        ({"a": {1: "x"}}, "$.a (key 1)", "int"),
        (complex(1, 2), "$", "complex"),
    ],
)
def test_non_json_is_refused_with_its_path(value: Any, path: str, type_name: str) -> None:
    with pytest.raises(NotJSONError) as caught:
        freeze(value)
    assert caught.value.path == path
    assert caught.value.type_name == type_name
    assert path in str(caught.value)


def test_other_mappings_are_frozen_as_objects() -> None:
    assert freeze(MappingProxyType({"a": [1]})) == {"a": (1,)}
    assert isinstance(freeze(MappingProxyType({"a": 1})), FrozenDict)


def test_frozen_values_behave_like_json() -> None:
    frozen = freeze(NESTED)
    assert json.loads(dumps(frozen)) == NESTED
    assert json.loads(json.dumps(frozen)) == NESTED
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    assert hash(freeze({"a": 1, "b": "x"})) == hash(freeze({"b": "x", "a": 1}))
    assert repr(freeze({"a": 1})) == "FrozenDict({'a': 1})"
    with pytest.raises(ValueError):
        dumps({"x": math.nan})
