"""s3a:// inputs end to end: manifests of s3a:// paths, one local and one on S3,
served by a local S3 endpoint (moto, on 127.0.0.1), read by the Python tasks
through pyarrow."""

import json
import os
import socket
import subprocess
import sys
import urllib.request

import pytest

from tests.warcgen import sample

moto_server = pytest.importorskip("moto.server", reason="moto[server] is in the test extras")
boto3 = pytest.importorskip("boto3")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_manifest_of_s3a_paths(tmp_path):
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    # moto's backends are global to the process: start empty, whatever an earlier test left
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST"))
    try:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}
        s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
        s3.create_bucket(Bucket="crawl")
        names = ["iana.warc.gz", "warcio-example-wrong-chunks.warc.gz"]
        for name in names:
            s3.upload_file(sample(name), "crawl", f"2026-11/{name}")
        manifest = tmp_path / "warc.paths"
        manifest.write_text("".join(f"s3a://crawl/2026-11/{n}\n" for n in names))
        # on S3, relative to its folder: read as a manifest, not as a WARC of one malformed record
        s3.put_object(Bucket="crawl", Key="warc.paths", Body="".join(f"2026-11/{n}\n" for n in names).encode())
        out = tmp_path / "out"
        proc = subprocess.run([sys.executable, "-m", "templatemine.cli", "extract", "s3a://crawl/warc.paths",
                               str(manifest), "--out", str(out), "--preset", "test", "--quiet"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        m = json.load(open(out / "manifest.json"))
        assert [i["path"] for i in m["inputs"]] == [f"s3a://crawl/2026-11/{n}" for n in names]
        assert m["records"]["accounted"] and m["records"]["by_outcome"]["page"] == 17  # 16 iana + 1 example.com
        missing = subprocess.run([sys.executable, "-m", "templatemine.cli", "extract", "s3a://crawl/nope.warc.gz",
                                  "--out", str(tmp_path / "x")], capture_output=True, text=True, env=env, timeout=120)
        assert missing.returncode == 2 and "input not found: s3a://crawl/nope.warc.gz" in missing.stderr
        s3.put_object(Bucket="crawl", Key="notes/readme.txt", Body=b"no WARCs here")
        empty = subprocess.run([sys.executable, "-m", "templatemine.cli", "extract", "s3a://crawl/notes/",
                                "--out", str(out)], capture_output=True, text=True, env=env, timeout=120)
        assert empty.returncode == 2 and "no .warc/.warc.gz/.arc/.arc.gz files under s3a://crawl/notes/" in empty.stderr
        assert json.load(open(out / "manifest.json"))["records"]["by_outcome"]["page"] == 17  # OUT left as it was
    finally:
        server.stop()
