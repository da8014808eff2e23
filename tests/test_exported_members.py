"""``codemode.__all__`` is the curated public surface: sorted, complete, and importable."""

from __future__ import annotations

import inspect

import codemode


def test_all_is_sorted_and_unique() -> None:
    assert codemode.__all__ == sorted(codemode.__all__)
    assert len(set(codemode.__all__)) == len(codemode.__all__)


def test_all_matches_the_public_names() -> None:
    """``dir()`` lists the lazy names too (``codemode.exports``): once each is read, the
    module's namespace holds exactly ``__all__`` besides submodules."""
    listed = {name for name in dir(codemode) if not name.startswith("_")
              and not inspect.ismodule(getattr(codemode, name))}
    assert listed == set(codemode.__all__)
    public = {
        name
        for name, value in vars(codemode).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public == set(codemode.__all__)


def test_every_exported_member_comes_from_codemode() -> None:
    for name in codemode.__all__:
        member = getattr(codemode, name)
        assert getattr(member, "__module__", "codemode").startswith("codemode"), name


def test_contract_names_are_exported() -> None:
    required = {
        "define_tool",
        "ToolRegistry",
        "ToolCall",
        "ToolResult",
        "ExecContext",
        "Allow",
        "Deny",
        "Ask",
        "Registration",
        "tool",
    }
    assert required <= set(codemode.__all__)
