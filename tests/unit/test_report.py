"""The run report's pure parts: text density, the viewer's page HTML, rendering."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from templatemine.html.page import PageParser
from templatemine.report.density import MAX_BIN, density_bin, density_histogram, text_density, wrap
from templatemine.report.render import (REPORT_CSP, ReportData, SiteRow, ViewerPage, _script_json, render_report,
                                        stage_rows, svg_hbars, svg_histogram)
from templatemine.report.viewer import CSP, viewer_html


# ---------------------------------------------------------------- text density


def test_wrap_counts_lines_greedily_at_the_width():
    # width 10: "aaaa bbbb" | "cccc dddd" | "e"
    w = wrap("aaaa bbbb cccc dddd e", width=10)
    assert (w.tokens, w.lines, w.last_line_tokens) == (5, 3, 1)
    # BlockFusion: the partial last line is left out, (5 - 1) / (3 - 1)
    assert w.density == 2.0
    assert wrap("a b c").density == 3.0  # one line: its tokens
    assert wrap("").density == 0.0 and wrap("   ").tokens == 0
    # a word longer than the line sits on a line of its own
    assert wrap("x" * 12 + " y", width=10) == (2, 2, 1)


def test_density_separates_menus_from_running_text():
    menu = "Home"  # one link per pagelet: one token per line
    prose = " ".join(["word"] * 200)  # 16 five-character slots per 80-character line
    assert text_density(menu) == 1.0
    assert text_density(prose) == 16.0
    assert density_bin(2.5) == 3 and density_bin(2.49) == 2  # half up, as Spark's round
    assert density_bin(1000.0) == MAX_BIN


def test_density_histogram_weights_bins_by_tokens_and_splits_templates():
    hist = density_histogram([("Home", True), ("About us", True), (" ".join(["word"] * 200), False), ("", False)])
    assert hist == {1: (0, 1), 2: (0, 2), 16: (200, 0)}


# ---------------------------------------------------------------- the viewer's HTML

PAGE = """<!doctype html><html><head><title>T</title><base href="https://cdn.example/">
<link rel="stylesheet" href="https://cdn.example/site.css"><meta http-equiv="refresh" content="0; url=https://x/">
<style>body{color:red}</style><script src="https://cdn.example/a.js"></script></head>
<body>Banner text <script>document.write('x')</script> continues
<nav><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li><li><a href="/c">C</a></li></ul></nav>
<noscript><p>enable js</p></noscript>
Powered <!-- a comment --> by us
<main><h1>Title</h1><p>Body text with <a href="/d">a link</a>.</p></main>
<div><span>x</span></div><div><p>second div</p></div>
Footer <link rel="stylesheet" href="https://cdn.example/late.css"> line
<meta http-equiv="refresh" content="5; url=https://x/"> end
</body></html>"""


def test_viewer_html_is_inert_and_keeps_the_pagelets_paths():
    out = viewer_html(PAGE)
    assert out.index(f'content="{CSP}"') < out.index("<title>")  # the CSP comes first in <head>
    for gone in ("<script", "refresh", "<style", "<noscript", "cdn.example", "href=\"https://", "<link rel"):
        assert gone not in out, gone
    parser = PageParser()
    before = [(p.dom_path, p.text) for p in parser.parse("https://example.org/", PAGE).pagelets]
    after = [(p.dom_path, p.text) for p in parser.parse("https://example.org/", out).pagelets]
    assert after == before
    paths = dict(before)
    # the text runs the viewer must find: a script and a comment do not split a run
    assert paths["/html/body/text()[1]"] == "Banner text continues"
    assert paths["/html/body/text()[2]"] == "Powered by us"
    # ... but an element does, a <link> or <meta> in <body> as any other
    assert (paths["/html/body/text()[3]"], paths["/html/body/text()[4]"], paths["/html/body/text()[5]"]) == (
        "Footer", "line", "end")
    # <link>, <base> and <meta http-equiv> stay, as elements part text runs, but with no attribute: they
    # neither fetch nor navigate (deleting them merged "Footer" and "line" into one run, found in review)
    inert = re.findall(r"<(?:link|base|meta)\b[^>]*>", out)
    assert "<link>" in inert and "<base>" in inert and "<meta>" in inert
    assert set(inert) <= {"<link>", "<base>", "<meta>", f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'}


def test_the_viewers_policy_is_in_head_whatever_comes_before_it():
    """A comment before <html> that held "<head>" got the policy put inside the
    comment, where it does nothing (found in review)."""
    for page in ('<!-- <head> --><html><head><title>t</title></head><body><img src="http://x.example/a.gif">',
                 "", "<p>x", '<html data-x="<head>"><head></head><body>hi</body></html>'):
        out = viewer_html(page)
        comment_end = out.find("-->")
        at = out.index(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">')
        assert at > comment_end and out.index("<head>") < at < out.index("</head>"), out[:200]


# ---------------------------------------------------------------- rendering


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.data: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = dict(attrs).get("id")

    def handle_data(self, data):
        if self._in:
            self.data[self._in] = self.data.get(self._in, "") + data


def _data(**kw) -> ReportData:
    manifest = {
        "run_id": "R1", "started_utc": "2026-11-22T00:00:00Z", "inputs": [{"path": "a.warc.gz"}],
        "timings": {"read_parse_s": 1.5, "tables_s": 2.0, "total_s": 4.0},
        "records": {"read": 12, "by_outcome": {"page": 10, "non_html": 2}, "accounted": True},
        "rows": {"records": 12, "pages": 10, "links": 40, "pagelets": 90},
        "stages": {"detect": {"run_id": "R2", "mode": "global", "rows": {"templates": 3, "template_pagelets": 20},
                              "timings": {"total_s": 3.0}},
                   "clean": {"run_id": "R3", "rows": {"clean_pages": 10}, "timings": {"total_s": 1.0}}},
    }
    evil = "</script><script>alert(1)</script>"
    data = ReportData(
        out="/tmp/out", manifest=manifest, has_templates=True, n_sites=2, generated_utc="now", gather_s=2.5,
        sites=[SiteRow("a.example", 7, 7, 2, 14, 700, 210, 0.3), SiteRow("<b>evil</b>.example", 3, 1, 1, 1, 30, 3, 0.1)],
        totals=SiteRow("", 10, 8, 3, 15, 730, 213, 0.24),
        pages_per_template=[(1, 1, 1), (2, 3, 0), (4, 7, 2)],
        top_templates=[{"template_id": "-42", "n_pages": 7, "n_sites": 1, "dom_path": "/html/body/nav[1]",
                        "sample_text": "Home About"}],
        density={1: (5, 40), 2: (3, 20), 12: (300, 1)},
        viewer_pages=[ViewerPage("https://a.example/", "a.example", evil, f"<html><body><p>{evil}</p></body></html>",
                                 9, 0.3, [{"ordinal": 0, "dom_path": "/html/body/nav[1]", "dom_label": "nav",
                                           "template_id": "-42", "n_tokens": 2, "text": "Home About"}])],
        viewer_templates={"-42": {"n_pages": 7, "sample_text": "Home About"}},
    )
    for k, v in kw.items():
        setattr(data, k, v)
    return data


def test_report_is_self_contained_and_escapes_crawled_text():
    html = render_report(_data())
    tags = _Tags()
    tags.feed(html)
    # nothing is loaded: no external script, stylesheet, image or frame source, and a CSP forbidding it
    assert not [t for t, a in tags.tags if t in ("script", "img", "iframe", "link") and (a.get("src") or a.get("href"))]
    assert f'content="{REPORT_CSP}"' in html and "default-src 'none'" in REPORT_CSP
    assert "@import" not in html and "url(" not in html
    # exactly the two scripts of the report: crawled "</script>" cannot open another
    assert [t for t, _ in tags.tags].count("script") == 2
    assert "<b>evil</b>" not in html and "&lt;b&gt;evil&lt;/b&gt;.example" in html
    payload = json.loads(tags.data["viewer-data"])
    assert payload["pages"][0]["title"] == "</script><script>alert(1)</script>"
    assert payload["pages"][0]["template_pagelets"][0]["template_id"] == "-42"  # a string: JS numbers lose 64-bit ids
    frame = next(a for t, a in tags.tags if t == "iframe")
    assert frame["sandbox"] == "allow-same-origin"  # scripts stay off inside the page
    for section in ("run", "sites", "templates", "density", "viewer", "viewer-status", "viewer-legend"):
        assert f'id="{section}"' in html


def test_report_shows_counts_sites_and_plots():
    html = render_report(_data())
    assert re.search(r"<td>page</td><td class=\"n\">10</td>", html)
    assert ">detect<" in html and "R2 (global)" in html
    # per-site table: pages, Table 2's share of pages with templates, token share
    assert "<td>a.example</td><td class=\"n\">7</td><td class=\"n\">7 (100.0%)</td>" in html
    assert "30.0%" in html  # a.example: 210 of 700 tokens
    assert "all sites (2)" in html
    assert html.count("<svg") == 4  # stage times, template share per site, pages per template, density
    # pages per template: power-of-two bins, the empty 2-3 bin drawn too (as nothing)
    assert ">1<" in html and ">2\u20133<" in html and ">4\u20137<" in html


def test_report_without_templates_or_pages_still_renders():
    html = render_report(_data(has_templates=False, sites=[], totals=None, density={}, viewer_pages=[],
                               pages_per_template=[], top_templates=[], manifest={}))
    assert "manifest.json was not found" in html and "detect has not run" in html
    assert json.loads(re.search(r'id="viewer-data">(.*?)</script>', html).group(1))["pages"] == []


def test_svg_plots_scale_bars_to_their_values():
    svg = svg_hbars([("a", 0.5), ("b", 1.0)], max_value=1.0)
    widths = [float(w) for w in re.findall(r'<rect x="\d+" y="[\d.]+" width="([\d.]+)"', svg)]
    assert len(widths) == 2 and abs(widths[1] - 2 * widths[0]) < 0.2
    hist = svg_histogram([("1", (10, 30)), ("2", (0, 0)), ("3", (5, 0))], [("t", "#f00"), ("c", "#0f0")])
    heights = [float(h) for h in re.findall(r'height="([\d.]+)" fill="#(?:f00|0f0)"><title>', hist)]
    assert len(heights) == 3 and abs(heights[1] - 3 * heights[0]) < 0.2  # 30 vs 10, empty bins drawn as nothing
    assert svg_hbars([]) == "" and svg_histogram([], []) == ""


def test_stage_rows_and_script_json():
    rows = stage_rows(_data().manifest)
    assert ("extract", "R1", "read + parse", 1.5) in rows and ("clean", "R3", "total", 1.0) in rows
    value = {"html": "<script>x</script><!-- \u2028", "n": 1}
    text = _script_json(value)
    assert "<" not in text and json.loads(text) == value
    # strict JSON, which JSON.parse reads: no NaN or Infinity
    text = _script_json({"pages": [{"template_token_fraction": float("nan")}, {"x": (float("inf"), 0.5)}]})
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"pages": [{"template_token_fraction": None}, {"x": [None, 0.5]}]}


def test_the_viewers_hash_finds_a_page_by_its_url_escaped_or_not(tmp_path):
    """report.html#page=URL: stored URLs hold & and %XX themselves; the viewer
    matched only the fully escaped form, and a stray % threw and left it empty."""
    import re
    import shutil
    import subprocess

    from templatemine.report import assets

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to run the viewer's script")
    script = next(v for v in vars(assets).values() if isinstance(v, str) and "function fromHash" in v)
    body = re.search(r"  function fromHash\(\) \{.*?\n  \}\n", script, re.S).group(0)
    harness = tmp_path / "hash.js"
    harness.write_text(
        'var pages = [{url: "https://ex.com/"}, {url: "https://ex.com/wiki/Caf%C3%A9?a=1&b=2"}];\n'
        "var location = {hash: ''};\n" + body + "\n"
        "for (var h of process.argv.slice(2)) { location.hash = h; console.log(JSON.stringify(fromHash())); }\n")
    hashes = ["#page=1", "#page=https%3A%2F%2Fex.com%2Fwiki%2FCaf%25C3%25A9%3Fa%3D1%26b%3D2",
              "#page=https://ex.com/wiki/Caf%C3%A9?a=1&b=2", "#page=https://ex.com/%E0", "#page=1&only", "#x"]
    done = subprocess.run([node, str(harness), *hashes], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "1", "-1", "1", "null"]


def _viewer_function(name: str) -> str:
    from templatemine.report import assets

    return re.search(r"  function " + name + r"\(.*?\n  \}\n", assets.VIEWER_JS, re.S).group(0)


# what the extractor's `" ".join(text.split())` drops (html/pagelets.py _clean)
_PY_WHITESPACE = {c for c in map(chr, range(0x110000)) if c.isspace()}


def test_the_viewers_text_runs_are_blank_where_the_extractors_are(tmp_path):
    """A text run counts toward text()[i] when its text is not blank. The viewer
    tested JS's trim(), which strips U+FEFF (Python keeps it as text) and keeps
    \\x1c-\\x1f and \\x85 (Python's split() drops them), so a page whose body began
    with a BOM or \\x1c had every later text() path of that element off by one
    (found in review)."""
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to run the viewer's script")
    harness = tmp_path / "runs.js"
    # an element's children: a lone text node, an element, then "Powered by us"; textRun(el, 1) is the
    # first non-blank run, by the viewer's test
    harness.write_text(
        _viewer_function("textRun") + "\n"
        "for (var lead of JSON.parse(process.argv[2])) {\n"
        "  var kids = [{nodeType: 3, data: lead}, {nodeType: 1}, {nodeType: 3, data: 'Powered by us'}];\n"
        "  for (var i = 0; i < kids.length; i++) kids[i].nextSibling = kids[i + 1] || null;\n"
        "  var run = textRun({firstChild: kids[0]}, 1);\n"
        "  console.log(run ? JSON.stringify(run[0].data) : 'null');\n"
        "}\n")
    leads = ["\ufeff", "\x1c", "\x1f", "\x85", "\u200b", " \u3000\xa0", "x"]
    done = subprocess.run([node, str(harness), json.dumps(leads)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in done.stdout.rstrip("\n").split("\n")]  # not splitlines: \x85
    parser = PageParser()
    want = []
    for lead in leads:
        page = (f"<html><body>{lead}<nav><ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li>"
                "<li><a href='/c'>C</a></li></ul></nav>Powered by us<main><h1>Title</h1><p>Body text with "
                "<a href='/d'>a link</a>.</p></main><div><p>second div</p></div></body></html>")
        paths = {p.dom_path: p.text for p in parser.parse("https://example.org/", page).pagelets}
        # the extractor's text()[1]: the lead when it is text to Python, else "Powered by us"
        want.append(lead if paths["/html/body/text()[1]"] != "Powered by us" else "Powered by us")
    assert want[:2] == ["\ufeff", "Powered by us"]
    assert got == want


def test_the_viewers_blank_test_is_pythons_whitespace():
    """The character class of the viewer's not-blank test is str.isspace()'s,
    which str.split() splits at: checked without node too."""
    body = _viewer_function("textRun")
    cls = re.search(r"/\[\^(.*?)\]/\.test\(text\)", body).group(1)
    blank = re.compile("[" + cls + "]")  # JS's \xNN and \uNNNN read the same in Python's re
    assert {c for c in map(chr, range(0x110000)) if blank.match(c)} == _PY_WHITESPACE


def test_the_run_section_names_records_counted_twice():
    """A manifest whose `accounted` is false says why: the records two rows name."""
    from templatemine.report.render import run_section

    data = _data()
    data.manifest["records"].update(accounted=False, counted_twice=[
        {"warc_file": "<b>a</b>.warc.gz", "warc_offset": 512, "rows": 2}])
    html = run_section(data)
    assert "accounted for: <b>NO</b>" in html
    assert "Counted twice (two rows name one record): <code>&lt;b&gt;a&lt;/b&gt;.warc.gz</code> at offset 512." in html
    assert "Counted twice" not in run_section(_data())
