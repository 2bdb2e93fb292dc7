"""The driver's log4j2 configuration in local mode (spark.py quiet_log_options,
templatemine/log4j2.properties): Spark's WARN to stderr without the lines every
laptop run printed, unless the user configures log4j2 themselves. A run's stderr
with it: tests/spark/test_missing_tables.py."""

import configparser
import os
import tomllib

from templatemine import spark as tspark
from templatemine.spark import LOG4J2_PROPERTIES, quiet_log_options, repo_root

OPTION = f"-Dlog4j2.configurationFile=file:{LOG4J2_PROPERTIES}"


def test_the_driver_is_pointed_at_the_shipped_configuration_keeping_the_users_options(tmp_path):
    assert quiet_log_options({}, {}) == OPTION
    assert quiet_log_options({"spark.driver.extraJavaOptions": "-Xss4m -Dx=y"}, {}) == f"-Xss4m -Dx=y {OPTION}"
    assert quiet_log_options({}, {"SPARK_CONF_DIR": str(tmp_path)}) == OPTION  # a conf dir without a log4j2 file


def test_a_log4j2_configuration_of_the_users_is_left_alone(tmp_path):
    assert quiet_log_options({"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=/etc/mine.xml"}, {}) is None
    assert quiet_log_options({"spark.driver.extraJavaOptions": "-Dlog4j.configuration=old.properties"}, {}) is None
    (tmp_path / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert quiet_log_options({}, {"SPARK_CONF_DIR": str(tmp_path)}) is None


def test_a_path_with_a_space_is_quoted_and_a_missing_file_not_named(tmp_path, monkeypatch):
    spaced = tmp_path / "my repo" / "log4j2.properties"
    spaced.parent.mkdir()
    spaced.write_text("rootLogger.level = warn\n")
    monkeypatch.setattr(tspark, "LOG4J2_PROPERTIES", str(spaced))
    assert quiet_log_options({}, {}) == f'"-Dlog4j2.configurationFile=file:{spaced}"'
    monkeypatch.setattr(tspark, "LOG4J2_PROPERTIES", str(tmp_path / "gone.properties"))
    assert quiet_log_options({}, {}) is None


def test_the_configuration_ships_in_the_package_and_keeps_warnings():
    package_data = tomllib.load(open(os.path.join(repo_root(), "pyproject.toml"), "rb"))["tool"]["setuptools"]
    assert "log4j2.properties" in package_data["package-data"]["templatemine"]
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str
    parser.read_string("[log4j2]\n" + open(LOG4J2_PROPERTIES).read())
    props = dict(parser["log4j2"])
    assert props["rootLogger.level"] == "warn" and props["appender.console.target"] == "SYSTEM_ERR"
    # only the named loggers go quieter (their own noise); the root's warnings stay
    quieter = {props[k.replace(".level", ".name")] for k, v in props.items()
               if k.startswith("logger.") and k.endswith(".level") and v != "warn"}
    assert quieter == {"org.apache.spark.util.Utils", "org.apache.hadoop.util.NativeCodeLoader"}
