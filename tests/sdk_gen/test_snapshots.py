"""Rendered text of a few representative (synthetic) tools, pinned with inline-snapshot."""

# ruff: noqa: E501  (snapshots hold generated one-line prompt signatures)

from __future__ import annotations

from inline_snapshot import snapshot

import sdk_gen

FLAT = {
    "name": "list-issues",
    "description": "List issues in a repository, newest first.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "repo": {"type": "string", "description": "owner/name"},
            "state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
            "since": {"type": ["string", "null"], "format": "date-time", "default": None},
        },
        "required": ["repo"],
    },
}

NESTED = {
    "name": "create_event",
    "description": "Create a calendar event.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "when": {
                "type": "object",
                "description": "Start and end.",
                "properties": {
                    "start": {"type": "string", "description": "ISO start"},
                    "end": {"type": "string"},
                },
                "required": ["start"],
            },
            "where": {
                "anyOf": [
                    {"type": "object", "properties": {"room": {"type": "string"}}},
                    {"type": "null"},
                ]
            },
        },
        "required": ["title", "when"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "link": {"type": "string", "format": "uri"}},
        "required": ["id"],
    },
}

NAMESPACED = {
    "name": "send-mail",
    "namespace": "mail server",
    "description": "Send an e-mail.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "to": {"type": "string"},
            "from": {"type": "string"},
            "cc-list": {"type": "array"},
        },
        "required": ["to"],
    },
}


def test_prompt_snapshot() -> None:
    assert sdk_gen.generate([FLAT, NESTED, NAMESPACED]).prompt == snapshot("""\
# Call `await tools.<name>(arg=value, ...)`, keyword arguments only. Per tool: `name: description`, then a line per argument: `arg: type = default # description`; `arg?` is optional (not sent when omitted; `= v` is the tool's own default); deeper lines are keys of the dict above (of each item for `list[dict]`); `"a"|"b"`: allowed values; `-> type`: the result (else dict, list or str); tools under a `[ns]` line are `tools.ns.<name>`.
create_event: Create a calendar event.
 title: str
 when: dict # Start and end.
  start: str # ISO start
  end?: str
 where?: {room?: str}|None
 -> dict
  id: str
  link?: str # (format uri)
list_issues: List issues in a repository, newest first.
 repo: str # owner/name
 state?: "open"|"closed"|"all" = "open"
 labels?: list[str]
 per_page?: int = 30 # (>= 1; <= 100)
 since?: str|None = None # (format date-time)
[mail_server]
send_mail: Send an e-mail.
 to: str
 from_?: str
 cc_list?: list
""")


def test_stub_snapshot() -> None:
    assert sdk_gen.generate([FLAT, NESTED, NAMESPACED]).stub_source == snapshot('''\
"""Type stub of the generated SDK (3 tools); do not edit."""


from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

Transport: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[Any]]
OMIT: Any

def set_transport(transport: Transport | None) -> None: ...


class CreateEventWhen(TypedDict):
    """
    Start and end.
    """

    start: str
    """
    ISO start
    """
    end: NotRequired[str]


class CreateEventWhere1(TypedDict):
    room: NotRequired[str]


class CreateEventResult(TypedDict):
    id: str
    link: NotRequired[str]
    """
    (format uri)
    """


async def create_event(
    *,
    title: str,
    when: CreateEventWhen,
    where: CreateEventWhere1 | None = ...,
) -> CreateEventResult:
    """Create a calendar event.

    Args:
        when: Start and end.
    """
    ...


async def list_issues(
    *,
    repo: str,
    state: Literal["open", "closed", "all"] = ...,
    labels: list[str] = ...,
    per_page: int = ...,
    since: str | None = ...,
) -> Any:
    """List issues in a repository, newest first.

    Args:
        repo: owner/name
        state: Default: "open".
        per_page: (>= 1; <= 100) Default: 30.
        since: (format date-time) Default: None.
    """
    ...


class mail_server:
    """Tools of namespace 'mail server'."""

    @staticmethod
    async def send_mail(
        *,
        to: str,
        from_: str = ...,
        cc_list: list[Any] = ...,
    ) -> Any:
        """Send an e-mail.

        Args:
            from_: (wire name 'from')
            cc_list: (wire name 'cc-list')
        """
        ...
''')


def test_module_snapshot() -> None:
    assert sdk_gen.generate([FLAT]).module_source == snapshot('''\
"""Typed SDK for 1 tool, generated by codemode sdk_gen from tool JSON Schemas; do not edit.

Install a transport with ``set_transport()``: each call sends the wire tool name and the
arguments passed (omitted ones are not sent), under their wire names.
"""


from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

Transport: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""``async (wire tool name, wire arguments) -> result``: how a call reaches the host."""


class _Omitted:
    """Default of every optional argument: an omitted argument is not sent."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omitted()
_transport: Transport | None = None


def set_transport(transport: Transport | None) -> None:
    """Install (or remove, with ``None``) the function every tool call goes through."""
    global _transport
    _transport = transport


async def _invoke(tool: str, arguments: dict[str, Any]) -> Any:
    if _transport is None:
        raise RuntimeError(f"no transport for tool {tool!r}: call set_transport() first")
    sent = {name: value for name, value in arguments.items() if value is not OMIT}
    return await _transport(tool, sent)


async def list_issues(
    *,
    repo: str,
    state: Literal["open", "closed", "all"] = OMIT,
    labels: list[str] = OMIT,
    per_page: int = OMIT,
    since: str | None = OMIT,
) -> Any:
    """List issues in a repository, newest first.

    Args:
        repo: owner/name
        state: Default: "open".
        per_page: (>= 1; <= 100) Default: 30.
        since: (format date-time) Default: None.
    """
    return await _invoke(
        "list-issues",
        {
            "repo": repo,
            "state": state,
            "labels": labels,
            "per_page": per_page,
            "since": since,
        },
    )
''')


def _repo_tool(name: str, what: str) -> dict[str, object]:
    return {
        "name": name,
        "description": f"This tool belongs to the repository system, which manages code. {what}",
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner (user or org)"},
                "repo": {"type": "string", "description": "Repository name"},
            },
            "required": ["owner"],
        },
    }


def test_prompt_snapshot_with_shared_descriptions() -> None:
    """Three tools repeating an argument description and a sentence: each is listed once."""
    tools = [_repo_tool(f"repo_{n}", f"Does {n}.") for n in ("a", "b", "c")]
    assert sdk_gen.generate(tools).prompt.partition("\n")[2] == snapshot("""\
Shared (a line ending in `^` takes its key's description from here; `§n` stands for sentence `§n`):
 owner: Repository owner (user or org)
 repo: Repository name
 §1 This tool belongs to the repository system, which manages code.
repo_a: §1 Does a.
 owner: str ^
 repo?: str ^
repo_b: §1 Does b.
 owner: str ^
 repo?: str ^
repo_c: §1 Does c.
 owner: str ^
 repo?: str ^
""")
