"""tables.output.java_error: a Hadoop error through Py4J reads as one line."""

from templatemine.tables.output import java_error


def test_a_java_exception_is_its_class_and_message():
    class Name:
        def getName(self):
            return "org.apache.hadoop.security.AccessControlException"

    class Java:
        def getClass(self):
            return Name()

        def getMessage(self):
            return "Permission denied: user=crawler, access=READ, inode=/models/LATEST"

    exc = Exception("An error occurred while calling o41.open.\n: org.apache.hadoop.security."
                    "AccessControlException: Permission denied\n\tat org.apache.hadoop.hdfs.DFSClient.open")
    exc.java_exception = Java()
    assert java_error(exc) == ("org.apache.hadoop.security.AccessControlException: Permission denied: "
                               "user=crawler, access=READ, inode=/models/LATEST")


def test_other_errors_are_their_first_line():
    class Gone:  # the gateway closed: the Java side cannot be asked
        def getClass(self):
            raise ConnectionError("gateway closed")

    exc = Exception("An error occurred while calling o7.open.\n\tat java.base/...")
    exc.java_exception = Gone()
    assert java_error(exc) == "An error occurred while calling o7.open."
    assert java_error(OSError("the file system refused the rename\nmore")) == "the file system refused the rename"
    assert java_error(OSError()) == "OSError"
