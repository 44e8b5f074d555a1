"""``gamut-workbench build ...``: the benchmark workbench (maintainers only; its folder is private).

Every command works on the ``[workbench] dir`` of the config, is resumable, says what it did and
what is next, and prints ids and counts only: the folder holds held text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gamut.cli._common import (
    config_option,
    emit,
    get_config,
    get_project,
    handle_errors,
    out_console,
    serve_until_interrupted,
)
from workbench.store import Workbench, WorkbenchError

if TYPE_CHECKING:
    from workbench.llm import LLM

REPLAY = click.option(
    "--replay",
    "replay",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Recorded LLM replies (JSON Lines: template, key, reply) instead of a live model.",
)
JUDGE = click.option(
    "--judge",
    "judge",
    help="The configured judge whose model answers (default: the primary judge); its key is "
    'read from the environment variable its api_key_env names. A judge with mode = "batch" '
    "submits to its provider's batch API: run the step again to collect (it resumes).",
)


def _remember_workbench(ctx: click.Context, _: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.meta["workbench"] = value


WORKBENCH = click.option(
    "--workbench",
    type=click.Path(path_type=Path, file_okay=False),
    expose_value=False,
    callback=_remember_workbench,
    help="Workbench folder to use instead of the config's [workbench] dir (e.g. DIR/workbench "
    "after `gamut-workbench build demo --out DIR`).",
)


def _step(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--config`` and ``--workbench DIR`` (every ``build`` command's), errors handled."""
    return config_option(WORKBENCH(handle_errors(f)))


def _llm_step(f: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`_step` with ``--replay FILE`` or ``--judge NAME``: where the replies come from."""
    return REPLAY(JUDGE(_step(f)))


def _workbench(config_path: Path | None, *, create: bool = True) -> Workbench:
    project = get_project(config_path)
    chosen = click.get_current_context().meta.get("workbench")
    root = project.workbench_path if chosen is None else chosen.resolve()
    for name, p in (("results", project.results), ("site", project.site_out)):
        if root == p or p in root.parents:
            raise WorkbenchError(
                f"[workbench] dir {root} is inside the {name} folder {p}, which is published: "
                "move it (the default is .gamut/workbench)"
            )
    return Workbench.open(root) if create else Workbench(root)


def _done(wb: Workbench, what: str, c: Mapping[str, int] | None = None) -> None:
    """Say what a step did (with its counts) and the step to run next."""
    from workbench.status import counts, next_step

    detail = ", ".join(f"{k} {v}" for k, v in sorted((c or {}).items()))
    out_console.print(what + (f" ({detail})" if detail else ""))
    out_console.print(f"next: {next_step(counts(wb))}")


@contextmanager
def _llm(
    replay: Path | None, judge: str | None, config_path: Path | None, wb: Workbench, step: str
) -> Iterator[LLM]:
    """Recorded replies (``--replay``), else the model of a configured judge: direct calls, or
    its provider's batch API when the judge's ``mode`` is ``batch``."""
    from workbench import usage
    from workbench.batch import BatchLLM
    from workbench.llm import ProviderLLM, ReplayLLM

    if replay is not None:
        if judge is not None:
            raise click.UsageError("give --replay FILE or --judge NAME, not both")
        yield ReplayLLM(replay)
        return
    cfg = get_config(config_path)
    if not cfg.judges:
        raise click.UsageError(
            f"no LLM: give --replay FILE (recorded replies), or add a [judges.NAME] table to "
            f"{cfg.file} (the primary judge's model answers)"
        )
    name = judge or cfg.primary_judge
    if name not in cfg.judges:
        raise click.UsageError(
            f"--judge {name}: no such judge in {cfg.file} (one of {', '.join(cfg.judges)})"
        )
    j = cfg.judges[name]
    limit = cfg.workbench.max_tokens(step)
    llm = (
        BatchLLM(wb, j, name, max_tokens=limit, step=step)
        if j.mode == "batch"
        else ProviderLLM(j, name, max_tokens=limit, step=step)
    )
    try:
        with llm:
            yield llm
    finally:
        usage.record(wb, name, j, j.mode, llm.usage)
    if isinstance(llm, BatchLLM) and (llm.collected or llm.submitted or llm.deferred):
        out_console.print(
            f"batch ({name}): collected {llm.collected} repl(ies), submitted "
            f"{llm.submitted} request(s) in {llm.batches} batch(es); {llm.in_flight()} in flight"
        )
        if llm.deferred:
            out_console.print(
                f"waiting: {llm.deferred} request(s) of this step are in batches; run "
                f"`gamut-workbench build {step}` again to collect them (it resumes)"
            )


@click.group()
def build() -> None:
    """Build, revise and release the benchmark's questions and rubrics (private workbench)."""


@build.command()
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@_step
def status(config_path: Path | None, as_json: bool) -> None:
    """Counts per state of every step, and the command to run next."""
    from workbench.status import counts, next_step
    from workbench.usage import describe

    wb = _workbench(config_path, create=False)  # a status creates nothing
    c = counts(wb)
    if as_json:
        emit(json.dumps(c, indent=2) + "\n")
        return
    out_console.print(f"workbench {wb.root}" + ("" if wb.root.is_dir() else " (not started)"))
    for key, value in c.items():
        if key == "llm_usage":
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(value) or "none"
        out_console.print(f"  {key}: {value}")
    out_console.print("  llm_usage (live calls, priced at the answering judge's prices):")
    for step, modes in c["llm_usage"].items():
        for mode, row in modes.items():
            out_console.print(f"    {step} {mode}: {describe(row)}")
    if not c["llm_usage"]:
        out_console.print("    none yet")
    out_console.print(f"next: {next_step(c)}")


@build.command()
@click.argument("manifest", type=click.Path(path_type=Path, dir_okay=False))
@_step
def images(manifest: Path, config_path: Path | None) -> None:
    """Import the image manifest MANIFEST (.csv or .jsonl: image_id, file, entity, domain,
    popularity, egocentric), each image checksummed; every bad row reported at once."""
    from workbench.images import import_images

    wb = _workbench(config_path)
    added, changed = import_images(wb, manifest)
    _done(wb, "imported the manifest", {"added": added, "changed": changed})


@build.command()
@click.option(
    "--per-image",
    "per_image",
    type=click.IntRange(1, 20),
    required=True,
    help="Candidates to ask for per image.",
)
@_llm_step
def propose(
    per_image: int, replay: Path | None, judge: str | None, config_path: Path | None
) -> None:
    """Ask the LLM for candidate questions for every image that needs them."""
    from workbench.questions import propose as run

    wb = _workbench(config_path)
    with _llm(replay, judge, config_path, wb, "propose") as llm:
        done = run(wb, llm, per_image)
    _done(wb, f"proposed candidates for {len(done)} image(s)")


@build.group()
def review() -> None:
    """Annotation rounds: two blind annotators per candidate, a third adjudicates."""


@review.command("apply")
@click.argument("decisions", type=click.Path(path_type=Path, dir_okay=False))
@_step
def review_apply(decisions: Path, config_path: Path | None) -> None:
    """Record the annotators' decisions in DECISIONS (JSON Lines) and settle decided rounds."""
    from workbench.questions import apply_decisions

    wb = _workbench(config_path)
    _done(wb, "recorded the decisions", apply_decisions(wb, decisions))


@build.command()
@_llm_step
def guard(replay: Path | None, judge: str | None, config_path: Path | None) -> None:
    """The second LLM pass: the stranger test, and the selection of one question per image."""
    from workbench.questions import guard as run

    wb = _workbench(config_path)
    with _llm(replay, judge, config_path, wb, "guard") as llm:
        counts = run(wb, llm)
    _done(wb, "guarded", counts)


@build.command()
@click.option(
    "--top",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    help="Openings listed per domain.",
)
@_step
def diversity(config_path: Path | None, top: int) -> None:
    """The most common question openings per domain, before and after the guard (JSON)."""
    from workbench.questions import diversity as run

    emit(json.dumps(run(_workbench(config_path), top), indent=2) + "\n")


@build.command()
@click.option(
    "--snippets",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A local snippets file (JSON Lines: question_id, url, title, text, retrieved).",
)
@click.option("--search-url", help="An HTTP search API (GET ?q=&count=, Bearer key).")
@click.option("--search-key-env", help="The environment variable holding the search API key.")
@click.option(
    "--limit",
    type=click.IntRange(1, 50),
    default=8,
    show_default=True,
    help="Snippets kept per question.",
)
@_step
def evidence(
    snippets: Path | None,
    search_url: str | None,
    search_key_env: str | None,
    limit: int,
    config_path: Path | None,
) -> None:
    """Short web snippets for every entered question without any yet."""
    from workbench.evidence import HttpSearch, SearchProvider, SnippetsFile, gather

    provider: SearchProvider
    if snippets is not None and search_url is None:
        provider = SnippetsFile(snippets)
    elif search_url is not None and search_key_env and snippets is None:
        provider = HttpSearch(search_url, search_key_env)
    else:
        raise click.UsageError("give --snippets FILE, or --search-url with --search-key-env")
    wb = _workbench(config_path)
    _done(wb, f"gathered snippets for {gather(wb, provider, limit)} question(s)")


@build.command()
@_llm_step
def draft(replay: Path | None, judge: str | None, config_path: Path | None) -> None:
    """Draft a meta-rubric per question from its snippets (one repair), compiled."""
    from workbench.rubrics import draft as run

    wb = _workbench(config_path)
    with _llm(replay, judge, config_path, wb, "draft") as llm:
        counts = run(wb, llm)
    _done(wb, "drafted", counts)


@build.command()
@click.option(
    "--pages",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Saved source pages (JSON Lines: url, text) to re-verify the snippets against.",
)
@click.option("--fetch-sources", is_flag=True, help="Fetch each cited snippet's source page.")
@_llm_step
def refine(
    replay: Path | None,
    judge: str | None,
    pages: Path | None,
    fetch_sources: bool,
    config_path: Path | None,
) -> None:
    """Audit each draft (cited snippets re-verified against their sources, partly covered lists
    flagged) and rebuild it as a verified superset (one repair), recompiled."""
    from workbench.evidence import HttpPages, SavedPages, SourcePages
    from workbench.rubrics import refine as run

    if (pages is None) == (not fetch_sources):
        raise click.UsageError("give --pages FILE or --fetch-sources")
    sources: SourcePages = SavedPages(pages) if pages is not None else HttpPages()
    wb = _workbench(config_path)
    with _llm(replay, judge, config_path, wb, "refine") as llm:
        counts = run(wb, llm, sources)
    _done(wb, "refined", counts)


@build.command()
@click.argument("question_id")
@click.option("--entity", required=True, help="The corrected ground-truth entity.")
@click.option("--reason", required=True, help="Why (listed in the release notes).")
@_step
def correct(question_id: str, entity: str, reason: str, config_path: Path | None) -> None:
    """Correct a question's ground-truth entity, with a reason."""
    from workbench.release import record_correction

    record_correction(_workbench(config_path), question_id, reason, entity)
    out_console.print(f"corrected {question_id}")


@build.command()
@click.argument("question_id")
@click.option("--reason", required=True, help="Why (listed in the release notes).")
@_step
def drop(question_id: str, reason: str, config_path: Path | None) -> None:
    """Drop a question from the next release, with a reason."""
    from workbench.release import record_correction

    record_correction(_workbench(config_path), question_id, reason)
    out_console.print(f"dropped {question_id}")


@build.command("release")
@click.argument("version")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), help="Where to write it.")
@_step
def release_cmd(version: str, out: Path | None, config_path: Path | None) -> None:
    """Write release VERSION: questions.jsonl, held rubrics/, release.json and CHANGELOG.md."""
    from workbench.release import release

    meta = release(_workbench(config_path), version, out)
    out_console.print(
        f"released {version}: {meta['n_questions']} questions, {meta['n_checks']} checks"
    )


@build.command()
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="A new (or empty) folder for the demo workbench and its release.",
)
@handle_errors
def demo(out: Path) -> None:
    """Run every step offline on a handful of the demo's images, ending with a release in OUT."""
    from workbench.demo import run_demo

    meta = run_demo(out)
    out_console.print(
        f"demo release {meta['benchmark_version']} in {out}: {meta['n_questions']} questions, "
        f"{meta['n_checks']} checks\n"
        f"its workbench: gamut-workbench build status --workbench {out / 'workbench'}"
    )


@review.command("serve")
@click.option("--annotator", required=True, help="Your annotator id (recorded with each decision).")
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="Port on 127.0.0.1.")  # fmt: skip
@_step
def review_serve(annotator: str, port: int, config_path: Path | None) -> None:
    """The annotation page on 127.0.0.1: accept, revise or discard each candidate."""
    from workbench.review_page import make_review_server

    server = make_review_server(_workbench(config_path), annotator, port=port)
    out_console.print(f"review page for {annotator}: {server.url}")
    serve_until_interrupted(server)


@build.group()
def revise() -> None:
    """Human revision of the compiled checks, in recorded rounds."""


@revise.command("apply")
@click.argument("edits", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--annotator", required=True, help="Who made the edits (recorded with the round).")
@_step
def revise_apply(edits: Path, annotator: str, config_path: Path | None) -> None:
    """Apply EDITS (JSON Lines: question_id, check_id, text or delete) to the items the checks
    came from, recompile, and record where the edited and recompiled checklists differ."""
    from workbench.revision import apply_edits

    wb = _workbench(config_path)
    counts = apply_edits(wb, edits, annotator)
    _done(wb, "revised (differences by check id in revisions.json)", counts)


@revise.command("serve")
@click.option("--annotator", required=True, help="Your annotator id (recorded with each round).")
@click.option("--port", type=click.IntRange(0, 65535), default=8002, show_default=True,
              help="Port on 127.0.0.1.")  # fmt: skip
@_step
def revise_serve(annotator: str, port: int, config_path: Path | None) -> None:
    """The revision page on 127.0.0.1: edit the compiled checks, see what recompiling implies."""
    from workbench.revise_page import make_revise_server

    server = make_revise_server(_workbench(config_path), annotator, port=port)
    out_console.print(f"revision page for {annotator}: {server.url}")
    serve_until_interrupted(server)
