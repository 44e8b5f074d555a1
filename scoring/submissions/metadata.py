"""``submission.yaml`` checked against :class:`~scoring.submissions.formats.SubmissionMeta`."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from scoring.errors import Problem
from scoring.storage import open_regular
from scoring.submissions.formats import SubmissionMeta, unsafe_char

MAX_METADATA_BYTES = 64 * 1024
#: Deepest nesting of mappings and sequences in ``submission.yaml`` (the format needs 2).
MAX_YAML_DEPTH = 8
#: Most YAML nodes in ``submission.yaml`` (the format needs about 20).
MAX_YAML_NODES = 2000
#: Fields whose text may span lines (newline and tab allowed); every other field is one line.
MULTILINE_FIELDS = frozenset(
    {("production", "notes"), ("production", "system_prompt"), ("training_data", "notes")}
)
_SCHEMA_HINT = "see the comments of `gamut submission new` or the schema of `gamut schema`"
_REGULAR = "keep submission.yaml a regular file (run `gamut submission new ID` for a template)"
Loc = tuple[str | int, ...]


class StrictLoader(yaml.SafeLoader):
    """Safe YAML for files people write: a key given twice in one mapping (PyYAML keeps the
    last value silently) and the merge key ``<<`` (keys brought in from another mapping) are
    errors at the key's line."""

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """Refuse a merge key, then a key that equals an earlier one of the same mapping."""
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            line = int(key_node.start_mark.line) + 1
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _key_error("merge keys (<<) are not allowed; write the keys out", key_node)
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: PyYAML's own check names it
                continue
            if first is not None:
                raise _key_error(f"{key} is given twice (first on line {first})", key_node)
            seen[key] = line
        super().flatten_mapping(node)


def _key_error(problem: str, node: yaml.Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


def yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    """The line (1-based, if known) and message of a YAML error, for a :class:`Problem`."""
    mark = getattr(exc, "problem_mark", None)
    line = int(mark.line) + 1 if mark is not None else None
    what = " ".join(
        str(x) for x in (getattr(exc, "problem", None), getattr(exc, "context", None)) if x
    )
    return line, f"not valid YAML: {what or exc}"


class _Loader(StrictLoader):
    """Strict YAML that leaves timestamps as text, so the model (not PyYAML) judges the date."""


def _timestamp_as_text(loader: _Loader, node: yaml.Node) -> str:
    return str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)


def _structure_problems(text: str, problem: Any) -> list[Problem]:
    """Anchors, aliases, too deep or too many nodes: found from the parse events, before any
    node is built, so an alias bomb or a 20,000-deep nesting costs nothing."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=_Loader):
        mark = event.start_mark
        line = int(mark.line) + 1 if mark is not None else None
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            aliases = "YAML anchors and aliases (&name, *name) are not allowed"
            return [problem(line, aliases, "write each value out in full")]
        nodes += isinstance(event, yaml.NodeEvent)
        if nodes > MAX_YAML_NODES:
            return [problem(line, f"more than {MAX_YAML_NODES} YAML values", _SCHEMA_HINT)]
        depth += isinstance(event, yaml.CollectionStartEvent)
        depth -= isinstance(event, yaml.CollectionEndEvent)
        if depth > MAX_YAML_DEPTH:
            fix = "the metadata is a mapping of fields; see the scaffold"
            return [problem(line, f"nested more than {MAX_YAML_DEPTH} levels deep", fix)]
    return []


def _char_problems(nodes: dict[Loc, yaml.Node], problem: Any) -> dict[Loc, Problem]:
    """Control, bidirectional and invisible characters in any value (name spoofing), by the
    value's location (the model refuses them too: its error there is the same problem)."""
    out: dict[Loc, Problem] = {}
    for loc, node in nodes.items():
        if not isinstance(node, yaml.ScalarNode):
            continue
        value = str(node.value)
        bad = unsafe_char(value, multiline=tuple(map(str, loc)) in MULTILINE_FIELDS)
        if bad is not None:
            name = ".".join(map(str, loc)) or "the document"
            out[loc] = problem(
                int(node.start_mark.line) + 1,
                f"{name} contains {bad}",
                "remove it: control, bidirectional and zero-width characters are not "
                "allowed (they can disguise a name)",
            )
    return out


def _walk(node: yaml.Node, loc: Loc, out: dict[Loc, yaml.Node], dup: list[tuple[Loc, int]]) -> None:
    """Index every node by its location; note duplicate mapping keys."""
    out[loc] = node
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                dup.append(((*loc, name), key.start_mark.line + 1))
            seen.add(name)
            _walk(value, (*loc, name), out, dup)
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            _walk(value, (*loc, i), out, dup)


def _line(nodes: dict[Loc, yaml.Node], loc: Loc) -> int | None:
    """The line of the nearest node at or above ``loc`` (1-based)."""
    for n in range(len(loc), 0, -1):
        node = nodes.get(loc[:n])
        if node is not None:
            return int(node.start_mark.line) + 1
    return None


def _description(loc: Loc) -> str:
    """The model's description of the field at ``loc``, if there is one."""
    model: type[BaseModel] = SubmissionMeta
    desc = ""
    for part in loc:
        info = model.model_fields.get(str(part))
        if info is None:
            return desc
        desc = info.description or ""
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model = ann
    return desc


def _is_todo(node: yaml.Node) -> bool:
    return (
        isinstance(node, yaml.ScalarNode)
        and node.tag == "tag:yaml.org,2002:str"
        and str(node.value).strip().upper().startswith("TODO")
    )


def field_line(path: Path, name: str) -> int | None:
    """The line of the top-level field ``name`` in a metadata file (1-based), if found."""
    try:
        with open_regular(path) as f:
            lines = f.read(MAX_METADATA_BYTES + 1).decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    for n, line in enumerate(lines, 1):
        if re.match(rf"{re.escape(name)}\s*:", line):
            return n
    return None


def _field_problems(
    exc: ValidationError, nodes: dict[Loc, yaml.Node], chars: Collection[Loc], todo: set[Loc]
) -> Iterator[tuple[int | None, str, str]]:
    """``(line, message, fix)`` for each error of the model, but for a value whose characters
    (``chars``) or TODO (``todo``, and what is inside it) is already a problem."""
    for e in exc.errors(include_url=False):
        loc = tuple(e["loc"])
        if loc in chars or any(loc[: len(t)] == t for t in todo):
            continue
        name = ".".join(map(str, loc))
        if e["type"] == "missing":  # at the line of the mapping that lacks it
            yield (
                _line(nodes, loc[:-1]),
                f"{name} is missing",
                f"add {name}: " + (_description(loc) or "see the scaffold"),
            )
        elif e["type"] == "extra_forbidden":
            yield _line(nodes, loc), f"unknown field {name}", "remove it or fix its spelling"
        else:
            yield _line(nodes, loc), f"{name}: {e['msg']}", _description(loc) or _SCHEMA_HINT


def check_metadata(path: Path, display: str) -> tuple[SubmissionMeta | None, list[Problem]]:
    """Validate ``submission.yaml``, reporting every problem with its line.

    Args:
        path: the file (a name that holds no regular file is refused by name).
        display: its name in problems.

    Returns:
        The metadata (None when invalid) and the problems found.
    """

    def problem(line: int | None, msg: str, fix: str = _SCHEMA_HINT) -> Problem:
        return Problem(display, line, msg, fix)

    try:
        with open_regular(path) as f:
            data = f.read(MAX_METADATA_BYTES + 1)
        if len(data) > MAX_METADATA_BYTES:
            return None, [problem(None, f"file is over {MAX_METADATA_BYTES // 1024} KB")]
        text = data.decode("utf-8")
    except OSError as exc:
        return None, [problem(None, f"cannot read the file: {exc.strerror}", _REGULAR)]
    except UnicodeDecodeError as exc:
        return None, [problem(None, f"not valid UTF-8 (byte {exc.start + 1})", "save as UTF-8")]
    try:
        structure = _structure_problems(text, problem)
        if structure:
            return None, structure
        root = yaml.compose(text, Loader=_Loader)
        nodes: dict[Loc, yaml.Node] = {}
        dups: list[tuple[Loc, int]] = []
        if root is not None:
            _walk(root, (), nodes, dups)
        problems = [
            problem(line, f"{'.'.join(map(str, loc))} is given twice", "keep one of them")
            for loc, line in dups
        ]
        chars = _char_problems(nodes, problem)
        problems += chars.values()
        if dups:  # every duplicate at once (the loader would stop at the first)
            return None, problems
        raw: Any = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        return None, [problem(*yaml_problem(exc), "fix the YAML syntax")]
    if not isinstance(raw, dict) or root is None:
        return None, [problem(1, "not a YAML mapping of field: value", _SCHEMA_HINT)]

    todo = {loc for loc, node in nodes.items() if loc and _is_todo(node)}
    for loc in sorted(todo, key=lambda loc: _line(nodes, loc) or 0):
        hint = _description(loc)
        problems.append(
            problem(
                _line(nodes, loc),
                f"{'.'.join(map(str, loc))} is still TODO",
                f"fill it in: {hint}" if hint else "fill it in",
            )
        )
    try:
        meta = SubmissionMeta.model_validate(raw)
    except ValidationError as exc:
        problems += (problem(*p) for p in _field_problems(exc, nodes, chars, todo))
        return None, problems
    return (None if problems else meta), problems
