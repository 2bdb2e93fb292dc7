"""The WARC reader on every malformed sample, and on damage we make ourselves:
good records before and after a bad one survive, the bad one is reported with
its file and offset, nothing is lost silently."""

import collections

import pytest

from templatemine.warc.reader import iter_records, records_at, sniff_html
from tests.warcgen import gzip_member, sample, small_site, write_warc


def read(path, **kw):
    with open(path, "rb") as fh:
        return list(iter_records(path, fh, **kw))


def outcomes(records):
    return collections.Counter(r.outcome or "candidate" for r in records)


def test_iana_records():
    recs = read(sample("iana.warc.gz"))
    assert outcomes(recs) == {"non_response": 295, "candidate": 16, "non_html": 28, "non_2xx": 4}
    assert len({r.offset for r in recs}) == len(recs)  # one record per offset
    html = [r for r in recs if r.outcome is None]
    assert all(r.payload.lstrip().lower().startswith((b"<!doctype", b"<html")) for r in html)


def test_each_malformed_sample_is_survived_and_reported():
    expected = {
        # a record cut off by the end of the file
        "resiliparse-clipped.warc.gz": {"malformed": 1},
        # one gzip stream for the whole file: every record recovered
        "warcio-example-bad-non-chunked.warc.gz": {"non_response": 5, "candidate": 1},
        "warcio-example-bad.warc.gz.bad": {"non_response": 4, "candidate": 1, "non_2xx": 1},
        # gzip members split a record: read across them, nothing lost
        "warcio-example-wrong-chunks.warc.gz": {"candidate": 1, "non_response": 1},
        "warcio-example-trunc.warc": {"non_response": 3, "candidate": 1},
        "warcio-example-wget-bad-target-uri.warc.gz": {"non_response": 5, "candidate": 1},
        "warcio-example-space-in-target-uri.warc.gz": {"non_response": 2},
        "resiliparse-clueweb-quirk.warc.gz": {"non_response": 1, "candidate": 29},  # WARC/0.18
        "warcio-example.arc.gz": {"non_response": 1, "candidate": 1},  # ARC
        "warcio-example-iana.org-chunked.warc": {"non_response": 2, "candidate": 1},
    }
    for name, want in expected.items():
        recs = read(sample(name))
        assert outcomes(recs) == want, name
        for r in recs:
            if r.outcome == "malformed":
                assert r.warc_file.endswith(name) and r.offset >= 0 and r.detail


def test_records_after_garbage_are_kept(tmp_path):
    good = write_warc(str(tmp_path / "good.warc.gz"), small_site()[:3])
    data = open(good, "rb").read()
    with open(good, "rb") as fh:
        offsets = [r.offset for r in iter_records(good, fh)]
    # first record, then a member of garbage, a torn member, then the rest
    damaged = data[: offsets[1]] + gzip_member(b"this is not a WARC record\r\n\r\n") + b"\x1f\x8b\x08garbage" \
        + data[offsets[1]:]
    path = tmp_path / "damaged.warc.gz"
    path.write_bytes(damaged)
    recs = read(str(path))
    assert [r.target_uri for r in recs if r.outcome is None] == [p["url"] for p in small_site()[:3]]
    bad = [r for r in recs if r.outcome == "malformed"]
    assert len(bad) == 1 and bad[0].offset == offsets[1]


def test_truncated_plain_warc_keeps_earlier_records(tmp_path):
    good = write_warc(str(tmp_path / "plain.warc"), small_site()[:3], gzip_members=False)
    data = open(good, "rb").read()
    cut = tmp_path / "cut.warc"
    cut.write_bytes(data[: len(data) - 200])
    recs = read(str(cut))
    assert [r.outcome for r in recs] == [None, None, "malformed"]
    assert "Content-Length" in recs[-1].detail


def test_oversized_payload_is_not_read(tmp_path):
    path = write_warc(str(tmp_path / "big.warc.gz"), [{"url": "https://example.org/big",
                                                         "html": "<html><body>" + "x" * 5000 + "</body></html>"}])
    (rec,) = read(path, max_payload_bytes=1000)
    assert rec.outcome == "oversized" and rec.payload is None


def test_html_by_header_and_by_sniffing(tmp_path):
    pages = [
        {"url": "https://example.org/a", "html": "<!doctype html><p>a</p>", "content_type": "text/plain"},
        {"url": "https://example.org/b", "html": "just text", "content_type": "text/plain"},
        {"url": "https://example.org/c", "html": b"%PDF-1.4 binary", "content_type": "text/html"},
        {"url": "https://example.org/d", "html": "<p>d</p>", "content_type": "image/png"},
        {"url": "https://example.org/e", "html": "<p>e</p>", "status": "404 Not Found"},
        {"url": "https://example.org/f", "html": "   ", "content_type": "text/html"},
    ]
    recs = read(write_warc(str(tmp_path / "types.warc.gz"), pages))
    assert [r.outcome for r in recs] == [None, "non_html", "non_html", "non_html", "non_2xx", "empty"]
    assert sniff_html(b"\xef\xbb\xbf  <!DOCTYPE html>") and not sniff_html(b"GIF89a")


def test_records_at_loads_pages_by_offset():
    """What a detector that needs a few pages of a file reads: the same records
    as a full pass, by seeking (gzip members, plain WARC) or, for a file that is
    one gzip stream, by reading through it."""
    for name in ("iana.warc.gz", "warcio-example-iana.org-chunked.warc", "warcio-example-bad-non-chunked.warc.gz",
                 "warcio-example.arc.gz"):
        path = sample(name)
        every = read(path)
        full = {r.offset: r for r in every if r.payload is not None}
        assert full, name
        wanted = sorted(full)[-3:]
        absent = max(r.offset for r in every) + 1  # no record has it
        with open(path, "rb") as fh:
            got = records_at(path, fh, wanted + [absent])
        assert sorted(got) == wanted, name
        assert all(got[o].payload == full[o].payload and got[o].target_uri == full[o].target_uri for o in wanted)


def test_html_at_reads_pages_back_decoded_and_says_why_not():
    from templatemine.html.charset import decode_html
    from templatemine.html.record import html_at

    path = sample("iana.warc.gz")
    full = {r.offset: r for r in read(path) if r.payload is not None}
    wanted = sorted(full)[:3]
    html, errors = html_at(path, wanted + [1])
    assert html == {o: decode_html(full[o].payload, full[o].content_type)[0] for o in wanted}
    assert list(errors) == [1] and "record not found" in errors[1] and "iana.warc.gz" in errors[1]
    gone, why = html_at(path + ".missing", [0])
    assert gone == {} and list(why) == [0] and "No such file" in why[0]


def _members(n=5, words=30000, gzip=True):
    """n response records, one gzip member each (~40 kB compressed), with fixed
    record ids so that the bytes, and so the damage, are the same every run
    (`gzip=False`: the records uncompressed)."""
    import io
    import random

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    members = []
    for i in range(n):
        rnd = random.Random(i)
        body = "<html><body><p>" + " ".join(f"w{rnd.randrange(10 ** 6)}" for _ in range(words)) + "</p></body></html>"
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=gzip)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            f"https://x.example/p{i}", "response", payload=io.BytesIO(body.encode()), http_headers=http,
            warc_headers_dict={"WARC-Date": "2026-11-01T00:00:00Z", "WARC-Record-ID": f"<urn:uuid:{i:032d}>"}))
        members.append(buf.getvalue())
    return members


@pytest.mark.parametrize("torn,keep", [(2, 0.5), (2, 0.1), (2, 0.02), (2, 0.001), (1, 0.2), (2, 0.2), (1, 0.9),
                                       (1, 0.99), (3, 0.7), (0, 0.5), (0, 0.2), (4, 0.5), (3, -0.3), (1, -0.95)])
def test_a_gzip_member_cut_short_or_corrupt_loses_no_other_record(tmp_path, torn, keep):
    """A member cut short in the middle of a file (a torn write, a bad copy;
    `keep` of it kept) or with a byte flipped (at -`keep` of it): warcio
    inflates on into the next members' bytes as if they were its data, then
    fails far past them or ends quietly as at the end of the file. The damaged
    record is one `malformed` row at its own offset, never a page of garbage;
    every other record is read at its own offset."""
    members = _members()
    data, offsets = b"", []
    for i, m in enumerate(members):
        offsets.append(len(data))
        if i == torn:
            cut = int(len(m) * abs(keep))
            m = m[:cut] if keep > 0 else m[:cut] + bytes([m[cut] ^ 0x55]) + m[cut + 1:]
        data += m
    path = tmp_path / "torn.warc.gz"
    path.write_bytes(data)
    recs = read(str(path))
    assert len(recs) == len(members)
    assert {r.target_uri: r.offset for r in recs if r.outcome is None} == \
        {f"https://x.example/p{i}": offsets[i] for i in range(len(members)) if i != torn}
    (bad,) = [r for r in recs if r.outcome == "malformed"]
    assert bad.offset == offsets[torn] and bad.warc_file == str(path) and bad.detail
    pages = [r.offset for r in recs if r.outcome is None]
    with open(path, "rb") as fh:  # and each page is found again by its offset
        again = records_at(str(path), fh, pages)
    assert sorted(again) == pages and all(again[o].outcome is None for o in pages)


def test_stream_mode_offsets_are_unique_and_found_again():
    """A file gzipped as one stream: its records take the member's offset and
    their rank in it times RANK_STRIDE (0, 2^40, 2 * 2^40 ...), and records_at
    reads each back by it."""
    from templatemine.warc.reader import RANK_STRIDE

    path = sample("warcio-example-bad-non-chunked.warc.gz")
    recs = read(path)
    assert [r.offset for r in recs] == [i * RANK_STRIDE for i in range(len(recs))]
    with open(path, "rb") as fh:
        again = records_at(path, fh, [r.offset for r in recs])
    assert [again[r.offset].record_id for r in recs] == [r.record_id for r in recs]


def _pages(recs):
    return [r.target_uri for r in recs if r.outcome is None]


def test_damage_around_members_holding_many_records(tmp_path):
    """Found in review of the change above: a member of several records (a
    file appended to by a tool that gzips as one stream) after a torn member
    made the reader loop forever; the good records just before damage met in
    stream mode were dropped with it; a one-stream file with junk after it
    lost its last records; a last member cut to a few bytes vanished without
    a row; zero padding between or after members gave a malformed row; and a
    member of hundreds of small records gave ranks that reached the next
    member's offset."""
    import gzip as gz
    import itertools

    members = _members(6, words=300)
    plain = b"".join(_members(6, words=300, gzip=False)[3:])
    cases = {  # name: (bytes, pages wanted, malformed rows wanted)
        "torn member, then a member of three records": (
            members[0] + members[1][: len(members[1]) // 2] + gz.compress(plain), [0, 3, 4, 5], 1),
        "one gzip stream, junk after it": (gz.compress(b"".join(_members(6, 300, False))) + b"junk!",
                                           [0, 1, 2, 3, 4, 5], 1),
        "last member cut to 5 bytes": (b"".join(members[:5]) + members[5][:5], [0, 1, 2, 3, 4], 1),
        "one gzip stream: a garbage line, and cut short": (
            gz.compress(b"".join(_members(2, 300, False)) + b"some garbage line\r\n" + plain)[:-60],
            [0, 1, 3, 4], 2),
        "zero padding between and after members": (members[0] + b"\0" * 512 + members[1] + b"\0" * 512,
                                                   [0, 1], 0),
        "blank lines after the last member": (members[0] + members[1] + b"\r\n\r\n", [0, 1], 0),
    }
    for name, (data, want, n_bad) in cases.items():
        path = tmp_path / "x.warc.gz"
        path.write_bytes(data)
        with open(path, "rb") as fh:
            recs = list(itertools.islice(iter_records(str(path), fh), 50))
        assert _pages(recs) == [f"https://x.example/p{i}" for i in want], name
        assert sum(r.outcome == "malformed" for r in recs) == n_bad, name
        assert len({r.offset for r in recs}) == len(recs), name
        with open(path, "rb") as fh:
            again = records_at(str(path), fh, [r.offset for r in recs if r.outcome is None])
        assert [again[r.offset].target_uri for r in recs if r.outcome is None] == _pages(recs), name
    # 400 small records in one member, then another member: every offset unique, each found again
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=False)
    for i in range(400):
        writer.write_record(writer.create_warc_record(
            f"https://x.example/s{i}", "resource", payload=io.BytesIO(b"x"),
            warc_headers_dict={"WARC-Date": "2026-11-01T00:00:00Z", "WARC-Record-ID": "<urn:uuid:0>"}))
    path = tmp_path / "many.warc.gz"
    path.write_bytes(gz.compress(buf.getvalue()) + members[0])
    recs = read(str(path))
    assert len(recs) == 401 and len({r.offset for r in recs}) == 401 and recs[-1].outcome is None
    with open(path, "rb") as fh:
        again = records_at(str(path), fh, [recs[-1].offset, recs[200].offset])
    assert again[recs[-1].offset].target_uri == "https://x.example/p0"


def test_second_review_plain_files_named_gz_and_read_ahead_offsets(tmp_path):
    """Found in review of the mends: an uncompressed WARC named .warc.gz (a
    client un-gzipped it and kept the name) lost its last page, and after a
    garbage line every later record; warcio, reading ahead in a member that
    holds two records, handed out the next records with made-up offsets
    (one negative, others inside other members); records_at raised on a
    negative offset."""
    import gzip as gz

    plain = _members(6, words=50, gzip=False)
    path = tmp_path / "plain.warc.gz"
    path.write_bytes(plain[0] + plain[1] + b"some garbage line\r\n\r\n" + b"".join(plain[2:]))
    recs = read(str(path))
    assert _pages(recs) == [f"https://x.example/p{i}" for i in range(6)]
    assert [r.outcome for r in recs].count("malformed") == 1
    # p2 and p3 share one member, the others have one each
    pages = [_members(1, words=w, gzip=False)[0].replace(b"/p0", f"/p{i}".encode())
             for i, w in enumerate([20, 20, 20, 2000, 400, 400, 100, 20])]
    members = [gz.compress(pages[0]), gz.compress(pages[1]), gz.compress(pages[2] + pages[3])] + \
        [gz.compress(p) for p in pages[4:]]
    starts = [sum(map(len, members[:i])) for i in range(len(members))]
    path = tmp_path / "two-in-one.warc.gz"
    path.write_bytes(b"".join(members))
    recs = read(str(path))
    assert _pages(recs) == [f"https://x.example/p{i}" for i in range(8)]
    got = {r.target_uri.rsplit("/", 1)[-1]: r.offset for r in recs}
    assert [got[f"p{i}"] for i in (0, 1, 2, 4, 5, 6, 7)] == starts[:3] + starts[3:]  # member starts, as they are
    assert got["p3"] > starts[-1]  # its member's offset plus a rank: no member start
    with open(path, "rb") as fh:
        again = records_at(str(path), fh, [r.offset for r in recs] + [-5])
    assert sorted(again) == sorted(r.offset for r in recs)


def _no_length(records: list[bytes], bad) -> list[bytes]:
    """The records, those at indexes in `bad` without their Content-Length header."""
    return [r.replace(b"Content-Length:", b"X-No-Length:", 1) if i in bad else r for i, r in enumerate(records)]


def test_a_warc_record_without_content_length_loses_no_other_record(tmp_path):
    """Found 2026-11-27: warcio reads a WARC record with no Content-Length to
    the end of the stream, so in an uncompressed file, or one gzipped as one
    stream, every record after it vanished into its payload without a row.
    Now it is one `malformed` row and the reading goes on at the next record;
    in a file of one gzip member per record the member bounds it, and it is
    read as it is."""
    import gzip as gz

    plain = _no_length(_members(6, words=50, gzip=False), {1, 4})
    want = [f"https://x.example/p{i}" for i in (0, 2, 3, 5)]
    for name, data in [("plain.warc", b"".join(plain)), ("stream.warc.gz", gz.compress(b"".join(plain)))]:
        path = tmp_path / name
        path.write_bytes(data)
        recs = read(str(path))
        assert _pages(recs) == want, name
        bad = [r for r in recs if r.outcome == "malformed"]
        assert len(recs) == 6 and len(bad) == 2 and all("Content-Length" in r.detail for r in bad), name
        assert len({r.offset for r in recs}) == 6, name
    starts = [sum(map(len, plain[:i])) for i in range(6)]
    assert [r.offset for r in read(str(tmp_path / "plain.warc"))] == starts
    path = tmp_path / "members.warc.gz"
    path.write_bytes(b"".join(gz.compress(r) for r in plain))
    recs = read(str(path))
    assert _pages(recs) == [f"https://x.example/p{i}" for i in range(6)]
    assert all(b"w" in r.payload and r.payload.rstrip().endswith(b"</html>") for r in recs)

