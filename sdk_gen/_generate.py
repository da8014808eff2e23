"""Assemble per-tool renders into one module, one stub and one prompt, deterministically."""

from __future__ import annotations

import ast
import keyword
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeAlias, final

from codemode.errors import SdkGenerationError

from ._names import BUILTIN_NAMES, SOFT_KEYWORDS, SdkNames, assign_identifiers, pascal_case
from ._prompt import ToolPrompt, assemble_prompt, fallback_prompt, tool_prompt
from ._render import ToolRender, argument_names, fallback_render, render_tool
from ._schema import forget_normalized
from ._specs import as_specs, spec_digest
from ._text import docstring

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from codemode.dispatch.spec import ToolSpec

    from ._specs import SpecLike

__all__ = ["FILES", "GeneratedSDK", "Progress", "SdkCache", "generate"]

Progress: TypeAlias = Callable[[int, int], object]
"""``progress(done, total)``: called as the typed files are rendered, tool by tool."""

FILES = ("tools.py", "tools.pyi", "prompt.txt")
"""Files :meth:`GeneratedSDK.write` produces: module, stub, prompt."""

_INTERNAL = frozenset(
    {"OMIT", "Transport", "set_transport", "annotations", "Awaitable", "Callable"}
    | {"_invoke", "_transport", "_Omitted"}
)
RESERVED = frozenset(BUILTIN_NAMES | SOFT_KEYWORDS | _INTERNAL | set(typing.__all__))
"""Names no tool, namespace or method may take: the module and its annotations use them."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Outline:
    """One tool's argument names and prompt lines: all but its types, as cached."""

    wire: str
    """Wire tool name."""
    arguments: Mapping[str, str]
    """Python argument name → wire name, sorted and read-only (``SdkNames`` shares it)."""
    prompt: ToolPrompt
    """The tool's lines in the prompt (shared descriptions are factored out at assembly)."""
    problem: str | None
    """Why the prompt fell back to the render's annotations, if it did."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Piece:
    """One tool's finished text in each output, as cached."""

    render: ToolRender
    """The structured render (names, params, types)."""
    module: str
    """Function source for the module (indented as a method when namespaced)."""
    stub: str
    """Function source for the stub."""
    noqa: frozenset[str]
    """Ruff codes the module text of this tool (function and types) needs exempted."""
    noqa_stub: frozenset[str]
    """The same for the stub text (ruff skips ambiguous names in stubs)."""


@final
class SdkCache:
    """Per-tool renders keyed by a hash of the spec and the names chosen for it.

    Keep one across ``generate()`` calls: after a tool is registered or disposed, only
    tools whose spec (or assigned names) changed are rendered again. Outlines (names and
    prompt) and typed pieces (module and stub) are cached apart: a prompt never waits for
    the types.
    """

    __slots__ = ("_known", "_outlines", "_pieces", "hits", "misses")

    def __init__(self) -> None:
        self._pieces: dict[str, _Piece] = {}
        self._outlines: dict[str, _Outline] = {}
        self._known: dict[int, _Slot] = {}
        self.hits = 0
        """Renders served from the cache."""
        self.misses = 0
        """Renders computed."""

    def slot(self, spec: ToolSpec, namespace: str | None, py: str) -> _Slot:
        """Where ``spec`` lands, with its ``spec_digest``; for an unchanged spec object the
        same slot as last time.

        Specs are frozen and a registry hands out the same objects each time, so an
        unchanged tool is not hashed again, and regenerating after one change allocates
        almost nothing: it seldom sets off the garbage collector, whose full pass over a
        large process takes longer than the whole regeneration.
        """
        found = self._known.get(id(spec))
        if found is not None and found.spec is spec:
            if found.namespace == namespace and found.py == py:
                return found
            digest = found.digest
        else:
            if len(self._known) > 4 * max(len(self._outlines), 256):
                self._known.clear()
            digest = spec_digest(spec)
        made = self._known[id(spec)] = _Slot(spec=spec, namespace=namespace, py=py,
                                             digest=digest)
        return made

    def _digest(self, spec: ToolSpec) -> str:
        found = self._known.get(id(spec))
        return found.digest if found is not None and found.spec is spec else spec_digest(spec)

    def outline(self, spec: ToolSpec, *, path: str) -> _Outline:
        """Names and prompt lines of ``spec`` at ``path``, or the cached ones."""
        key = f"{self._digest(spec)}:{path}"
        found = self._outlines.get(key)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        forget_normalized()
        try:
            arguments, extra = argument_names(spec, method="." in path)
        except Exception:  # as in _render: this tool degrades (to any keywords), not the SDK
            arguments, extra = (), True
        problem = None
        try:
            prompt = tool_prompt(spec, arguments, extra=extra, qualname=path)
        except Exception as exc:  # same reasoning: a prompt from the render's own annotations
            problem = f"prompt typed from the annotations ({type(exc).__name__}: {exc})"
            prompt = fallback_prompt(_render(spec, path=path, prefix="", types=False),
                                     qualname=path)
        outline = _Outline(
            wire=spec.name,
            arguments=MappingProxyType(dict(sorted((a.py, a.wire) for a in arguments))),
            prompt=prompt,
            problem=problem,
        )
        self._outlines[key] = outline
        return outline

    def piece(self, spec: ToolSpec, *, path: str, prefix: str) -> _Piece:
        """Render ``spec`` at ``path`` (``name`` or ``namespace.name``), or reuse it."""
        digest = self._digest(spec)
        found = self._pieces.get(f"{digest}:{path}:{prefix}")
        if found is not None:
            self.hits += 1
            return found
        outline = self._outlines.get(f"{digest}:{path}") or self.outline(spec, path=path)
        self.misses += 1
        forget_normalized()
        render = _render(spec, path=path, prefix=prefix, types=True)
        if "." in path:
            module = "    @staticmethod\n" + render.function(stub=False, indent="    ")
            stub = "    @staticmethod\n" + render.function(stub=True, indent="    ")
        else:
            module, stub = render.function(stub=False), render.function(stub=True)
        types = render.types.source if render.types else ""
        if outline.problem is not None:
            render = replace(render, warnings=(*render.warnings, outline.problem))
        piece = _Piece(
            render=render,
            module=module,
            stub=stub,
            noqa=_lint_exemptions(types, module, render),
            noqa_stub=_lint_exemptions(types, stub, render) - {"E741"},
        )
        self._pieces[f"{digest}:{path}:{prefix}"] = piece
        return piece

    def __len__(self) -> int:
        return len(self._outlines)

    def clear(self) -> None:
        """Forget every render."""
        self._pieces.clear()
        self._outlines.clear()
        self._known.clear()


def _render(spec: ToolSpec, *, path: str, prefix: str, types: bool) -> ToolRender:
    py = path.rpartition(".")[2]
    try:
        return render_tool(spec, py=py, prefix=prefix, method="." in path, types=types)
    except Exception as exc:  # a shape nothing here foresaw: degrade this tool, not the SDK
        return fallback_render(spec, py=py, problem=f"{type(exc).__name__}: {exc}")


@final
class _TypedFiles:
    """Module, stub and warnings of one SDK, rendered on first use (thread-safe).

    They need datamodel-code-generator and cost far more than names and prompt, which are
    all a run needs: only reading or writing the typed files pays for them.
    """

    __slots__ = ("_cache", "_done", "_lock", "_slots")

    def __init__(self, slots: list[_Slot], cache: SdkCache) -> None:
        self._slots = slots
        self._cache = cache
        self._lock = threading.Lock()
        self._done: tuple[str, str, tuple[str, ...]] | None = None

    def get(self, progress: Progress | None = None) -> tuple[str, str, tuple[str, ...]]:
        """``(module source, stub source, warnings)``; ``progress(done, total)`` per tool."""
        with self._lock:
            if self._done is None:
                import importlib.util  # the typed files only (not on a run's path)

                if self._slots and importlib.util.find_spec("datamodel_code_generator") is None:
                    raise SdkGenerationError(
                        "tools.py", "the typed module and stub need datamodel-code-generator: "
                        "pip install 'codemode[types]' (prompt and runs do not)"
                    )
                pieces = _render_all(self._slots, self._cache, progress)
                self._done = _assemble_typed(self._slots, pieces)
            elif progress is not None:
                progress(len(self._slots), len(self._slots))
            return self._done


@final
@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class GeneratedSDK:
    """What the generator made from one set of specs.

    ``prompt`` and ``names`` are made at once; module, stub and warnings on first access.
    """

    prompt: str
    """Compact text for the model: a line per tool and per argument, shared docs once."""
    names: SdkNames
    """Exact Python ↔ wire names of tools and arguments."""
    typed: _TypedFiles = field(repr=False)
    """Internal: renders module, stub and warnings on first use."""

    @property
    def module_source(self) -> str:
        """Importable Python module: one ``async def`` per tool calling an injectable transport."""
        return self.typed.get()[0]

    @property
    def stub_source(self) -> str:
        """``.pyi`` stub with the same types and signatures."""
        return self.typed.get()[1]

    @property
    def warnings(self) -> tuple[str, ...]:
        """Schema parts typed as ``Any`` because they could not be rendered, one per tool."""
        return self.typed.get()[2]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GeneratedSDK):
            return NotImplemented
        return (self.prompt, self.names) == (other.prompt, other.names) and (
            self.typed is other.typed or self.typed.get() == other.typed.get()
        )

    __hash__ = None  # type: ignore[assignment]

    def render_files(self, progress: Progress | None = None) -> None:
        """Render module, stub and warnings now (else on first access), calling
        ``progress(done, total)`` after each tool: typing 1,000 tools takes a while."""
        self.typed.get(progress)

    @property
    def prompt_chars(self) -> int:
        """Size of :attr:`prompt` in characters."""
        return len(self.prompt)

    @property
    def files(self) -> dict[str, str]:
        """File name → content, as :meth:`write` lays them out."""
        return dict(zip(FILES, (self.module_source, self.stub_source, self.prompt), strict=True))

    def write(self, directory: str | Path) -> list[Path]:
        """Write module, stub and prompt into ``directory`` (created if needed)."""
        from pathlib import Path  # ~3 ms of imports (urllib.parse …) a run does not need

        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, text in self.files.items():
            path = root / name
            path.write_text(text, encoding="utf-8")
            paths.append(path)
        return paths

    def stale_files(self, directory: str | Path) -> list[str]:
        """Names of files in ``directory`` that are missing or differ from this SDK."""
        from pathlib import Path

        root = Path(directory)
        stale = []
        for name, text in self.files.items():
            path = root / name
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        return stale


@dataclass(frozen=True, kw_only=True, slots=True)
class _Slot:
    """Where one tool lands in the SDK."""

    spec: ToolSpec
    """The tool."""
    namespace: str | None
    """Python name of its namespace class, if any."""
    py: str
    """Function or method name."""
    digest: str
    """``spec_digest(spec)``: the key of its renders in the cache."""

    @property
    def path(self) -> str:
        """``name`` or ``namespace.name``."""
        return f"{self.namespace}.{self.py}" if self.namespace else self.py


def generate(specs: Iterable[SpecLike], *, cache: SdkCache | None = None) -> GeneratedSDK:
    """Render the SDK for ``specs`` (``ToolSpec`` values or MCP-style dicts).

    Same specs give byte-identical output whatever their order. Tool names must be unique.
    """
    tools = as_specs(specs)
    seen: set[str] = set()
    for spec in tools:
        if spec.name in seen:
            raise SdkGenerationError(spec.name, "duplicate tool name")
        seen.add(spec.name)
    cache = cache if cache is not None else SdkCache()
    slots = _place(tools, cache)
    outlines = [cache.outline(slot.spec, path=slot.path) for slot in slots]
    names = SdkNames(  # as SdkNames.build makes it, from the outlines' read-only tables
        tools=MappingProxyType(dict(sorted((s.path, s.spec.name) for s in slots))),
        arguments=MappingProxyType({o.wire: o.arguments for o in sorted(outlines, key=_wire)}),
    )
    return GeneratedSDK(
        prompt=assemble_prompt([o.prompt for o in outlines]),
        names=names,
        typed=_TypedFiles(slots, cache),
    )


def _wire(outline: _Outline) -> str:
    return outline.wire


def _place(tools: list[ToolSpec], cache: SdkCache) -> list[_Slot]:
    spaces = sorted({s.namespace for s in tools if s.namespace is not None})
    space_py = assign_identifiers(spaces, reserved=RESERVED, avoid_soft=True, public=True)
    top = assign_identifiers(
        [s.name for s in tools if s.namespace is None],
        reserved=RESERVED | set(space_py.values()),
        avoid_soft=True,
        public=True,
    )
    members: dict[str, list[str]] = {space: [] for space in spaces}
    for spec in tools:
        if spec.namespace is not None:
            members[spec.namespace].append(spec.name)
    inner = {
        space: assign_identifiers(names, reserved=RESERVED, avoid_soft=True, public=True)
        for space, names in members.items()
    }
    slots = [
        cache.slot(s, None, top[s.name])
        if s.namespace is None
        else cache.slot(s, space_py[s.namespace], inner[s.namespace][s.name])
        for s in tools
    ]
    return sorted(slots, key=lambda slot: (slot.namespace or "", slot.py))


def _render_all(
    slots: list[_Slot], cache: SdkCache, progress: Progress | None = None
) -> list[_Piece]:
    taken = set(RESERVED)
    taken.update(slot.namespace or slot.py for slot in slots)
    taken.update(slot.py for slot in slots)
    prefixes: set[str] = set()
    pieces = []
    for slot in slots:
        base = pascal_case(slot.path.replace(".", "_"))
        prefix, n = base, 2
        while True:
            while prefix in prefixes:
                prefix = f"{base}{n}"
                n += 1
            piece = cache.piece(slot.spec, path=slot.path, prefix=prefix)
            types = piece.render.types
            names = set(types.names if types else ())
            if not names & taken:
                break
            prefixes.add(prefix)
        prefixes.add(prefix)
        taken.update(names)
        pieces.append(piece)
        if progress is not None:
            progress(len(pieces), len(slots))
    return pieces


def _assemble_typed(
    slots: list[_Slot], pieces: list[_Piece]
) -> tuple[str, str, tuple[str, ...]]:
    """Module source, stub source and warnings from the typed pieces."""
    imports: set[tuple[str, str]] = {("typing", "Any"), ("typing", "TypeAlias")}
    imports |= {("collections.abc", "Awaitable"), ("collections.abc", "Callable")}
    types: list[str] = []
    renders = [piece.render for piece in pieces]
    for render in renders:
        if render.types is not None:
            imports.update(render.types.imports)
            types.append(render.types.source)
        if "Literal[" in _annotations(render):
            imports.add(("typing", "Literal"))
    count = len(renders)
    head = _imports(imports)
    type_text = "\n\n\n".join(types)
    module_funcs = _functions(slots, [p.module for p in pieces])
    stub_funcs = _functions(slots, [p.stub for p in pieces])
    module_head = f"{head}\n\n{_MODULE_PRELUDE.strip()}"
    stub_head = f"{head}\n\n{_STUB_PRELUDE.strip()}"
    module = _join([_module_doc(count), module_head, type_text, module_funcs])
    stub = _join([_stub_doc(count), stub_head, type_text, stub_funcs])
    warnings = tuple(f"{r.wire}: {w}" for r in renders for w in r.warnings)
    spaces = {"E742"} if {s.namespace for s in slots} & _AMBIGUOUS_NAMES else set()
    codes = set().union(spaces, *(p.noqa for p in pieces))
    return (
        _noqa(module, codes),
        _noqa(stub, set().union(spaces, *(p.noqa_stub for p in pieces))),
        warnings,
    )


def _annotations(render: ToolRender) -> str:
    return " ".join([render.returns, render.extra or "", *(p.annotation for p in render.params)])


def _functions(slots: list[_Slot], texts: list[str]) -> str:
    blocks: list[str] = []
    current: str | None = None
    for slot, text in zip(slots, texts, strict=True):
        if slot.namespace is None:
            blocks.append(text)
            continue
        if slot.namespace != current:
            current = slot.namespace
            doc = docstring([f"Tools of namespace {slot.spec.namespace!r}."], indent="    ")
            blocks.append(f"class {current}:\n{doc}\n\n{text}")
        else:
            blocks[-1] += "\n\n" + text
    return "\n\n\n".join(blocks)


def _imports(imports: set[tuple[str, str]]) -> str:
    lines = ["from __future__ import annotations", ""]
    modules = sorted({m for m, _ in imports})
    for module in modules:
        every = {n for m, n in imports if m == module}
        renamed = sorted((n for n in every if " as " in n), key=_isort_key)
        names = sorted(every - set(renamed), key=_isort_key)
        line = f"from {module} import {', '.join(names)}"
        if len(line) > 100:
            line = f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"
        if names:
            lines.append(line)
        lines.extend(f"from {module} import {n}" for n in renamed)  # one line each, as isort
    return "\n".join(lines)


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper() and len(name) > 1:
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def _join(parts: list[str]) -> str:
    """Join non-empty parts with two blank lines (parts carry no outer newlines)."""
    return "\n\n\n".join(p for p in parts if p) + "\n"


_AMBIGUOUS_NAMES = frozenset("lOI")


def _lint_exemptions(types: str, function: str, render: ToolRender) -> frozenset[str]:
    """Ruff codes generated text would trip: wire names and schema literals decide
    identifiers and line lengths, so generated files carry their own exemptions."""
    codes: set[str] = set()
    if any(_too_long(line) for line in f"{types}\n{function}".split("\n")):
        codes.update(("E501", "RUF100"))  # ruff's own width rules are only approximated here
    tree = ast.parse(types)
    fields = {
        node.target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    if (fields | {p.py for p in render.params}) & _AMBIGUOUS_NAMES:
        codes.add("E741")
    if render.py in _AMBIGUOUS_NAMES:
        codes.add("E743")
    if any(p.py == "timeout" for p in render.params):
        codes.add("ASYNC109")
    if any(_class_syntax_would_do(node) for node in tree.body):
        codes.add("UP013")
    if any(_none_before_last(node) for node in ast.walk(tree)):
        codes.add("RUF036")
    codes |= _old_style_unions(tree)
    return frozenset(codes)


def _old_style_unions(tree: ast.Module) -> set[str]:
    """``Union[...]``/``Optional[...]`` (and quoted class fields) the type generator writes
    for recursive types, where ``|`` would fail as the module runs. Whether ruff flags one
    depends on where its quotes sit, so RUF100 keeps an unneeded code from failing."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            found |= {"Union": {"UP007"}, "Optional": {"UP045"}}.get(node.value.id, set())
        elif isinstance(node, ast.ClassDef):
            annotations = [f.annotation for f in node.body if isinstance(f, ast.AnnAssign)]
            if any(
                isinstance(part, ast.Constant) and isinstance(part.value, str)
                for annotation in annotations
                for part in ast.walk(annotation)
            ):
                found.add("UP037")
    return found | {"RUF100"} if found else found


def _union_members(node: ast.AST) -> list[ast.AST]:
    """Members of a union (``A | B`` or ``Union[A, B]``, nested ones flattened), else ``[node]``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*_union_members(node.left), *_union_members(node.right)]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Union"
    ):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [member for part in parts for member in _union_members(part)]
    return [node]


def _none_before_last(node: ast.AST) -> bool:
    """A union with ``None`` before its last member (ruff's RUF036; the type generator
    writes ``Union[A | None, "Ref"]`` for recursive unions)."""
    members = _union_members(node)
    return len(members) > 1 and any(
        isinstance(m, ast.Constant) and m.value is None for m in members[:-1]
    )


def _too_long(line: str, limit: int = 100) -> bool:
    """Whether ruff's E501 flags ``line``: display width (wide characters count 2, tabs
    reach the next stop of 4) over ``limit``, unless it is one word or ends in a URL."""
    if len(line) <= limit // 2:
        return False
    width = len(line) if line.isascii() and "\t" not in line else _display_width(line)
    chunks = line.split()
    if width <= limit or len(chunks) < 2:
        return False
    return not ("://" in chunks[-1] and len(line.rstrip()) - len(chunks[-1]) < limit)


def _display_width(line: str) -> int:
    """Columns ruff counts for ``line``; one per character for ASCII without tabs (no
    ASCII character is combining, ``Cf`` or wide), which :func:`_too_long` counts so:
    the per-character lookups were most of the lint pass over 1,000 corpus tools."""
    import unicodedata  # typed files only: a run's path does not load it

    width = 0
    for ch in line:
        if ch == "\t":
            width += 4 - width % 4
        elif unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        else:
            width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _class_syntax_would_do(node: ast.stmt) -> bool:
    """A functional ``TypedDict`` whose keys could all be class fields (ruff's UP013)."""
    call = node.value if isinstance(node, ast.Assign) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "TypedDict"
        and len(call.args) == 2
        and isinstance(call.args[1], ast.Dict)
    ):
        return False
    keys = call.args[1].keys
    return all(
        isinstance(k, ast.Constant)
        and isinstance(k.value, str)
        and k.value.isidentifier()
        and not keyword.iskeyword(k.value)
        and not k.value.startswith("__")
        for k in keys
    )


def _noqa(source: str, codes: set[str]) -> str:
    """Put a file-level ``# ruff: noqa`` with exactly ``codes`` after the module docstring."""
    if not codes:
        return source
    listed = ", ".join(sorted(codes))
    return source.replace('"""\n\n\n', f'"""\n\n# ruff: noqa: {listed}\n', 1)


def _module_doc(count: int) -> str:
    return (
        f'"""Typed SDK for {count} tool{"s" if count != 1 else ""}, generated by codemode'
        " sdk_gen from tool JSON Schemas; do not edit.\n\n"
        "Install a transport with ``set_transport()``: each call sends the wire tool name and the\n"
        'arguments passed (omitted ones are not sent), under their wire names.\n"""'
    )


def _stub_doc(count: int) -> str:
    return f'"""Type stub of the generated SDK ({count} tools); do not edit."""'


_MODULE_PRELUDE = '''
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
'''

_STUB_PRELUDE = """
Transport: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[Any]]
OMIT: Any

def set_transport(transport: Transport | None) -> None: ...
"""
