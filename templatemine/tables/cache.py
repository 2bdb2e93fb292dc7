"""Persisted DataFrames scoped to one stage.

A stage (detect) persists the intermediate tables it reads more than once
(`persisted`); they are only needed until its tables are written. `released()`
around the stage unpersists every DataFrame persisted inside it when it ends,
written or failed, so a long-lived session (nightly, a notebook, the tests'
one session) does not keep each run's memberships, carriers and edges cached.
Nested scopes release their own. Driver-side and single-threaded, like the
stages that use it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from pyspark.sql import DataFrame

_scopes: list[list[DataFrame]] = []


def persisted(df: DataFrame) -> DataFrame:
    """df.persist(), released with the innermost `released()` scope (if any)."""
    df = df.persist()
    if _scopes:
        _scopes[-1].append(df)
    return df


@contextmanager
def released() -> Iterator[list[DataFrame]]:
    """Unpersist, on exit, what `persisted` persisted inside the block."""
    scope: list[DataFrame] = []
    _scopes.append(scope)
    try:
        yield scope
    finally:
        # scopes nest, so this one is the innermost (list.remove would compare
        # by value, and take an outer scope holding the same frames, or none)
        assert _scopes[-1] is scope
        _scopes.pop()
        for df in scope:
            df.unpersist()
