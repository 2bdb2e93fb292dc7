import pytest

from templatemine.config import TEST


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from templatemine.spark import DELTA_CONF, delta_jars_present, get_session

    session = get_session("templatemine-tests", "local[2]", {
        **TEST.spark,
        **(DELTA_CONF if delta_jars_present() else {}),  # the nightly tests; harmless to the others
        "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
    })
    session.sparkContext.setCheckpointDir(str(tmp_path_factory.mktemp("checkpoints")))
    yield session
    session.stop()


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/spark" in str(item.fspath):
            item.add_marker(pytest.mark.spark)
