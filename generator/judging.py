"""The "How this was judged" pages (HELM's instance viewer has their like): one page per judge
prompt version, ``judging/<version>.html``, with the prompt template's text exactly as the judge
receives it (placeholders and all) and the request settings of every judge that uses it. The
explorer links each response to the page of the judge whose verdicts it shows.

The template is public (``scoring/prompts/judge_<version>.txt``): it holds placeholders, never a
check, so the pages are the same whether the rubrics are public or held.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.render import Cell, Column, Row, Table, file_id
from generator.tables import ScoreTables
from scoring import load_template
from scoring.errors import GamutError

#: Folder of the pages under the site root.
JUDGING = "judging"


def judging_href(version: str, judge: str = "", root: str = "") -> str:
    """The built page of a prompt version (at the judge's settings when ``judge`` is given)."""
    anchor = f"#judge-{file_id(judge.lower())}" if judge else ""
    return f"{root}{JUDGING}/{file_id(version.lower())}.html{anchor}"


def judge_entries(tables: ScoreTables) -> list[tuple[str, Mapping[str, Any]]]:
    """Every judge of the provenance: (name, its provenance), in config order."""
    judges = tables.provenance.get("judges") or {}
    return [(str(name), info) for name, info in judges.items() if isinstance(info, dict)]


def judges_by_prompt(tables: ScoreTables) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """Prompt version -> the judges (name, provenance) that use it, in config order."""
    out: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for name, info in judge_entries(tables):
        out.setdefault(str(info.get("prompt_version")), []).append((name, info))
    return out


#: The columns a table of judges may show (``prompt_link``: the prompt version, linked to its
#: "How this was judged" page).
_JUDGE_COLUMNS = {
    "provider": Column("provider", "Provider"),
    "model": Column("model", "Model"),
    "temperature": Column("temperature", "Temperature", "f2"),
    "max_tokens": Column("max_tokens", "Max tokens", "integer"),
    "mode": Column("mode", "Mode"),
    "prompt": Column("prompt", "Prompt version"),
    "prompt_link": Column("prompt", "Prompt version"),
    "family": Column("family", "Family"),
    "primary": Column("primary", "Primary", "yes_no"),
}


def judge_table(
    tables: ScoreTables,
    judges: list[tuple[str, Mapping[str, Any]]],
    keys: tuple[str, ...],
    caption: str,
) -> Table:
    """A table of judges (name, provenance): the name and the columns ``keys`` (of
    :data:`_JUDGE_COLUMNS`), each row marked ``data-judge``."""
    cols = [Column("name", "Judge"), *(_JUDGE_COLUMNS[k] for k in keys)]

    def row(name: str, d: Mapping[str, Any]) -> Row:
        prompt = d.get("prompt_version")
        cells = {c.key: c.cell(d) for c in cols} | {
            "name": Cell(name),
            "primary": Cell(name == tables.primary_judge),
            "prompt": Cell(prompt, href=judging_href(str(prompt), name))
            if "prompt_link" in keys
            else Cell(d.get("prompt_template") or prompt),
        }
        return Row(cells, attrs={"judge": file_id(name.lower())})

    return Table(cols, [row(name, info) for name, info in judges], caption=caption, sortable=False)


def judging_context(tables: ScoreTables, version: str) -> dict[str, Any]:
    """The page of one prompt version: its template's sections and its judges' settings (a
    :class:`GamutError` when this engine ships no template of that version)."""
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
