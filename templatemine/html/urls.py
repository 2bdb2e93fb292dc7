"""URL normalisation, link resolution, page keys, host and site.

A crawler sees one URL per page; links written by authors use many spellings of
it. Links between pages only join (LINKS.dst_page_key = PAGES.page_key) if both
sides are normalised the same way, so every URL goes through `normalize_url`.

What is normalised (and why):
- scheme and host lower-cased, trailing dot of the host dropped (DNS-equal);
- a host beyond ASCII in its IDNA form as browsers write it (UTS #46, not
  transitional: `faß.de` is `xn--fa-hia.de`), an IPv6 literal compressed;
- a user or password percent-encoded, an empty one left out;
- default port dropped (`:80` for http, `:443` for https);
- fragment dropped (same document);
- empty path becomes `/`; dot segments removed (RFC 3986 5.2.4);
- a final `index.html` / `index.htm` segment is dropped, so `/dir/index.html`
  and `/dir/` are one page, as a crawler that fetched `/dir/` sees it (static
  site generators link the file, servers answer the directory);
- spaces and other bytes invalid in URLs are percent-encoded (as warcio does for
  WARC-Target-URI);
- a backslash before the query is a `/` (`..\\up.html`, `http:\\\\host\\x`), as
  the WHATWG URL Standard reads it for http(s) and every browser follows; what
  the slashes then make is read as urllib reads it, so three or more in a row
  (`\\\\\\host`, `///host`) stay on the page's host, where WHATWG skips them
  all and takes `host` as the host.
The query string is kept as is: parameter order can change what a server returns.
No URL (None) for a host holding a character no host may hold, before or after
IDNA (a control, a space, `<`, a full-width bracket), or for a bracketed host
that is not an IPv6 literal with at most a port after it.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

import idna

from templatemine.ids import hash64

_DEFAULT_PORTS = {"http": 80, "https": 443}
_INDEX_FILES = ("index.html", "index.htm")
# characters allowed unescaped in a URL (RFC 3986 reserved + unreserved + '%')
_SAFE = "!#$%&'()*+,/:;=?@[]~-._"
_USERINFO_SAFE = "!$%&'()*+,;=~-._"  # (WHATWG's userinfo set encodes ';' and '=' too; kept here as written)
_WS = re.compile(r"[\t\n\r]")
_BRACKETED_HOST = re.compile(r"\[[^\]]*\](?::[0-9]*)?")  # an IPv6 literal's brackets, then a port at most
# no host holds these: WHATWG's forbidden host code points (C0 controls, space, # / : < > ? @ [ \ ] ^ |,
# DEL) and " ` { }, which this module refused in a host before ('%' is kept: a host written so stays one key)
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20\"#/:<>?@\[\\\]^`{|}\x7f]")
_HTTP_PREFIX = re.compile(r"https?:", re.IGNORECASE)


def _backslashes(url: str, http: bool) -> str:
    """`url` with each backslash before its query or fragment read as `/`, the
    WHATWG URL Standard's rule for special schemes ("if c is U+005C (\\),
    validation error", then treated as "/" in the authority and path states);
    `http`: `url` is relative to an http(s) base, so it applies unless `url`
    names another scheme."""
    end = len(url)
    for stop in "?#":
        i = url.find(stop)
        if i != -1:
            end = min(end, i)
    head = url[:end]
    if "\\" not in head:
        return url
    scheme = _SCHEME.match(head)
    if scheme and not _HTTP_PREFIX.fullmatch(scheme.group()) or not scheme and not http:
        return url
    return head.replace("\\", "/") + url[end:]


def _remove_dot_segments(path: str) -> str:
    if "." not in path:
        return path
    out: list[str] = []
    segments = path.split("/")
    for i, seg in enumerate(segments):
        if seg == "..":
            if len(out) > 1:
                out.pop()
            if i == len(segments) - 1:
                out.append("")
        elif seg == ".":
            if i == len(segments) - 1:
                out.append("")
        else:
            out.append(seg)
    result = "/".join(out)
    return result if result.startswith("/") else "/" + result


def normalize_url(url: str, strip_index: bool = True) -> str | None:
    """Normalised absolute http(s) URL, or None if `url` is not one."""
    if not url:
        return None
    url = _WS.sub("", url.strip())
    if "\\" in url:
        url = _backslashes(url, http=False)
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = parts.hostname or ""
        # a bracketed host must be an IPv6 literal (a zone id allowed: IPv6Address raises ValueError
        # otherwise); urlsplit checks the first [...] of the netloc, which may be in the user
        # ('[::1]@[evil.example]' came out as a link to evil.example; found in review)
        bracketed = parts.netloc.rpartition("@")[2]
        ipv6 = bracketed.startswith("[")
        if ipv6:  # nothing but a port after it (urllib dropped '[::1]evil.example' to [::1]), written
            # compressed as browsers write it ([::0001] and [::1] one host); a seventh review
            if not _BRACKETED_HOST.fullmatch(bracketed):
                return None
            host = str(ipaddress.IPv6Address(host))
        elif "[" in bracketed or "]" in bracketed:
            return None
        else:
            host = host.rstrip(".")
        if host and not host.isascii():  # www.bücher.de is www.xn--bcher-kva.de, as crawlers record it (IDNA)
            host, ipv6 = _ascii_host(host).rstrip("."), False  # (a full-width dot is one after it)
        # checked after IDNA, one set for every host: full-width brackets, '<', a space or
        # a one-dot leader became a host that url_host could not read (found in review)
        if not host or _FORBIDDEN_HOST.search(host.replace(":", "") if ipv6 else host):
            return None
        port = parts.port  # raises ValueError on a bad port
    except ValueError:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    if parts.username or parts.password:  # (an empty user or password is left out, as browsers write it)
        try:  # percent-encoded as browsers write them (a review found non-ASCII kept); a lone surrogate: no URL
            user, password = (quote(part or "", safe=_USERINFO_SAFE) for part in (parts.username, parts.password))
        except UnicodeEncodeError:
            return None
        netloc = f"{user}{':' + password if password else ''}@{netloc}"
    try:
        path = _remove_dot_segments(quote(parts.path, safe=_SAFE)) or "/"
        query = quote(parts.query, safe=_SAFE)
    except UnicodeEncodeError:  # a lone surrogate: no URL (found in review: it raised)
        return None
    if strip_index:
        head, _, last = path.rpartition("/")
        if last.lower() in _INDEX_FILES:
            path = head + "/"
    return urlunsplit((scheme, netloc, path, query, ""))


def _ascii_host(host: str) -> str:
    """A non-ASCII host's ASCII form as browsers write it (UTS #46, not
    transitional: faß.de is xn--fa-hia.de, where Python's IDNA 2003 codec made
    it fass.de, another registered domain; found in review), or the codec's
    where that refuses the host (an underscore, an emoji); raises ValueError
    (UnicodeError) when neither takes it."""
    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except idna.IDNAError:
        return host.encode("idna").decode("ascii")


def resolve_link(base_url: str, href: str, strip_index: bool = True) -> str | None:
    """Absolute normalised URL of `href` written on a page whose base is `base_url`."""
    href = href.strip()
    if not href or href.startswith("#"):
        return None
    lowered = href[:11].lower()
    if lowered.startswith(("javascript:", "mailto:", "tel:", "data:")):
        return None
    if "\\" in href:
        href = _backslashes(href, http=True)
    try:
        absolute = urljoin(base_url, href)
    except ValueError:
        return None
    return normalize_url(absolute, strip_index)


def page_key(normalized_url: str) -> int:
    """The page's id: 64-bit hash of its normalised URL (see `templatemine.ids`)."""
    return hash64(normalized_url)


def scheme_twin(normalized_url: str) -> str | None:
    """The same URL under the other web scheme (`http://h/p` for `https://h/p`
    and back), or None where the URL names a port of its own (another port is
    another server; a default port is never written, `normalize_url`).

    Crawlers file a page under one scheme and authors link either: a site that
    moved to https keeps old `http://` links in its templates, a mirror keeps
    its https ones. SURT keys, which Common Crawl's index sorts by, leave the
    scheme out for this reason; `tables/targets.py` joins such a link to the
    crawled twin."""
    scheme, sep, rest = normalized_url.partition("://")
    if not sep or scheme not in _DEFAULT_PORTS:
        return None
    try:
        if urlsplit(normalized_url).port is not None:
            return None
    except ValueError:
        return None
    return f"{'https' if scheme == 'http' else 'http'}://{rest}"


def url_host(normalized_url: str) -> str:
    return urlsplit(normalized_url).hostname or ""


@lru_cache(maxsize=1)
def _psl():
    # publicsuffixlist bundles the list in its wheel; constructing it reads that
    # file and never goes to the network.
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The site of a host: its registered domain under the Public Suffix List
    (private suffixes included, so `alice.github.io` is a site of its own).
    IP addresses, single-label hosts and bare suffixes are their own site."""
    host = host.strip("[]").lower()
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    return _psl().privatesuffix(host) or host


_PLAIN = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*")  # needs no percent-quoting
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?#\\\s]")  # a scheme and a host
_AUTHORITY = re.compile(r"//[^/?#\\\s]")


class LinkResolver:
    """`resolve_link` + page key + site, fast and memoised per worker.

    Template links repeat on every page of a site, so most resolutions are
    cache hits. Keys are chosen so that equal answers share an entry: an
    absolute href is resolved once whatever the page, a root-relative one once
    per origin, a relative one once per base directory (the whole base for
    empty or query-only references; what urllib reads its own way, a `;`, an
    empty segment, a backslash or a scheme, goes to `resolve_link` itself).
    Relative references are resolved here without urllib (RFC 3986 5.2 on an
    already normalised base); a unit test checks the result equals
    `resolve_link`. Memory is bounded by `max_entries` (the cache is dropped
    when full)."""

    def __init__(self, strip_index: bool = True, max_entries: int = 200_000):
        self.strip_index = strip_index
        self.max_entries = max_entries
        self._cache: dict[tuple[str, str], tuple[str, int, str] | None] = {}

    def resolve(self, base: str, base_dir: str, href: str) -> tuple[str, int, str] | None:
        """(normalised URL, page_key, site) of `href` on a page with normalised
        base URL `base` (`base_dir`: `base_directory(base)`), or None if it is
        not an http(s) link."""
        href = href.strip()
        # backslashes first: the key depends on the slashes they make (two make "//");
        # keyed as written, one page's answer served its neighbours (found in review)
        if "\\" in href:
            href = _backslashes(href, http=True)
        if not href or href[0] in "?#" or ";" in href:  # urllib reads ";" against the whole base
            key = (base, href)
        elif href[:2] == "//":  # the base's scheme, unless it names no host ("//", "///x": the base's too)
            key = (base[: base.find(":")], href) if _AUTHORITY.match(href) else (base, href)
        elif href[0] == "/":
            key = (base_dir[: base_dir.find("/", base_dir.find("//") + 2)], href)
        elif _SCHEME.match(href):
            # base-free only with a host: "http://", "http:/about", "http:x.html" resolve against the base
            key = ("", href) if _ABSOLUTE.match(href) else (base, href)
        else:
            key = (base_dir, href)
        hit = self._cache.get(key, False)
        if hit is not False:
            return hit
        url = self._resolve(base, base_dir, href)
        value = None if url is None else (url, page_key(url), registered_domain(url_host(url)))
        if len(self._cache) >= self.max_entries:
            self._cache.clear()
        self._cache[key] = value
        return value

    def _resolve(self, base: str, base_dir: str, href: str) -> str | None:
        # the general (slow) path also for what urllib reads its own way: an empty
        # segment ("a//b", a base "//dir/") or a ";" (its "params"); the fast path
        # gave RFC 3986's answer there, so one href resolved two ways by its other
        # characters (found in review: 2,151 of a fuzz's hrefs)
        if not href or href[0] == "#" or href[:2] == "//" or _SCHEME.match(href) or "\\" in href \
                or "//" in href or ";" in href or "//" in base_dir[base_dir.find("//") + 2:] \
                or not _PLAIN.fullmatch(href.split("#", 1)[0]):
            return resolve_link(base, href, self.strip_index)  # the general (slow) path
        href = href.split("#", 1)[0]
        path, sep, query = href.partition("?")
        if sep and not query:  # "x?": urllib keeps the base's query; stay with it
            return resolve_link(base, href, self.strip_index)
        origin_end = base.find("/", base.find("//") + 2)
        if not path:  # query-only: the base's path with a new query
            path = base[origin_end:].split("?", 1)[0]
        elif path[0] == "/":
            path = _remove_dot_segments(path)
        else:
            path = _remove_dot_segments(base_dir[origin_end:] + path)
        if self.strip_index:
            head, _, last = path.rpartition("/")
            if last.lower() in _INDEX_FILES:
                path = head + "/"
        return base[:origin_end] + path + (("?" + query) if sep and query else "")


def base_directory(base: str) -> str:
    """`base` up to the last '/' of its path (what relative references resolve against)."""
    parts = urlsplit(base)
    return f"{parts.scheme}://{parts.netloc}{parts.path[: parts.path.rfind('/') + 1]}"
