"""stop_when_idle (templatemine/spark.py): a finished command lets a job that adaptive
execution left running end before Spark stops, and waits no longer than it is told.
A fake session: no JVM."""

import time

import pytest

from templatemine.spark import stop_when_idle


class FakeSession:
    """A session whose status tracker reports `running` active jobs for its first
    `polls` calls (None: for ever), then none; records when stop() came."""

    def __init__(self, polls: int | None, running: int = 1):
        self.polls, self.running, self.calls, self.stopped_after = polls, running, 0, None
        self.sparkContext = self

    def statusTracker(self):
        return self

    def getActiveJobsIds(self):
        self.calls += 1
        busy = self.polls is None or self.calls <= self.polls
        return list(range(self.running)) if busy else []

    def stop(self):
        self.stopped_after = self.calls


def test_an_idle_session_stops_at_once():
    spark = FakeSession(polls=0)
    started = time.monotonic()
    assert stop_when_idle(spark, wait_s=5, poll_s=0.01) == 0
    assert spark.stopped_after is not None and time.monotonic() - started < 1


def test_a_job_left_running_ends_before_the_stop():
    spark = FakeSession(polls=4, running=2)
    assert stop_when_idle(spark, wait_s=5, poll_s=0.01) == 2
    # stopped only once the tracker said no job ran, twice in a row (calls 5 and 6)
    assert spark.stopped_after == 6


def test_a_job_seen_after_one_idle_poll_is_waited_for():
    """The tracker hears of a job a moment after it starts: one idle poll is not idle."""
    spark = FakeSession(polls=None)
    answers = iter([[], [], [7], [7], [], []])  # the call, then idle, busy, busy, idle, idle
    spark.getActiveJobsIds = lambda: (setattr(spark, "calls", spark.calls + 1), next(answers))[1]
    assert stop_when_idle(spark, wait_s=5, poll_s=0.01) == 0
    assert spark.stopped_after == 6


def test_a_job_that_never_ends_delays_the_stop_by_wait_s_only():
    spark = FakeSession(polls=None)
    started = time.monotonic()
    assert stop_when_idle(spark, wait_s=0.3, poll_s=0.01) == 1
    took = time.monotonic() - started
    assert spark.stopped_after is not None and 0.3 <= took < 2, took


def test_interrupted_while_it_waits_it_still_stops(monkeypatch):
    from templatemine import spark as tspark

    def interrupted(_s):
        raise KeyboardInterrupt

    monkeypatch.setattr(tspark.time, "sleep", interrupted)
    spark = FakeSession(polls=None)
    with pytest.raises(KeyboardInterrupt):
        stop_when_idle(spark, wait_s=5)
    assert spark.stopped_after is not None
