import io
import json

from templatemine.progress import Progress


def _run(progress: Progress) -> None:
    progress("extract: 2 WARC/ARC file(s)")
    progress.stage("extract", 461, 13.1, {"pages": 63, "links": 9443})
    progress.summary(["run X: 2 file(s) -> out"], {"command": "run", "rows": {"pages": 63}})


def test_human_lines_have_one_summary_line_per_stage():
    out = io.StringIO()
    _run(Progress(stream=out))
    lines = out.getvalue().splitlines()
    assert lines[0] == "extract: 2 WARC/ARC file(s)"
    assert lines[1] == "stage extract: 461 pages in, 13.1 s, 35.2 pages/s -> pages 63, links 9443"
    assert lines[2] == "run X: 2 file(s) -> out"


def test_quiet_prints_only_the_summary():
    out = io.StringIO()
    _run(Progress(quiet=True, stream=out))
    assert out.getvalue().splitlines() == ["run X: 2 file(s) -> out"]


def test_log_json_is_one_object_per_line_ending_with_the_summary():
    out = io.StringIO()
    progress = Progress(json_lines=True, stream=out)
    _run(progress)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["progress", "stage", "summary"]
    assert events[1]["pages_per_s"] == 35.19 and events[1]["rows_out"] == {"pages": 63, "links": 9443}
    assert events[2]["rows"] == {"pages": 63} and progress.stages[0]["stage"] == "extract"


def test_the_summary_says_why_records_are_not_accounted_for():
    """`accounted` false printed "NO" with nothing to say why; the records
    counted twice and the files that gave no row are named."""
    from templatemine.cli import summary_lines

    manifest = {
        "run_id": "r", "inputs": [{"path": "a.warc.gz"}, {"path": "b.warc"}], "out": "out",
        "records": {"read": 3, "by_outcome": {"page": 3}, "accounted": False,
                    "counted_twice": [{"warc_file": "a.warc.gz", "warc_offset": 512, "rows": 2}],
                    "files_without_rows": 1, "files_without_rows_sample": ["b.warc"]},
        "rows": {"pages": 3, "links": 0, "pagelets": 3},
        "links": {"internal_resolved_share": None, "internal_resolved": 0, "internal": 0},
        "pages": {"with_dup_of": 0},
        "timings": {"read_parse_s": 1, "tables_s": 1, "counts_s": 1, "total_s": 3},
        "malformed_sample": [], "flattened_sample": [],
    }
    lines = summary_lines(manifest)
    assert "(every one accounted for: NO)" in lines[1]
    assert "    counted twice: a.warc.gz at offset 512 (2 rows)" in lines
    assert "  files that gave no record (empty?): 1, e.g. b.warc" in lines


def test_extract_counts_records_not_pages():
    """The extract stage gets the records it read: "pages in" was wrong (found in review)."""
    out = io.StringIO()
    Progress(stream=out).stage("extract", 461, 13.1, {"pages": 63}, unit="records")
    assert out.getvalue() == "stage extract: 461 records in, 13.1 s, 35.2 records/s -> pages 63\n"
    out = io.StringIO()
    progress = Progress(json_lines=True, stream=out)
    progress.stage("extract", 461, 13.1, {"pages": 63}, unit="records")
    event = json.loads(out.getvalue())
    assert event["records_in"] == 461 and event["records_per_s"] == 35.19 and "pages_in" not in event
    assert progress.stages[0]["records_in"] == 461


def test_the_cli_counts_extract_in_records():
    import inspect

    from templatemine import cli

    assert 'progress.stage("extract", manifest["records"]["read"]' in inspect.getsource(cli._stages)
    assert 'unit="records")' in inspect.getsource(cli._stages)
