"""The log4j2 configuration of a driver templatemine starts (spark.py
quiet_log_options, templatemine/log4j2.properties): Spark's WARN to stderr
without the lines every laptop run printed, unless the user configures log4j2
themselves. Each case names Spark's conf folder (SPARK_CONF_DIR), so this
machine's own Spark configuration plays no part. A run's stderr with it:
tests/spark/test_missing_tables.py."""

import configparser
import os
import tomllib

import pytest

from templatemine import spark as tspark
from templatemine.spark import LOG4J2_PROPERTIES, quiet_log_options, repo_root

OPTION = f'"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES}"'


@pytest.fixture
def conf(tmp_path):
    """An empty Spark conf folder, and the environment naming it."""
    folder = tmp_path / "spark-conf"
    folder.mkdir()
    return folder, {"SPARK_CONF_DIR": str(folder)}


def test_the_driver_is_pointed_at_the_shipped_configuration_keeping_the_users_options(conf):
    folder, env = conf
    assert quiet_log_options({}, env) == OPTION
    assert quiet_log_options({"spark.driver.extraJavaOptions": "-Xss4m -Dx=y"}, env) == f"-Xss4m -Dx=y {OPTION}"


@pytest.mark.parametrize("line", ["spark.driver.extraJavaOptions  -Dsite=1 -Xss8m",
                                  "  spark.driver.extraJavaOptions=-Dsite=1 \\\n  -Dlog4j2.configurationFile=/x",
                                  'spark.driver.extraJavaOptions: -Dx=\\"a b\\"'])
def test_a_properties_file_setting_the_drivers_java_options_is_left_to_its_own(conf, tmp_path, line):
    """spark-submit lets a --conf replace a properties file's value whole, and carrying
    it over means parsing Java's properties format exactly: a continuation or an escape
    read wrong made a driver that did not start (found in review). So nothing is added."""
    folder, env = conf
    (folder / "spark-defaults.conf").write_bytes(f"# r\xe9glages (Latin-1)\n{line}\nspark.executor.memory 4g\n"
                                                 .encode("latin-1"))
    assert quiet_log_options({}, env) is None
    assert quiet_log_options({"spark.driver.extraJavaOptions": "-Dmine=1"}, env) is None
    other = tmp_path / "other.conf"
    other.write_text(line + "\n")
    (folder / "spark-defaults.conf").write_text("spark.executor.memory 4g\n")
    assert quiet_log_options({}, env) == OPTION  # the defaults file alone sets no Java options
    submit = {**env, "PYSPARK_SUBMIT_ARGS": f"--properties-file {other} pyspark-shell"}
    assert quiet_log_options({}, submit) is None
    (folder / "spark-defaults.conf").write_text(line + "\n")
    other.write_text("spark.executor.memory 4g\n")
    assert quiet_log_options({}, submit) == OPTION  # --properties-file alone: spark-defaults.conf is not read
    loading = {**env, "PYSPARK_SUBMIT_ARGS": f"--properties-file {other} --load-spark-defaults pyspark-shell"}
    assert quiet_log_options({}, loading) is None


@pytest.mark.parametrize("where", ["session", "default options", "submit opts", "java-opts", "environment",
                                   "xml in conf", "properties in conf"])
def test_a_log4j_configuration_of_the_users_is_left_alone(conf, where):
    folder, env = conf
    settings = {}
    if where == "session":
        settings = {"spark.driver.extraJavaOptions": "-Dlog4j2.configurationFile=/etc/mine.xml"}
    elif where == "submit opts":  # before extraJavaOptions on the command line: ours would win
        env = {**env, "SPARK_SUBMIT_OPTS": "-Dlog4j2.configurationFile=/etc/mine.xml"}
    elif where == "java-opts":
        (folder / "java-opts").write_text("-Dlog4j.configuration=old.properties\n")
    elif where == "default options":
        (folder / "spark-defaults.conf").write_text(
            "spark.driver.defaultJavaOptions -Dlog4j2.configurationFile=/etc/site.xml\n")
    elif where == "environment":
        env = {**env, "LOG4J_CONFIGURATION_FILE": "/etc/mine.properties"}
    elif where == "xml in conf":
        (folder / "log4j2.xml").write_text("<Configuration/>\n")
    else:
        (folder / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert quiet_log_options(settings, env) is None


@pytest.mark.parametrize("name", ["my repo", "o'x", 'q"x\\y'])
def test_the_path_is_quoted_and_escaped_for_the_launcher(conf, tmp_path, monkeypatch, name):
    """The launcher's option parser reads quotes and backslashes: a path holding '
    stopped every command ("Invalid option string"; found in review)."""
    import shlex

    folder, env = conf
    path = tmp_path / name / "log4j2.properties"
    path.parent.mkdir()
    path.write_text("rootLogger.level = warn\n")
    monkeypatch.setattr(tspark, "LOG4J2_PROPERTIES", str(path))
    options = quiet_log_options({}, env)
    # what the launcher's parser (CommandBuilderUtils.parseOptionString) makes of it: POSIX shell words
    assert shlex.split(options) == [f"-Dlog4j2.configurationFile={path}"]


def test_no_shipped_file_no_option(conf, tmp_path, monkeypatch):
    monkeypatch.setattr(tspark, "LOG4J2_PROPERTIES", str(tmp_path / "gone.properties"))
    assert quiet_log_options({}, conf[1]) is None


def test_the_configuration_ships_in_the_package_and_keeps_warnings():
    package_data = tomllib.load(open(os.path.join(repo_root(), "pyproject.toml"), "rb"))["tool"]["setuptools"]
    assert "log4j2.properties" in package_data["package-data"]["templatemine"]
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str
    parser.read_string("[log4j2]\n" + open(LOG4J2_PROPERTIES).read())
    props = dict(parser["log4j2"])
    assert props["rootLogger.level"] == "warn" and props["appender.console.target"] == "SYSTEM_ERR"
    # one logger goes quieter whole (its only warning is the native-library notice); the
    # others lose named messages only, by a filter; the root's warnings stay
    quieter = {props[k.replace(".level", ".name")] for k, v in props.items()
               if k.startswith("logger.") and k.endswith(".level") and v != "warn"}
    assert quieter == {"org.apache.hadoop.util.NativeCodeLoader"}
    filters = {k.split(".")[1]: v for k, v in props.items() if k.startswith("logger.") and k.endswith(".regex")}
    assert filters.keys() == {"utils", "blocks"} and "loopback" in filters["utils"]
