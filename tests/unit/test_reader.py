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


def _members(n=5, words=30000):
    """n response records, one gzip member each (~40 kB compressed), with fixed
    record ids so that the bytes, and so the damage, are the same every run."""
    import io
    import random

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    members = []
    for i in range(n):
        rnd = random.Random(i)
        body = "<html><body><p>" + " ".join(f"w{rnd.randrange(10 ** 6)}" for _ in range(words)) + "</p></body></html>"
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=True)
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
    their rank in it (0, 1, 2 ...), and records_at reads each back by it."""
    path = sample("warcio-example-bad-non-chunked.warc.gz")
    recs = read(path)
    assert [r.offset for r in recs] == list(range(len(recs)))
    with open(path, "rb") as fh:
        again = records_at(path, fh, [r.offset for r in recs])
    assert [again[r.offset].record_id for r in recs] == [r.record_id for r in recs]
