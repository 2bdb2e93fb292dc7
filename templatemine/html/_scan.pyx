# cython: language_level=3, boundscheck=False, wraparound=False
"""The gate of html/nesting.py `flatten` in C: one pass over the page's text.

`scan(html)` returns (the number of '<', the open formatting elements bound),
the same as (html.count("<"), nesting.bounds(html)[1]): comments, scripts,
styles and the other elements Lexbor reads as text (textarea, title, xmp,
iframe, noembed, noframes; plaintext to the end) left out as nesting._SKIP
leaves them out (where HTML5's tokenizer ends them: "<!-->", "--!>",
"</script x>"; "<script-x>" is no script) up to the first <svg or <math start
tag, nothing after it (nesting._gate_text: in foreign content a style or
script holds markup, and the scan does not follow where it ends), tag names read as
nesting._TAG_NAME reads them, and per formatting name an end tag closing one
only if one is open. nesting.py checks that on probe pages at import and
otherwise keeps Python. It makes the formatting bound cheap enough to take on
every page, not only on pages of MIN_TAGS tags or more.
"""

from libc.string cimport memchr

cdef extern from "Python.h":
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_UCS4 PyUnicode_READ(int kind, const void *data, Py_ssize_t index) nogil

# nesting._FORMATTING, in this order
FORMATTING = ("b", "big", "code", "em", "font", "i", "s", "small", "strike", "strong", "tt", "u")


cdef inline unsigned int lower(unsigned int c) noexcept nogil:
    if 65 <= c <= 90:
        return c + 32
    return c


cdef inline bint is_alpha(unsigned int c) noexcept nogil:
    return 65 <= c <= 90 or 97 <= c <= 122


cdef inline bint is_name(unsigned int c) noexcept nogil:  # [A-Za-z0-9:-]
    return is_alpha(c) or 48 <= c <= 58 or c == 45


cdef inline bint is_space(unsigned int c) noexcept nogil:  # [ \t\n\r\f]
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 12


cdef inline bint ends_name(int kind, const void *data, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """Whether the tokenizer's tag name ends at i: [ \t\n\r\f/>] or the end of the text."""
    cdef unsigned int c
    if i >= n:
        return True
    c = PyUnicode_READ(kind, data, i)
    return is_space(c) or c == 47 or c == 62


cdef inline Py_ssize_t next_lt(int kind, const void *data, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The index of the next '<' from i, or n: memchr on one-byte strings, a
    plain loop over the code units on the others."""
    cdef const void *hit
    cdef const unsigned short *p2
    cdef const unsigned int *p4
    if i >= n:
        return n
    if kind == 1:
        hit = memchr(<const char *> data + i, 60, n - i)
        return n if hit == NULL else <const char *> hit - <const char *> data
    if kind == 2:
        p2 = <const unsigned short *> data
        while i < n and p2[i] != 60:
            i += 1
        return i
    p4 = <const unsigned int *> data
    while i < n and p4[i] != 60:
        i += 1
    return i


cdef bint word_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, const char *word) noexcept nogil:
    """The ASCII letters of `word` at i, in any case."""
    cdef Py_ssize_t k = 0
    while word[k]:
        if i + k >= n or lower(PyUnicode_READ(kind, data, i + k)) != <unsigned int> word[k]:
            return False
        k += 1
    return True


cdef int formatting_index(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """FORMATTING's index of the name at [start, end), -1 if it is none."""
    cdef Py_ssize_t length = end - start
    cdef unsigned int a, b
    if length < 1 or length > 6:
        return -1
    a = lower(PyUnicode_READ(kind, data, start))
    if length == 1:
        return 0 if a == 98 else 5 if a == 105 else 6 if a == 115 else 11 if a == 117 else -1  # b i s u
    b = lower(PyUnicode_READ(kind, data, start + 1))
    if length == 2:
        return 3 if a == 101 and b == 109 else 10 if a == 116 and b == 116 else -1  # em tt
    if word_at(kind, data, end, start, b"big") and length == 3:
        return 1
    if length == 4:
        return 2 if word_at(kind, data, end, start, b"code") else 4 if word_at(kind, data, end, start, b"font") else -1
    if length == 5:
        return 7 if word_at(kind, data, end, start, b"small") else -1
    if length == 6:
        return 8 if word_at(kind, data, end, start, b"strike") else 9 if word_at(kind, data, end, start, b"strong") else -1
    return -1


cdef Py_ssize_t skip_raw(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, const char *name,
                         Py_ssize_t *lt) noexcept nogil:
    """From i (past `<name`), the end of `</name` and one of [ \\t\\n\\r\\f/>], where the
    tokenizer ends the element (`</script x>` too), or n, counting the '<' on the way."""
    cdef Py_ssize_t j
    cdef Py_ssize_t name_length = 0
    while name[name_length]:
        name_length += 1
    while True:
        i = next_lt(kind, data, n, i)
        if i >= n:
            return n
        lt[0] += 1
        if i + 1 < n and PyUnicode_READ(kind, data, i + 1) == 47 and word_at(kind, data, n, i + 2, name):
            j = i + 2 + name_length
            if j < n and ends_name(kind, data, n, j):
                return j + 1
        i += 1


cdef inline Py_ssize_t name_length(const char *name) noexcept nogil:
    cdef Py_ssize_t k = 0
    while name[k]:
        k += 1
    return k


cdef const char *raw_text(int kind, const void *data, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The name of nesting._RAW_TEXT or "plaintext" at i, its end there ([ \\t\\n\\r\\f/>]
    or the end of the text), in any case; NULL if none is."""
    cdef unsigned int c
    cdef const char *name
    if i >= n:
        return NULL
    c = lower(PyUnicode_READ(kind, data, i))
    if c == 115:  # s
        if word_at(kind, data, n, i, b"script"):
            name = b"script"
        else:
            name = b"style"
    elif c == 116:  # t
        if word_at(kind, data, n, i, b"textarea"):
            name = b"textarea"
        else:
            name = b"title"
    elif c == 120:  # x
        name = b"xmp"
    elif c == 105:  # i
        name = b"iframe"
    elif c == 110:  # n
        if word_at(kind, data, n, i, b"noembed"):
            name = b"noembed"
        else:
            name = b"noframes"
    elif c == 112:  # p
        name = b"plaintext"
    else:
        return NULL
    if word_at(kind, data, n, i, name) and ends_name(kind, data, n, i + name_length(name)):
        return name
    return NULL


def scan(str html):
    """(html.count("<"), the most formatting elements open at once)."""
    cdef int kind = PyUnicode_KIND(html)
    cdef const void *data = PyUnicode_DATA(html)
    cdef Py_ssize_t n = len(html), i = 0, j, lt = 0
    cdef long counts[12]
    cdef long total = 0, best = 0
    cdef int f
    cdef bint end, foreign = False
    cdef const char *raw
    for f in range(12):
        counts[f] = 0
    with nogil:
        while True:
            i = next_lt(kind, data, n, i)
            if i >= n:
                break
            lt += 1
            if foreign:  # after the first <svg or <math, everything is counted
                pass
            elif word_at(kind, data, n, i + 1, b"!--"):  # a comment: "<!-->", "<!--->", or to "-->", "--!>" or the end
                i += 4
                if word_at(kind, data, n, i, b">"):
                    i += 1
                    continue
                if word_at(kind, data, n, i, b"->"):
                    i += 2
                    continue
                while i < n:
                    if PyUnicode_READ(kind, data, i) == 45:
                        if word_at(kind, data, n, i, b"-->"):
                            i += 3
                            break
                        if word_at(kind, data, n, i, b"--!>"):
                            i += 4
                            break
                    elif PyUnicode_READ(kind, data, i) == 60:
                        lt += 1
                    i += 1
                continue
            # a script, a style, or another element Lexbor reads as text (nesting._RAW_TEXT):
            # "<script" and the end of the name ("<script-x>" is another element), to its end tag
            raw = NULL if foreign else raw_text(kind, data, n, i + 1)
            if raw != NULL:
                if raw[0] == 112:  # plaintext: the rest of the page
                    i = next_lt(kind, data, n, i + 1)
                    while i < n:
                        lt += 1
                        i = next_lt(kind, data, n, i + 1)
                    break
                i = skip_raw(kind, data, n, i + 1 + name_length(raw), raw, &lt)
                continue
            j = i + 1
            end = j < n and PyUnicode_READ(kind, data, j) == 47  # '/'
            if end:
                j += 1
            if j >= n or not is_alpha(PyUnicode_READ(kind, data, j)):
                i += 1
                continue
            i = j
            j += 1
            while j < n and is_name(PyUnicode_READ(kind, data, j)):
                j += 1
            f = formatting_index(kind, data, i, j)
            if not end and not foreign and (j - i == 3 and word_at(kind, data, j, i, b"svg") or
                                            j - i == 4 and word_at(kind, data, j, i, b"math")):
                foreign = True  # svg or math: nesting._GATE_FOREIGN
            i = j
            if f < 0:
                continue
            if not end:
                counts[f] += 1
                total += 1
                if total > best:
                    best = total
            elif counts[f] > 0:
                counts[f] -= 1
                total -= 1
    return lt, best
