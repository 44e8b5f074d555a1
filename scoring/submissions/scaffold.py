"""``gamut submission new ID``: a commented ``submission.yaml`` that fails until it is filled."""

from __future__ import annotations

import os
from pathlib import Path

from scoring.errors import Problem, ProblemsError
from scoring.storage import atomic_write_text
from scoring.submissions.formats import METADATA_FILE, SUBMISSION_ID_RULE, is_submission_id

_TEMPLATE = """\
# submission.yaml: metadata of the GAMUT submission "{sid}".
# Every line marked TODO must be filled in by a person: validation fails while any TODO is left.
# Check it with:  gamut submission validate {folder}{config}
# Schema: `gamut schema OUT_DIR` writes submission.schema.json (point your editor at it).

# Name of the model as it should appear on the leaderboard, e.g. "Acme-VL 2 (2026-10)".
model_name: TODO

# Who built the model (company, lab or person), e.g. "Acme AI".
organisation: TODO

# The model family, lower case, e.g. "gpt", "claude", "gemini", "llama", "qwen".
# Used to measure judge self-preference (a judge scoring its own family's models).
model_family: TODO

# A public page about the model: model card, paper or product page (http or https URL).
link: TODO

# true if anyone can download the weights, false otherwise.
open_weights: TODO

# Number of parameters if known, as a string such as "7B" or "70B"; null if unknown.
parameters: null

# The date the responses were produced, YYYY-MM-DD.
date: TODO

# How to reach a responsible person: an e-mail address or a GitHub handle such as "@octocat".
contact: TODO

# How the responses were produced.
production:
  # Decoding settings, e.g. "temperature 0, max 2048 output tokens" or "provider defaults".
  decoding: TODO
  # true if the model could call tools (code execution, image search, ...), else false.
  tools: TODO
  # true if the model could search or browse the web, else false.
  web_access: TODO
  # The system prompt, or its SHA-256 hash, or null if none was used.
  system_prompt: null
  # Anything else needed to reproduce the responses (API version, retries, ...); or null.
  notes: null

# Training data that may overlap the benchmark (as MTEB's training_datasets), shown on the
# model page; null if not declared. To declare it, replace null with a mapping:
#   datasets: ["COCO 2017 train"]  # trained-on datasets that may share images or questions
#   contamination: none_known      # none_known, possible or confirmed
#   notes: null                    # how the overlap was checked, or what is known of it
training_data: null
"""


def scaffold_text(submission_id: str, folder: str, config_flag: str = "") -> str:
    """The commented ``submission.yaml`` of a new submission."""
    return _TEMPLATE.format(sid=submission_id, folder=folder, config=config_flag)


def new_submission(
    subs_root: Path, submission_id: str, display: str | None = None, config_flag: str = ""
) -> Path:
    """Create ``subs_root/submission_id/submission.yaml`` from the template; returns its path.

    ``display`` names the folder in the template's comments, ``config_flag`` is the ``--config``
    option its commands need.

    Raises:
        ProblemsError: the id breaks the rule, or the folder already exists.
    """
    folder = subs_root / submission_id
    shown = display or folder.as_posix()
    if not is_submission_id(submission_id):
        raise ProblemsError(
            [
                Problem(
                    shown,
                    None,
                    f"{submission_id!r} is not a valid submission id",
                    f"choose one of {SUBMISSION_ID_RULE}",
                )
            ],
            "cannot create the submission",
        )
    if os.path.lexists(folder):
        raise ProblemsError(
            [Problem(shown, None, "already exists", "edit the files there, or choose another id")],
            "cannot create the submission",
        )
    path = folder / METADATA_FILE
    atomic_write_text(path, scaffold_text(submission_id, shown, config_flag))
    return path
