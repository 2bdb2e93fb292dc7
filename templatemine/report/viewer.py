"""Page HTML made safe and inert for the report's page viewer.

The viewer shows a crawled page in a sandboxed iframe (srcdoc, no scripts) and
shades its template pagelets by their `dom_path`, as Alarte et al.'s tool shows a
page's template in the browser (section 5). The paths were computed by
html/page.py on Lexbor's tree *after* removing script, style, noscript and
template elements, so the same elements are removed here, with the same
parser, before the HTML is serialised: the browser then re-parses a tree whose
element children (and the text runs between them) are those the paths count.
Removing whole elements never shifts `tag[i]` indices of other tags, which are
counted per tag.

Inert means the report opens offline and never reaches the network: a
Content-Security-Policy allowing nothing but inline styles and data: images is
put first in <head>; <link>, <base> and <meta http-equiv> (refresh) lose all
their attributes, since those fetch or navigate. The elements themselves stay:
the paths were computed with them in place, and an element, even an empty one,
ends a text run, so deleting `<link>` in "Banner <link> continues" merged two
runs and the viewer shaded the wrong text (found in review). Scripts are
stripped as well as disabled by the sandbox.
"""

from __future__ import annotations

from templatemine.html.nesting import parse as parse_html
from templatemine.html.pagelets import strip_invisible

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
_INERT_SELECTORS = ("link", "base", "meta[http-equiv]")


def viewer_html(html: str) -> str:
    """The page as the viewer embeds it: invisible content out, no attribute
    that loads or navigates, a CSP first in <head>."""
    tree = parse_html(html)[0]
    strip_invisible(tree)
    for selector in _INERT_SELECTORS:
        for node in tree.css(selector):
            # keep the element (it parts text runs as when the paths were computed), drop what loads
            for name in list(node.attributes):
                del node.attrs[name]
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    # put in the tree, not after the first "<head" of the serialised text: that
    # could be inside a comment before <html>, which left the policy commented out
    # (found in review)
    head = tree.head
    if head is None:
        return meta + (tree.html or "")
    node = type(tree)(meta).head.child
    if head.child is not None:
        head.child.insert_before(node)
    else:
        head.insert_child(node)
    return tree.html or ""
