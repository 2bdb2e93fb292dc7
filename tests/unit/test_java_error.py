"""tables.output.java_error: a Hadoop error through Py4J reads as one line."""

from templatemine.tables.output import java_error

# what an HDFS client's exception says: the NameNode's stack trace comes inside its message
HDFS_DENIED = ("org.apache.hadoop.security.AccessControlException: Permission denied: user=crawler, access=READ, "
               "inode=\"/models/LATEST\":hdfs:supergroup:-rw-------\n"
               "\tat org.apache.hadoop.hdfs.server.namenode.FSPermissionChecker.check(FSPermissionChecker.java:506)\n"
               "\tat org.apache.hadoop.hdfs.server.namenode.FSDirectory.checkPermission(FSDirectory.java:1943)\n")


class Java:
    """A Py4J proxy of a Java exception, as far as java_error asks it."""

    def __init__(self, text):
        self.text = text

    def toString(self):
        if self.text is None:
            raise ConnectionError("the gateway is closed")
        return self.text


def test_a_java_exception_is_the_first_line_of_its_to_string():
    exc = Exception("An error occurred while calling o41.open.\n: org.apache.hadoop.security."
                    "AccessControlException: Permission denied\n\tat org.apache.hadoop.hdfs.DFSClient.open")
    exc.java_exception = Java(HDFS_DENIED)
    assert java_error(exc) == HDFS_DENIED.splitlines()[0]
    exc.java_exception = Java("java.io.FileNotFoundException")  # no message: the class alone
    assert java_error(exc) == "java.io.FileNotFoundException"
    captured = Exception("not a valid DFS filename")  # PySpark's own (CapturedException): the Java one as _origin
    captured._origin = Java("java.lang.IllegalArgumentException: Pathname /a:b is not a valid DFS filename.")
    assert java_error(captured) == "java.lang.IllegalArgumentException: Pathname /a:b is not a valid DFS filename."


def test_without_the_gateway_and_other_errors_the_first_line():
    exc = Exception("An error occurred while calling o7.open.\n\tat java.base/...")
    exc.java_exception = Java(None)
    exc.errmsg = "An error occurred while calling o7.open. "
    assert java_error(exc) == "An error occurred while calling o7.open."
    assert java_error(OSError("the file system refused the rename\nmore")) == "the file system refused the rename"
    assert java_error(OSError()) == "OSError"
