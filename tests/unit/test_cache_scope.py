"""tables/cache.py: what a stage persists is released when the stage ends, failed or not."""

import pytest

from templatemine.tables import cache
from templatemine.tables.cache import persisted, released


class Frame:
    """Stands in for a DataFrame: persist() returns itself, as Spark's does."""

    def __init__(self):
        self.cached = False

    def persist(self):
        self.cached = True
        return self

    def unpersist(self):
        self.cached = False
        return self


def test_scope_releases_what_it_persisted_and_only_that():
    outside = persisted(Frame())  # no scope: the caller's to release
    with released() as scope:
        a = persisted(Frame())
        with released():
            b = persisted(Frame())
        assert not b.cached and a.cached  # the inner scope released its own only
        c = persisted(Frame())
        assert scope == [a, c]
    assert not a.cached and not c.cached and outside.cached


def test_an_empty_inner_scope_leaves_the_outer_one_open():
    with released() as outer:
        with released():
            pass  # both scopes empty (equal lists): the inner one must close, not the outer
        a = persisted(Frame())
        assert outer == [a]
    assert not a.cached


def test_scope_releases_on_failure():
    with pytest.raises(RuntimeError):
        with released():
            a = persisted(Frame())
            raise RuntimeError("stage failed")
    assert not a.cached
    assert cache._scopes == []  # and no scope is left open
