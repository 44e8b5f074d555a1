"""``gamut audit sample``: the maintainers' human audit of the judge (docs/contract.md §11)."""

from __future__ import annotations

from pathlib import Path

import click

from gamut.cli._common import (
    config_option,
    get_project,
    handle_errors,
    out_console,
    serve_until_interrupted,
)


@click.group()
def audit() -> None:
    """The human audit: draw responses for people to label against the judge."""


@audit.command()
@click.option("--n", "n", type=click.IntRange(min=1), required=True, help="Responses to draw.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="JSON Lines file to write: submission_id, setting, question_id, domain (ids only).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the draw.")
@config_option
@handle_errors
def sample(n: int, out: Path, seed: int, config_path: Path | None) -> None:
    """Draw N responses to label (every check of each), stratified by model, setting and
    domain, from valid submissions and not yet labelled; the file holds ids only."""
    from gamut import pipeline
    from scoring.audit import read_audit
    from scoring.audit_sample import Response, draw_sample
    from scoring.jsonl import dumps_line
    from scoring.questions import Setting
    from scoring.storage import atomic_write_text

    project = get_project(config_path)
    selection = pipeline.select(project)
    ids = sorted(selection.ids)
    settings = tuple(s.value for s in Setting)
    has = [[project.submissions.responses(s, k).is_file() for k in settings] for s in ids]
    responses = [
        Response(s, k, q.question_id, q.domain)
        for i, s in enumerate(ids)
        for j, k in enumerate(settings)
        if has[i][j]
        for q in project.questions
    ]
    done: set[tuple[str, str, str]] = set()
    if project.audit_path is not None and project.audit_path.exists():
        import numpy as np

        from scoring.tables.checks import index_checks

        qids = [q.question_id for q in project.questions]
        _, check_ids = index_checks(
            project.questions, project.check_table, str(project.rubrics_path)
        )
        labels = read_audit(
            project.audit_path,
            submission_ids=ids,
            has_responses=np.array(has, np.bool_).reshape(len(ids), 2),
            question_ids=qids,
            check_ids=check_ids,
            known_submissions=set(selection.left_out),
        )
        starts = np.cumsum([0, *(len(c) for c in check_ids)])
        question_of = np.searchsorted(starts, labels.check, side="right") - 1
        for r, q in zip(labels.response.tolist(), question_of.tolist(), strict=True):
            done.add((ids[r // 2], settings[r % 2], qids[q]))
    drawn = draw_sample(responses, n, seed, exclude=done)
    atomic_write_text(out, "".join(dumps_line(r._asdict()) + "\n" for r in drawn))
    strata = len({(r.submission_id, r.setting, r.domain) for r in drawn})
    out_console.print(
        f"drew {len(drawn)} of {len(responses) - len(done)} responses not yet audited "
        f"({strata} strata of model, setting and domain) into {out}",
        markup=False,
    )


@audit.command()
@click.option("--annotator", required=True, help="Your annotator id (letters, digits, . _ -).")
@click.option(
    "--sample",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="The responses to label: a file written by `gamut audit sample`.",
)
@click.option(
    "--adjudicate", is_flag=True, help="Adjudicate the open disagreements instead of labelling."
)
@click.option("--port", type=int, default=8765, show_default=True, help="Port on 127.0.0.1.")
@config_option
@handle_errors
def serve(
    annotator: str, sample: Path | None, adjudicate: bool, port: int, config_path: Path | None
) -> None:
    """Serve the local annotation page on 127.0.0.1 (keys 1-4 label, u undoes), writing to your
    label file in [benchmark] audit. The page never names the model or shows others' verdicts,
    except with --adjudicate, which lists their disagreements."""
    from pydantic import TypeAdapter, ValidationError

    from gamut.audit_serve import make_audit_server, open_session
    from scoring.audit_line import AnnotatorId

    try:
        TypeAdapter(AnnotatorId).validate_python(annotator)
    except ValidationError:
        hint = "letters, digits, '.', '_' and '-' only"
        raise click.BadParameter(hint, param_hint="--annotator") from None
    session = open_session(get_project(config_path), annotator, sample, adjudicate)
    server = make_audit_server(session, port)
    out_console.print(
        f"{len(session.items)} response(s) to {'adjudicate' if adjudicate else 'label'}: "
        f"{server.url} (Ctrl-C stops; labels go to {session.file})",
        markup=False,
    )
    serve_until_interrupted(server)
