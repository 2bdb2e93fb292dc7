"""A SparkSession stand-in for the CLI's unit tests (no JVM)."""


class IdleSession:
    """No job runs (templatemine.spark.stop_when_idle asks its status tracker);
    stop() does nothing. A test's fake overrides what it watches."""

    @property
    def sparkContext(self):
        return self

    def statusTracker(self):
        return self

    def getActiveJobsIds(self):
        return []

    def stop(self):
        pass
