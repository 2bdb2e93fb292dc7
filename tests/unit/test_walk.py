"""The compiled DOM walk (templatemine/pagelevel/_walk.pyx) gives the Python
walk's PageArrays bit for bit. Skipped when the extension is not built (or
disabled itself at import: a selectolax whose Lexbor layout differs)."""

import sys

import numpy as np
import pytest

from templatemine.pagelevel import features as F
from tests.warcgen import ARTICLE, blog_site, site_page, small_site, two_template_site

pytestmark = pytest.mark.skipif(
    F._compiled is None,
    reason=f"compiled DOM walk unavailable ({F.COMPILED_WALK_ERROR}); build it with "
           "`pip install -e .` (Cython + a C compiler) or `python setup.py build_ext --inplace`")


MENU = "<ul>" + "".join(f"<li><a href='/m{i}'>Menu item {i}</a></li>" for i in range(4)) + "</ul>"

CASES = {
    "nested inline and anchor text": (
        "<body><p>Some <b>bold <i>italic</i></b> and <a href='/x'>a <span>nested <em>link</em></span> text</a> "
        "<a>no href here</a> <a href=''>empty href</a> tail.</p><div><a href='/y'><div>block in a link</div>"
        "<p>para <a href='/z'>inner</a> in a link</p></a><area href='/map'><area nohref></div>"
        "<h2>Head<a href='/h'>ing</a>s</h2><li>loose <a href='/l'>item</a></li></body>"),
    "own text after child nodes": (
        "<body><div>Intro <b>bo</b>ld <p>para</p> more\u00a0words <p></p> <span>sp</span>an <p>x</p>\u3000"
        "<p>y</p>tail</div><ul><li>item <ul><li>sub</li></ul> after</li></ul></body>"),
    "text runs directly in split elements": (
        f"<body>lead run <b>bold run</b> {MENU} middle run <i>x</i> {MENU} <!-- c --> last run"
        f"<div>inner lead {MENU} inner tail <span>span text</span> {MENU}</div><section>{MENU}</section></body>"),
    "hidden elements": (
        "<body><p>shown</p><div hidden>hidden attribute</div><div style='display: none'>inline none</div>"
        "<div style='VISIBILITY:hidden'>invisible</div><div class='hidden'>class hidden</div>"
        "<div class='hidden md:block'>shown again</div><div class='d-none d-lg-flex'>also shown</div>"
        "<script>var x = 'script';</script><style>.x{}</style><noscript>noscript</noscript>"
        "<template><p>template</p></template><select><option>opt</option></select>"
        f"<div hidden='until-found'>until found</div><nav hidden>{MENU}</nav><p>after</p></body>"),
    "unknown and custom tags": (
        "<body><my-widget class='sidebar'>custom <b>element</b></my-widget><logo>Logo</logo>"
        "<byline id='by'>By someone</byline><story>A story tag</story><Nav>upper nav</Nav><text>text tag</text>"
        "<this-is-a-very-long-custom-element-name-over-sixty-four-characters-long-indeed>long</this-is-a-very-"
        "long-custom-element-name-over-sixty-four-characters-long-indeed><svg><text>svg text</text>"
        "<a href='/s'>svg a</a><a xlink:href='/x'>xlink</a><clipPath><p>x</p></clipPath><foreignObject><div>fo"
        "</div></foreignObject></svg><math><mi>m</mi><mtext>math text</mtext></math><center>old</center>"
        f"<x-menu>{MENU}</x-menu><menu><li>menu</li></menu><ad>advert</ad><app-root><div>app</div></app-root></body>"),
    "entities and non-ASCII text": (
        "<body><p>caf\u00e9 &amp; cr\u00e8me &lt;tag&gt; &nbsp;&nbsp; \u65e5\u672c\u8a9e\u3002 \u00bfQu\u00e9?</p>"
        "<p>\u00a0</p><p>\u3000\u2028\u2029\u200a</p><p>zero\u200bwidth \u201cquoted.\u201d em\u2014dash\u2026"
        " emoji \U0001F600! end.</p><p>a\u00a0b\u2003c. d\u3000e?</p><div>\x0b\x0c \x1c\x1d\x1f tab\tsep</div>"
        "<p>&#x1F600;&#128512; &copy; &euro; &#0; &#xD800; &hearts;</p><a href='/e'>\u00e9l\u00e8ve \u00e0"
        "\u00a0la page</a><p>" + "\u00e9" * 100 + " " + "long" * 30 + "</p></body>"),
    "empty body": "<html><head><title>t</title></head><body></body></html>",
    "whitespace body": "<html><body>\n  \u00a0 <div> </div>\n</body></html>",
    "no body": "<frameset><frame src='/f'></frameset>",
    "empty string": "",
    "attributes role id class": (
        "<body><div role='navigation'>role nav</div><div id='sidebar' class='widget  related'>side</div>"
        "<div ROLE='banner' role='dup'>upper role</div><div class=''>empty class</div><div id>empty id</div>"
        "<div class='main-content article__body'>content</div><p class='byline date'>meta</p>"
        "<section id='comments' class='disqus'>comments</section><div class='share-bar social'>share</div>"
        "<div class='\u00e9l\u00e8ve nav'>accent class</div><svg><g role='main'><text>g text</text></g></svg>"
        "<div data-role='nav' aria-role='footer'>not cues</div><footer class='site-footer'>foot</footer>"
        "<header role='banner' class='top'>head</header><aside>aside</aside></body>"),
    "deep nesting": "<body>" + "<div><span>" * 300 + "deep text" + "</span></div>" * 300 + "</body>",
    "tables and forms": (
        "<body><table><caption>cap</caption><tr><th>h</th><td>1 <a href='/1'>one</a></td></tr>"
        "<tr><td><table><tr><td>nested</td></tr></table></td></tr></table><form><fieldset><legend>l</legend>"
        "<textarea>ta</textarea><button>go</button><input value='v'></fieldset></form>"
        "<dl><dt>t</dt><dd>d</dd></dl><details><summary>s</summary>details</details><iframe>if</iframe></body>"),
    "a <wbr> with children in a split element": (  # svg/MathML content; found in review
        "<body><p>p</p><math><mi><a href=1>a</a><a href=2>b</a><a href=3>c</a></mi>x<wbr>hidden</wbr>y</math>"
        "<svg><g><a href=4>d</a><a href=5>e</a><a href=6>f</a></g>x<wbr><g><a href=7>g</a><a href=8>h</a>"
        "<a href=9>i</a></g><text>t</text></wbr>y</svg></body>"),
    "seams between text nodes": (
        "<body><p><span class=dropcap>T</span>he un<em>believ</em>able <a href='/h'>Haiku</a>, x<b>y</b><i>z</i>"
        " a<br>b c<wbr>d e&nbsp;<span>f</span>g h<img src=x>i j<!-- c -->k <a href='/1'>a</a>b<a href='/2'>c</a>"
        "é<b>è</b>à. l<b> </b>m n<b> </b>o<div>p</div>q r<select><option>s</option></select>t"
        "</p><div>lead<div>block</div>tail <b>in<i>ner</i></b>most\xff<span>\xfe</span>x</div></body>"),
}

BAD_UTF8 = {  # bytes: Lexbor keeps bad UTF-8, selectolax decodes it with U+FFFD
    "bad bytes in text": b"<body><div>x \xff\xfe y <a href=1>bad \xe2\x82 anchor</a></div><p>\xed\xa0\x80</p></body>",
    "bad bytes in a pagelet candidate": (
        b"<body><div><span>\xff</span><ul><li><a href=1>a</a><a href=2>b</a><a href=3>c\xc0</a></li></ul>"
        b"</div><p class='\xffside nav'>\xf4\x90\x80\x80 \xc3</p></body>"),
    "bad bytes across seams": b"<body><p>a\xff<b>b</b>c <a href=1>d\xe2</a>e f<i>g</i><b>h\xc0</b>i</p></body>",
    # a white-space text node that is not ASCII between a bad-UTF-8 part and the next (found in review)
    "bad bytes and a wide space": b"<body><p>a\xff<b>&nbsp;</b>c d<i>\xe3\x80\x80</i>e\xfe</p></body>",
    # own text after child nodes, where a word runs on across a seam: `text_at` counts the Python way
    "bad bytes around child nodes": (b"<body><div>a\xff b<i>c</i><p>para</p> d\xfe<b>e</b> f <p>x</p>&nbsp;"
                                     b"<p>y</p>g</div></body>"),
}


def _pages():
    pages = [(name, html) for name, html in CASES.items()] + list(BAD_UTF8.items())
    pages.append(("article", ARTICLE))
    pages.append(("site_page", site_page("T", "<p>Body text. More body text!</p>", [("/a", "A"), ("/b", "B")])))
    for gen in (small_site, blog_site, two_template_site):
        pages += [(f"{gen.__name__}/{i}", p["html"]) for i, p in enumerate(gen())]
    return pages


def python_walk(html, monkeypatch, **kw):
    with monkeypatch.context() as m:
        m.setattr(F, "_compiled", None)
        return F.page_nodes(html, arrays=True, **kw)


def assert_same(got, want):
    np.testing.assert_array_equal(got.parent, want.parent)
    np.testing.assert_array_equal(got.features, want.features)
    np.testing.assert_array_equal(got.n_tokens, want.n_tokens)
    np.testing.assert_array_equal(got.keep, want.keep)
    np.testing.assert_array_equal(got.unlikely, want.unlikely)
    np.testing.assert_array_equal(got.article, want.article)
    np.testing.assert_array_equal(got.at, want.at)
    assert got.texts == want.texts
    assert F._same_arrays(got, want)  # bit for bit, dtypes included


@pytest.mark.parametrize("name,html", _pages(), ids=[n for n, _ in _pages()])
def test_compiled_equals_python(name, html, monkeypatch):
    want = python_walk(html, monkeypatch)
    assert_same(F.page_nodes(html, arrays=True), want)  # `_walk.page`: pagelets and walk in C
    assert_same(F.page_nodes(html, arrays=True, c_pagelets=False), want)  # `_walk.walk`: html/pagelets.py's pagelets


@pytest.mark.parametrize("name,html", _pages(), ids=[n for n, _ in _pages()])
def test_compiled_nodes_rows_equal_python(name, html, monkeypatch):
    """The NODES rows extract writes (labels, pagelets, own pagelets, every
    field) from the compiled walk equal the Python walk's."""
    with monkeypatch.context() as m:
        m.setattr(F, "_compiled", None)
        want = F.page_nodes(html)
    got = F.page_nodes(html)
    assert got == want
    for g, w in zip(got, want):  # the same Python types too (what Spark's schema check sees)
        assert [type(v) for v in g] == [type(v) for v in w]


def test_compiled_rows_carry_labels_and_pagelets():
    """What only the rows hold, spelled out on one page: labels with id and
    class as selectolax reads them, the pagelet carried down, text runs."""
    html = ("<body><div id=' top ' class='a  b'><p class=''>para</p></div>" + CASES["text runs directly in split "
            "elements"][6:-7] + "<div id=''>no id</div></body>")
    rows = {r.text: r for r in F.page_nodes(html) if r.text}
    top = F.page_nodes(html)[1]
    assert (top.dom_label, top.pagelet_ordinal, top.own_pagelets) == ("div#top.a.b", 0, [])  # no own text
    assert (rows["para"].dom_label, rows["para"].pagelet_ordinal, rows["para"].own_pagelets) == ("p", 0, [0])
    # split elements: the body and a div, above the pagelets, own the text runs directly inside them
    assert (rows["lead run middle run last run"].pagelet_ordinal,
            rows["lead run middle run last run"].own_pagelets) == (-1, [1, 4, 7])
    assert (rows["inner lead inner tail"].dom_label, rows["inner lead inner tail"].pagelet_ordinal,
            rows["inner lead inner tail"].own_pagelets) == ("div", -1, [8, 10])
    assert rows["no id"].dom_label == "div"  # an empty id is no id


@pytest.mark.parametrize("k", [1, 2, 5])
def test_other_k(k, monkeypatch):
    html = CASES["text runs directly in split elements"]
    assert_same(F.page_nodes(html, k=k, arrays=True), python_walk(html, monkeypatch, k=k))


@pytest.mark.parametrize("width", [1, 8, 80, 1000])
def test_other_widths(width, monkeypatch):
    html = CASES["entities and non-ASCII text"]
    assert_same(F.page_nodes(html, width=width, arrays=True), python_walk(html, monkeypatch, width=width))


def test_comparison_sees_differences(monkeypatch):
    """The equality used above is not vacuous."""
    a = F.page_nodes(ARTICLE, arrays=True)
    b = F.page_nodes(ARTICLE.replace("Privacy", "Privacy policy"), arrays=True)
    assert not F._same_arrays(a, b)
    c = a._replace(features=a.features + np.where(a.features == 0, 5e-324, 0.0))
    assert not F._same_arrays(a, c)


@pytest.mark.parametrize("text", [
    "plain words. And more!", "  lead and trail  ", "\u00a0nbsp\u00a0inside\u00a0", "\u3000ideographic\u3000space",
    "\x1c\x1d\x1e\x1f unit separators", "a\u2028b\u2029c\u0085d", "\u200bzero width is not space",
    "\U0001F600 astral! \U0001F600.", "?", "end.", "x" * 200, "\u00e9" * 79 + " " + "\u00e9",
])
def test_words_match_python(text):
    """The walk's own word splitting and wrapping (report.density.wrap)."""
    from templatemine.pagelevel import _walk
    from templatemine.report.density import wrap

    for width in (1, 10, 80):
        got = _walk._words(text.encode(), width)
        norm = " ".join(text.split())
        w = wrap(norm, width)
        sentences = len(F._SENTENCE_END.findall(norm))
        assert got == (len(text.split()), norm, w.tokens, w.lines, w.last_line_tokens, sentences)
    assert _walk._words(b"bad \xff byte") is None


def test_whitespace_table_covers_python():
    """The walk checks str.isspace() in a table up to U+3000: nothing above is whitespace."""
    assert not any(chr(c).isspace() for c in range(0x3001, sys.maxunicode + 1))


def test_fallback_when_not_importable(monkeypatch):
    """No extension: the Python walk, same output."""
    with monkeypatch.context() as m:
        m.setattr(F, "_compiled", None)
        rows = F.page_nodes(ARTICLE)
        arrays = F.page_nodes(ARTICLE, arrays=True)
    assert [r.features for r in rows] == arrays.features.tolist()


def test_setup_refuses_what_selectolax_reads_otherwise(monkeypatch):
    """The import-time check against selectolax catches a walk that reads
    something else (here: attribute values where names belong) and leaves the
    module unusable; features.py then keeps the Python walk."""
    from templatemine.pagelevel import _walk

    names = F._walk_names()
    real = _walk._lexbor_functions()
    try:
        monkeypatch.setattr(_walk, "_lexbor_functions", lambda: [real[0], real[2], real[2]])
        with pytest.raises(RuntimeError, match="attributes"):
            _walk.setup(names, F._VALUE_BITS, F._value_bits)
        assert not _walk.READY
        with pytest.raises(RuntimeError, match="setup"):
            _walk.page(0, [], 3, 80)
        walk, why = F._setup_compiled()
        assert walk is None and "attributes" in why
    finally:
        monkeypatch.undo()
        _walk.setup(names, F._VALUE_BITS, F._value_bits)
    assert _walk.READY
    assert F._setup_compiled() == (_walk, "")
    assert F._compiled is _walk


def test_own_text_seams_in_both_walks(monkeypatch):
    """A node's own text joins its text nodes as html/pagelets.element_text
    joins a pagelet's (no space across an inline element's edge; a space across
    a block, a child node, <br>, white space, or where two inline elements
    meet), in the compiled walk as in Python; a word joined across an <a>'s
    edge counts as anchor text once (link density at most 1)."""
    html = ("<body><p><span class=dropcap>T</span>he un<em>believ</em>able <a href='/h'>Haiku</a>, "
            "x<b>y</b><i>z</i> a<br>b c<wbr>d <a href='/1'>a</a>b<a href='/2'>c</a> Hel<span></span>lo</p>"
            "<div>lead<div>block</div>tail <b>in<i>ner</i></b>most</div></body>")
    want = ["", "The unbelievable Haiku, xy z a b cd abc Hel lo", "lead tail innermost", "block"]
    for arrays in (python_walk(html, monkeypatch), F.page_nodes(html, arrays=True)):
        assert arrays.texts == want
        link_density = arrays.features[:, F.FEATURES.index("link_density")]
        assert (link_density <= 1.0).all()
    if F._compiled is not None:
        rows = F.page_nodes(html)
        assert [r.text for r in rows] == want
