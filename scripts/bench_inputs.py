"""What checking a manifest's S3 entries costs before Spark starts, with the
folder listing (inputs.LIST_MIN_ENTRIES) and without it (one request per entry).

    .venv/bin/python scripts/bench_inputs.py [--entries 2000] [--folders 10]

S3 is moto's server on 127.0.0.1 (in the test extras), so a request costs about
a millisecond here; on S3 itself it costs tens. The request counts are what carry over.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--folders", type=int, default=10)
    args = ap.parse_args()
    import boto3
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.update({"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"})
    client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
    client.create_bucket(Bucket="crawl")
    keys = [f"segments/{i % args.folders}/warc/w{i:06d}.warc.gz" for i in range(args.entries)]
    for key in keys:
        client.put_object(Bucket="crawl", Key=key, Body=b"x")
    client.put_object(Bucket="crawl", Key="warc.paths", Body="\n".join(keys).encode())

    from templatemine.warc import inputs

    requests = [0]
    remote = inputs._remote

    class Counted:
        """The file system, counting the calls that make requests."""

        def __init__(self, inner):
            self.inner = inner

        def get_file_info(self, what):
            requests[0] += 1
            return self.inner.get_file_info(what)

        def open_input_file(self, path):
            requests[0] += 1
            return self.inner.open_input_file(path)

    inputs._remote = lambda path: (lambda f, p: (Counted(f), p))(*remote(path))
    rows = {}
    for name, least in (("one request per entry", 10 ** 12), ("folders listed", inputs.LIST_MIN_ENTRIES)):
        inputs.LIST_MIN_ENTRIES = least
        requests[0] = 0
        t = time.perf_counter()
        files = inputs.expand_inputs(["s3a://crawl/warc.paths"])
        rows[name] = (time.perf_counter() - t, requests[0], len(files))
    server.stop()
    print(f"{args.entries} entries in {args.folders} folders (moto S3 on 127.0.0.1)")
    for name, (seconds, n, found) in rows.items():
        print(f"  {name:<24}{found:>7} files  {n:>7} file system calls  {seconds:8.2f} s")
    (a, na, _), (b, nb, _) = rows.values()
    print(f"  ratio: {na / nb:.0f}x fewer calls, {a / b:.1f}x faster here")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
