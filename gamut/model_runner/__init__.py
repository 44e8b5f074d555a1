"""A submission from a model API: ``gamut generate`` (resumable, crash-safe)."""
