"""The published JSON Schema of submission.yaml agrees with the validator on the scaffold."""

from __future__ import annotations

import jsonschema
import yaml

from gamut.cli.schema import json_schemas
from scoring.submissions import scaffold_text
from tests.submissions.helpers import GOOD_META


def test_schema_accepts_good_metadata_and_rejects_the_unfilled_scaffold() -> None:
    schema = json_schemas()["submission.schema.json"]
    jsonschema.validate(GOOD_META, schema)
    unfilled = yaml.safe_load(scaffold_text("acme", "submissions/acme"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(unfilled))
    bad = {".".join(map(str, e.absolute_path)) for e in errors}
    # a TODO is text: the schema refuses it where a value is not free text (the validator
    # refuses every TODO, by name)
    assert bad == {"link", "open_weights", "date", "production.tools", "production.web_access"}


def test_scaffold_names_every_field_of_the_model() -> None:
    unfilled = yaml.safe_load(scaffold_text("acme", "submissions/acme"))
    schema = json_schemas()["submission.schema.json"]
    assert set(unfilled) == set(schema["properties"]) - {"demo"}
    production = schema["$defs"]["Production"]["properties"]
    assert set(unfilled["production"]) == set(production)
