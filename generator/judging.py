"""The "How this was judged" pages (HELM's instance viewer has their like): one page per judge
prompt version, ``judging/<version>.html``, with the prompt template's text exactly as the judge
receives it (placeholders and all) and the request settings of every judge that uses it. The
explorer links each response to the page of the judge whose verdicts it shows.

The template is public (``scoring/prompts/judge_<version>.txt``): it holds placeholders, never a
check, so the pages are the same whether the rubrics are public or held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from generator.render import Cell, Column, Row, Table, file_id
from generator.tables import ScoreTables
from scoring import load_template
from scoring.errors import GamutError

#: Folder of the pages under the site root.
JUDGING = "judging"


def judging_page(version: str) -> str:
    """The page of a prompt version, relative to the site root, as a Markdown source."""
    return f"{JUDGING}/{file_id(version.lower())}.md"


def judging_href(version: str, judge: str = "", root: str = "") -> str:
    """The built page of a prompt version (at the judge's settings when ``judge`` is given)."""
    anchor = f"#judge-{file_id(judge.lower())}" if judge else ""
    return root + judging_page(version).removesuffix(".md") + ".html" + anchor


def _prompt_version(info: Mapping[str, Any]) -> str:
    return str(info.get("prompt_version"))


def judge_entries(tables: ScoreTables) -> list[tuple[str, Mapping[str, Any]]]:
    """Every judge of the provenance: (name, its provenance), in config order."""
    judges = tables.provenance.get("judges") or {}
    return [(str(name), info) for name, info in judges.items() if isinstance(info, dict)]


def judges_by_prompt(tables: ScoreTables) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """Prompt version -> the judges (name, provenance) that use it, in config order."""
    out: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for name, info in judge_entries(tables):
        out.setdefault(_prompt_version(info), []).append((name, info))
    return out


#: The columns a table of judges may show, each with its cell from (name, provenance).
_JUDGE_COLUMNS: dict[str, tuple[Column, Callable[[str, Mapping[str, Any]], Cell]]] = {
    "provider": (
        Column("provider", "Provider", numeric=False),
        lambda n, d: Cell(d.get("provider")),
    ),
    "model": (Column("model", "Model", numeric=False), lambda n, d: Cell(d.get("model"))),
    "temperature": (
        Column("temperature", "Temperature", "f2"),
        lambda n, d: Cell(d.get("temperature")),
    ),
    "max_tokens": (
        Column("max_tokens", "Max tokens", "integer"),
        lambda n, d: Cell(d.get("max_tokens")),
    ),
    "mode": (Column("mode", "Mode", numeric=False), lambda n, d: Cell(d.get("mode"))),
    "prompt": (
        Column("prompt", "Prompt version", numeric=False),
        lambda n, d: Cell(d.get("prompt_template") or d.get("prompt_version")),
    ),
    "prompt_link": (  # the prompt version, linked to its "How this was judged" page
        Column("prompt", "Prompt version", numeric=False),
        lambda n, d: Cell(d.get("prompt_version"), href=judging_href(_prompt_version(d), n)),
    ),
    "family": (Column("family", "Family", numeric=False), lambda n, d: Cell(d.get("family"))),
}


def judge_table(
    tables: ScoreTables,
    judges: list[tuple[str, Mapping[str, Any]]],
    keys: tuple[str, ...],
    caption: str,
) -> Table:
    """A table of judges (name, provenance): the name, the columns ``keys`` (of
    :data:`_JUDGE_COLUMNS`, or ``primary``), each row marked ``data-judge``."""
    cols = [Column("name", "Judge", numeric=False)]
    cols += [
        Column("primary", "Primary", "yes_no") if k == "primary" else _JUDGE_COLUMNS[k][0]
        for k in keys
    ]
    rows = [
        Row(
            {
                "name": Cell(name),
                **{
                    _JUDGE_COLUMNS[k][0].key: _JUDGE_COLUMNS[k][1](name, info)
                    for k in keys
                    if k != "primary"
                },
                **({"primary": Cell(name == tables.primary_judge)} if "primary" in keys else {}),
            },
            attrs={"judge": file_id(name.lower())},
        )
        for name, info in judges
    ]
    return Table(cols, rows, caption=caption, sortable=False)


def judging_context(tables: ScoreTables, version: str) -> dict[str, Any]:
    """The page of one prompt version: its template's sections and its judges' settings.

    Raises:
        GamutError: this engine ships no template of that version (the tables were scored by
            another engine release).
    """
    try:
        template = load_template(version)
    except GamutError as exc:
        raise GamutError(
            f"cannot show how the verdicts were judged: {exc}; build the site with the engine "
            "release that scored the tables"
        ) from None
    judges = judges_by_prompt(tables).get(version, [])
    settings = judge_table(
        tables,
        judges,
        ("provider", "model", "temperature", "max_tokens", "mode", "prompt", "primary"),
        "Request settings of the judges that use this prompt",
    )
    changed = sorted(
        name for name, info in judges if info.get("prompt_digest") not in (None, template.digest)
    )
    return {
        "version": version,
        "template": template,
        "file": f"scoring/prompts/judge_{version}.txt",
        "settings": settings,
        "anchors": [file_id(name.lower()) for name, _ in judges],
        "changed": changed,
        "sections": [
            ("System message", template.system),
            (
                "User message: the question and the fenced response (once per response)",
                template.shared,
            ),
            ("User message: the check (once per check, after the part above)", template.check),
            ("Follow-up after an unusable reply", template.reask),
        ],
    }


__all__ = [
    "JUDGING",
    "judge_entries",
    "judge_table",
    "judges_by_prompt",
    "judging_context",
    "judging_href",
    "judging_page",
]
