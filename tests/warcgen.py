"""Small WARC files written by the tests themselves (no network, nothing outside the repository)."""

from __future__ import annotations

import gzip
import io
import os
from datetime import datetime, timezone

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples")


# a news-like page: header menu, article, related list, footer (the page-level tests' page)
ARTICLE = ("<html><body><header class='masthead'><a href='/'>Home</a><a href='/a'>A</a><a href='/b'>B</a></header>"
           "<div id='main'>Lead <b>text</b> inside the container."
           "<article class='story'><h1>Title here</h1><p>" + "A long sentence of article text goes on. " * 12 +
           "</p><p>Second paragraph, also long enough to be read. " * 4 + "</p></article>"
           "<ul class='related'><li><a href='/r1'>Related one</a></li><li><a href='/r2'>Related two</a></li>"
           "<li><a href='/r3'>Related three</a></li></ul></div>"
           "<footer><p>Copyright 2026</p><a href='/p'>Privacy</a> <a href='/t'>Terms</a> <a href='/c'>Contact</a>"
           "</footer></body></html>")


def sample(name: str) -> str:
    return os.path.join(SAMPLES, name)


def site_page(title: str, body: str, nav: list[tuple[str, str]], footer: str = "Copyright 2026 Example Inc.") -> str:
    items = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in nav)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>.x{{color:red}}</style><script>var t = 'not text';</script></head><body>"
        f"<nav id='menu'><ul>{items}</ul></nav>"
        f"<main><h1>{title}</h1>{body}</main>"
        f"<footer class='site-footer'><p>{footer}</p><a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a>"
        f" <a href='/contact'>Contact</a></footer></body></html>"
    )


def response(writer: WARCWriter, url: str, html: bytes | str, content_type: str = "text/html; charset=utf-8",
             status: str = "200 OK", date: str = "2026-11-01T00:00:00Z", extra_headers=()):
    payload = html.encode("utf-8") if isinstance(html, str) else html
    headers = StatusAndHeaders(status, [("Content-Type", content_type), *extra_headers], protocol="HTTP/1.1")
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(payload), http_headers=headers,
                                       warc_headers_dict={"WARC-Date": date})
    writer.write_record(record)


def write_warc(path: str, pages: list[dict], gzip_members: bool = True) -> str:
    """pages: dicts with url, html and optional content_type, status, date, location."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=gzip_members)
        for p in pages:
            response(writer, p["url"], p["html"], p.get("content_type", "text/html; charset=utf-8"),
                     p.get("status", "200 OK"), p.get("date", "2026-11-01T00:00:00Z"),
                     [("Location", p["location"])] if "location" in p else ())
    return path


def small_site(host: str = "https://www.example.org") -> list[dict]:
    """Four linked pages sharing a template; the home page captured twice; a mirror."""
    nav = [("/", "Home"), ("/docs/", "Docs"), ("/blog/index.html", "Blog"), ("/about.html", "About")]
    text = {
        "/": "<p>Welcome to the example project. It mines templates from archives.</p>",
        "/docs/": "<p>Install it with pip. Then run the extract command on your WARC files.</p>"
                  "<p>See <a href='../about.html'>about</a> for the authors.</p>",
        "/blog/": "<p>Release notes for version 1.2: faster shingles and safer readers.</p>",
        "/about.html": "<p>Written by a small team of data engineers who clean crawls.</p>",
    }
    pages = [{"url": host + path, "html": site_page(path.strip("/") or "home", body, nav)}
             for path, body in text.items()]
    # the home page again, captured later with a changed body: the newer one wins
    pages.append({"url": host + "/", "date": "2026-11-02T00:00:00Z",
                  "html": site_page("home", "<p>Welcome back: this is the newer capture of the home page.</p>", nav)})
    # a mirror of /docs/ on another host: the same content, so a near-duplicate
    pages.append({"url": "https://mirror.example.net/docs/", "html": pages[1]["html"]})
    return pages


def gzip_member(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz:
        gz.write(data)
    return buf.getvalue()


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def moved_site(host: str = "https://docs.gamma.org") -> tuple[list[dict], list[dict]]:
    """Four pages whose menu links the URLs they had before they moved, and
    the responses those URLs give: 301s with a relative Location, to the http
    twin of a page, and through a second redirect; one URL whose newest
    response is a 404; a loop; a chain too long; a 301 to another site; a
    crawled page that also answered a 301 (later); and a page linking that
    page, the loop, the long chain and the other site's redirect."""
    nav = [(f"/old/p{i}", f"Chapter {i}") for i in range(4)]
    pages = [{"url": f"{host}/p{i}.html", "html": site_page(
        f"geology {i}", f"<p>Page {i} about geology: geology facts number {'x' * (i + 1)}.</p>", nav)}
        for i in range(4)]
    moved = "301 Moved Permanently"
    answers = [
        {"url": f"{host}/old/p0", "html": "", "status": moved, "location": "/p0.html"},
        {"url": f"{host}/old/p1", "html": "", "status": moved, "location": f"http://{host.split('://')[1]}/p1.html"},
        {"url": f"{host}/old/p2", "html": "", "status": moved, "location": "/mid/p2"},
        {"url": f"{host}/mid/p2", "html": "", "status": "302 Found", "location": f"{host}/p2.html"},
        {"url": f"{host}/old/p3", "html": "", "status": moved, "location": "/p3.html"},
        {"url": f"{host}/old/p3", "html": "", "status": "404 Not Found", "date": "2026-11-02T00:00:00Z"},
        {"url": f"{host}/loop/a", "html": "", "status": moved, "location": "/loop/b"},
        {"url": f"{host}/loop/b", "html": "", "status": moved, "location": "/loop/a"},
        {"url": f"{host}/p0.html", "html": "", "status": moved, "location": "/p1.html", "date": "2026-11-03T00:00:00Z"},
        # 5 redirects to the http twin of a page, which redirects once more: too long a chain
        *[{"url": f"{host}/long/{i}", "html": "", "status": moved, "location": f"/long/{i + 1}"} for i in range(1, 5)],
        {"url": f"{host}/long/5", "html": "", "status": moved, "location": f"http://{host.split('://')[1]}/p3.html"},
        {"url": f"http://{host.split('://')[1]}/p3.html", "html": "", "status": moved, "location": f"{host}/p2.html"},
        # to a crawled page of another site: not followed (the link would leave its site)
        {"url": f"{host}/away", "html": "", "status": moved, "location": "https://www.other.org/x.html"},
        {"url": "https://www.other.org/x.html", "html": "<p>another site's page</p>"},
        {"url": f"{host}/extra.html", "html": "<p>see <a href='/p0.html'>the first</a>, <a href='/loop/a'>loop</a>, "
                                             "<a href='/long/1'>long</a>, <a href='/away'>away</a></p>"},
    ]
    return pages, answers


def blog_site(host: str = "https://blog.example.org", n_posts: int = 8) -> list[dict]:
    """A blog: every page has the same nav and footer; the index and a tag page
    both list the summary of post 1 (at different positions) and link each other."""
    nav = [("/", "Home"), ("/tags/python/", "Python"), ("/about/", "About")]
    # three links per summary, so that each is a pagelet of its own (Definition 2, k = 3)
    summary = ("<article><h2><a href='/posts/1/'>Post one</a></h2><p>A summary of the first post about "
               "parsing web archives with streaming readers.</p><a href='/posts/1/'>Read more</a> "
               "<a href='/tags/python/'>python</a></article>")
    other = ("<article><h2><a href='/posts/2/'>Post two</a></h2><p>Another summary, of the second post.</p>"
             "<a href='/posts/2/'>Read more</a> <a href='/tags/python/'>python</a></article>")
    pages = [
        {"url": host + "/", "html": site_page("Blog", f"<ul><li>{summary}</li><li>{other}</li></ul>", nav)},
        {"url": host + "/tags/python/", "html": site_page("Python", f"<ul><li>{other}</li><li>{summary}</li></ul>"
                                                            "<p><a href='/'>all posts</a></p>", nav)},
        {"url": host + "/about/", "html": site_page("About", "<p>About this blog and its author.</p>", nav)},
    ]
    for i in range(1, n_posts + 1):
        body = f"<p>Full text of post number {['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'][i - 1]}" \
               f" with its own words {'lorem ipsum ' * i}.</p>"
        pages.append({"url": f"{host}/posts/{i}/", "html": site_page(f"Post {i}", body, nav)})
    return pages


def two_template_site(host: str = "https://two.example.org", n_sections: int = 5, n_posts: int = 6) -> list[dict]:
    """A site with two templates (Alarte et al.'s case of a site that is not one
    template): section pages with a top menu, a sidebar and a footer, all linked
    by the menu; and posts in another layout whose "series" box links every
    post to every other. Each page has its own content text."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    sections = [("/", "Home")] + [(f"/section/{w}/", w.title()) for w in words[1:n_sections]]
    menu = "".join(f"<li class='item'><a href='{href}'>{text}</a></li>" for href, text in sections)
    posts = [(f"/post/{i}/", f"Story {words[i]}") for i in range(n_posts)]

    def section_page(i: int, title: str) -> str:
        content = " ".join(f"Section {title} paragraph {k} talks about {words[(i + k) % len(words)]} and "
                           f"{words[(i + 2 * k) % len(words)]} in depth." for k in range(4))
        return (f"<html><head><title>{title}</title></head><body>"
                f"<div id='top'><ul class='menu'>{menu}</ul></div>"
                f"<div id='wrap'><div id='side'><h3>Archive</h3><p>Older entries are kept in the archive pages "
                f"of this site</p></div><div id='content'><h1>{title}</h1><p>{content}</p>"
                f"<p><a href='{posts[i % n_posts][0]}'>A story</a></p></div></div>"
                f"<div id='foot'><p>Section footer with contact details and licence</p></div></body></html>")

    series = "".join(f"<li><a href='{href}'>{text}</a></li>" for href, text in posts)

    def post_page(i: int, title: str) -> str:
        content = " ".join(f"{title} sentence {k} on {words[(3 * i + k) % len(words)]} for the readers."
                           for k in range(5))
        return (f"<html><head><title>{title}</title></head><body>"
                f"<header class='bar'><a href='/'>Back to home</a> <span>Reading mode on</span></header>"
                f"<article><h2>{title}</h2><p>{content}</p></article>"
                f"<aside class='series'><h4>In this series</h4><ol>{series}</ol></aside>"
                f"<footer class='post-foot'><p>Share this story with friends and colleagues</p></footer>"
                f"</body></html>")

    return ([{"url": host + href, "html": section_page(i, text)} for i, (href, text) in enumerate(sections)]
            + [{"url": host + href, "html": post_page(i, text)} for i, (href, text) in enumerate(posts)])
