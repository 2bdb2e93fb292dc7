"""stop_when_idle (templatemine/spark.py): a finished command lets a job that adaptive
execution left running end before Spark stops, and waits no longer than it is told.
A fake session: no JVM."""

import time

import pytest

from templatemine.spark import stop_when_idle
from tests.fake_session import IdleSession


class FakeSession(IdleSession):
    """A session whose status tracker answers `answers` in turn, then `then` for
    ever; records on which of its calls stop() came."""

    def __init__(self, answers: list[list[int]], then: list[int]):
        self.answers, self.then, self.calls, self.stopped_after = list(answers), then, 0, None

    def getActiveJobsIds(self):
        self.calls += 1
        return self.answers.pop(0) if self.answers else self.then

    def stop(self):
        self.stopped_after = self.calls


def test_an_idle_session_stops_at_once():
    spark = FakeSession([], then=[])
    started = time.monotonic()
    assert stop_when_idle(spark, wait_s=5, poll_s=0.01) == 0
    assert spark.stopped_after is not None and time.monotonic() - started < 1


def test_a_job_left_running_ends_before_the_stop():
    spark = FakeSession([[0, 1]] * 4, then=[])
    assert stop_when_idle(spark, wait_s=5, poll_s=0.01) == 2
    # stopped only once the tracker said no job ran, twice in a row (calls 5 and 6)
    assert spark.stopped_after == 6


def test_a_job_seen_after_one_idle_poll_is_waited_for():
    """The tracker hears of a job a moment after it starts: one idle poll is not idle."""
    spark = FakeSession([[], [], [7], [7]], then=[])  # the call, then idle, busy, busy, idle, idle
    assert stop_when_idle(spark, wait_s=5, poll_s=0.01) == 0
    assert spark.stopped_after == 6


def test_a_job_that_never_ends_delays_the_stop_by_wait_s_only():
    spark = FakeSession([], then=[0])
    started = time.monotonic()
    assert stop_when_idle(spark, wait_s=0.3, poll_s=0.01) == 1
    took = time.monotonic() - started
    assert spark.stopped_after is not None and 0.3 <= took < 2, took


def test_interrupted_while_it_waits_it_still_stops(monkeypatch):
    from templatemine import spark as tspark

    def interrupted(_s):
        raise KeyboardInterrupt

    monkeypatch.setattr(tspark.time, "sleep", interrupted)
    spark = FakeSession([], then=[0])
    with pytest.raises(KeyboardInterrupt):
        stop_when_idle(spark, wait_s=5)
    assert spark.stopped_after is not None
