# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The DOM walk of `features.page_nodes(html, arrays=True)` in C, over Lexbor's
own structs.

selectolax (the Lexbor binding) ships no C headers, so the few struct fields
read here are declared below by hand (lexbor 2.x layouts), and the names that
need Lexbor's own logic (an element's or an attribute's qualified name, an
attribute's value) are read through functions selectolax's extension exports
(`lxb_dom_element_qualified_name`, `lxb_dom_attr_qualified_name`,
`lxb_dom_attr_value_noi`, found with ctypes): the calls selectolax itself
makes for `node.tag` and `node.attributes`, so the walk sees the same strings.

Nothing is trusted blindly: `setup()` (called by features.py at import) parses
a probe page and checks every node's pointers, type, text and attributes as
read here against what selectolax reports, and raises on any difference;
features.py then keeps the pure-Python walk (and checks the whole output of
both walks on the probe page once more).

Two entry points, both returning what `features._feature_matrix` computes
before its numpy part (see `columns`):
- `walk(root, pagelet_ids, split_ids, width)`: `dom_nodes` given the pagelets
  and split elements found in Python (html/pagelets.py);
- `page(root, link_ids, k, width)`: also `link_counts`, `split_elements` and
  the pagelet *set* of `partition` (the arrays need no pagelet ordinals, paths
  or texts), from the links `root.css(LINK_SELECTOR)` found.

Text is handled as bytes: Lexbor's text is UTF-8; a valid sequence is split
into words at the code points `str.isspace()` accepts (a table filled from
Python at setup), so words, lengths in code points and the normalised text are
those of the Python walk's `" ".join(" ".join(parts).split())`, where a part
is the node's text nodes joined across seams without space (`add_part`'s glue;
a word runs on from one text node into the next, `own_add`). A node whose
text holds invalid UTF-8 (decoded by selectolax with U+FFFD replacements) takes
the Python route, decoding exactly as selectolax does.
"""

from libc.stdint cimport uintptr_t, int64_t, uint64_t, uint32_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy
from cpython.ref cimport PyObject
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8

import numpy as np

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_UCS4 PyUnicode_READ_CHAR(object o, Py_ssize_t index)

cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    typedef struct tmw_str { unsigned char *data; size_t length; } tmw_str;
    typedef struct tmw_node tmw_node;
    struct tmw_node {                  /* lxb_dom_node_t */
        void *events;                  /* lxb_dom_event_target_t */
        uintptr_t local_name;          /* tag id / attr id */
        uintptr_t prefix;
        uintptr_t ns;
        void *owner_document;
        tmw_node *next;
        tmw_node *prev;
        tmw_node *parent;
        tmw_node *first_child;
        tmw_node *last_child;
        void *user;
        int type;                      /* lxb_dom_node_type_t */
    };
    typedef struct tmw_attr tmw_attr;
    typedef struct tmw_element {       /* lxb_dom_element_t (leading fields) */
        tmw_node node;
        uintptr_t upper_name;
        uintptr_t qualified_name;
        tmw_str *is_value;
        tmw_attr *first_attr;
        tmw_attr *last_attr;
        tmw_attr *attr_id;
        tmw_attr *attr_class;
    } tmw_element;
    struct tmw_attr {                  /* lxb_dom_attr_t */
        tmw_node node;
        uintptr_t upper_name;
        uintptr_t qualified_name;
        tmw_str *value;
        tmw_element *owner;
        tmw_attr *next;
        tmw_attr *prev;
    };
    typedef struct tmw_chardata {      /* lxb_dom_character_data_t */
        tmw_node node;
        tmw_str data;
    } tmw_chardata;
    typedef const unsigned char *(*tmw_name_f)(const void *, size_t *);
    """
    ctypedef struct tmw_str:
        unsigned char *data
        size_t length
    ctypedef struct tmw_node:
        uintptr_t local_name
        void *owner_document
        tmw_node *next
        tmw_node *prev
        tmw_node *parent
        tmw_node *first_child
        tmw_node *last_child
        int type
    ctypedef struct tmw_attr
    ctypedef struct tmw_element:
        tmw_node node
        uintptr_t qualified_name
        tmw_attr *first_attr
    ctypedef struct tmw_attr:
        tmw_node node
        uintptr_t qualified_name
        tmw_element *owner
        tmw_attr *next
    ctypedef struct tmw_chardata:
        tmw_node node
        tmw_str data
    ctypedef const unsigned char *(*tmw_name_f)(const void *, size_t *)

cdef enum:
    ELEMENT = 1  # LXB_DOM_NODE_TYPE_ELEMENT
    TEXT = 3  # LXB_DOM_NODE_TYPE_TEXT
    STATIC_IDS = 4096  # Lexbor's static tag ids are small; a dynamic one is the address of its hash entry
    WS_TABLE = 0x3001  # str.isspace() is checked up to U+3000; no code point above is whitespace (unit-tested)
    F_PAGELET = 1
    F_SPLIT = 2
    # html/pagelets.OPENED / CLOSED / BROKEN: what lies between a node's last own text node and its next
    OPENED = 1
    CLOSED = 2
    BROKEN = 4
    # a tag's seam kind (setup's names): inline, a break, none (<wbr>)
    SEAM_INLINE = 0
    SEAM_BREAK = 1
    SEAM_NONE = 2

cdef tmw_name_f f_elem_qname = NULL
cdef tmw_name_f f_attr_qname = NULL
cdef tmw_name_f f_attr_value = NULL

cdef short tag_code[STATIC_IDS]  # static tag id -> code (-1: a tag no table cares about)
cdef unsigned char *code_block = NULL  # per code: in BLOCK_TAGS
cdef unsigned char *code_seam = NULL  # per code: SEAM_* of the tag (html/pagelets.TEXT_BREAK_TAGS, <wbr>)
cdef unsigned char *code_anchor = NULL  # per code: 1 <a>, 2 <area>
cdef int64_t *code_group = NULL  # per code: TAG_GROUPS index or -1
cdef int64_t *code_cue = NULL  # per code: cue bits of the tag itself
cdef dict name_code = {}  # tag name (UTF-8 bytes) -> code, for dynamic ids / qualified names
cdef dict value_cache = None  # features._VALUE_BITS
cdef object value_fn = None  # features._value_bits
cdef unsigned char is_ws[WS_TABLE]  # code point -> str.isspace()
cdef uintptr_t text_tag_id = 2  # LXB_TAG__TEXT, read from the probe page
cdef bint ready = False

READY = False


# ---------------------------------------------------------------- UTF-8

cdef inline int utf8_next(const unsigned char *s, size_t i, size_t n, uint32_t *cp) noexcept:
    """Length of the UTF-8 sequence at s[i] with its code point in *cp; 0 when
    Python's strict decoder would reject it (overlong, surrogate, truncated...)."""
    cdef unsigned char c = s[i], c1, c2, c3
    if c < 0x80:
        cp[0] = c
        return 1
    if c < 0xC2:
        return 0
    if c < 0xE0:
        if i + 1 >= n:
            return 0
        c1 = s[i + 1]
        if (c1 & 0xC0) != 0x80:
            return 0
        cp[0] = ((c & 0x1F) << 6) | (c1 & 0x3F)
        return 2
    if c < 0xF0:
        if i + 2 >= n:
            return 0
        c1 = s[i + 1]
        c2 = s[i + 2]
        if (c1 & 0xC0) != 0x80 or (c2 & 0xC0) != 0x80 or (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F):
            return 0
        cp[0] = ((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F)
        return 3
    if c < 0xF5:
        if i + 3 >= n:
            return 0
        c1 = s[i + 1]
        c2 = s[i + 2]
        c3 = s[i + 3]
        if ((c1 & 0xC0) != 0x80 or (c2 & 0xC0) != 0x80 or (c3 & 0xC0) != 0x80 or (c == 0xF0 and c1 < 0x90)
                or (c == 0xF4 and c1 > 0x8F)):
            return 0
        cp[0] = ((c & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F)
        return 4
    return 0


cdef inline bint space(uint32_t cp) noexcept:
    return cp < WS_TABLE and is_ws[cp]


cdef Py_ssize_t count_words(const unsigned char *s, size_t n) noexcept:
    """len(text.split()) of valid UTF-8 text; -1 if it is not valid UTF-8."""
    cdef size_t i = 0
    cdef int step
    cdef uint32_t cp
    cdef Py_ssize_t words = 0
    cdef bint in_word = False
    while i < n:
        step = utf8_next(s, i, n, &cp)
        if step == 0:
            return -1
        if space(cp):
            in_word = False
        elif not in_word:
            words += 1
            in_word = True
        i += step
    return words


cdef inline bint blank_ascii(const unsigned char *s, size_t n) noexcept:
    """Only ASCII whitespace (str.isspace below 128)."""
    cdef size_t i
    for i in range(n):
        if s[i] >= 0x80 or not is_ws[s[i]]:
            return False
    return True


cdef int has_text(const unsigned char *s, size_t n) noexcept:
    """selectolax decodes with U+FFFD for bad bytes: anything but whitespace
    or bad UTF-8 counts as text."""
    cdef size_t i = 0
    cdef int step
    cdef uint32_t cp
    while i < n:
        step = utf8_next(s, i, n, &cp)
        if step == 0 or not space(cp):
            return True
        i += step
    return False


# the own text of one node, word by word: report.density.wrap's counters, the
# sentence ends of _SENTENCE_END, and the normalised text; a word may run on
# into the next text node (a seam without space), so its state is kept here
cdef struct Own:
    Py_ssize_t tokens, current, lines, last, sentences
    Py_ssize_t wl  # code points of the word being read
    uint32_t last_cp  # its last code point
    bint in_word
    char *buf
    size_t length, cap


cdef inline void own_reset(Own *w) noexcept:
    w.tokens = w.current = w.lines = w.last = w.sentences = w.wl = 0
    w.last_cp = 0
    w.in_word = False
    w.length = 0


cdef int own_put(Own *w, const unsigned char *s, size_t n) except -1:
    cdef size_t need = w.length + n
    cdef void *grown
    if need > w.cap:
        grown = realloc(w.buf, 2 * need)
        if grown == NULL:
            raise MemoryError()
        w.buf = <char *> grown
        w.cap = 2 * need
    memcpy(w.buf + w.length, s, n)
    w.length += n
    return 0


cdef void own_end_word(Own *w, Py_ssize_t width) noexcept:
    """A word of w.wl code points ends (its bytes are in w.buf already)."""
    cdef Py_ssize_t wl = w.wl
    if w.current == 0:
        w.current, w.lines, w.last = wl, 1, 1
    elif w.current + 1 + wl <= width:
        w.current, w.last = w.current + 1 + wl, w.last + 1
    else:
        w.current, w.lines, w.last = wl, w.lines + 1, 1
    w.tokens += 1
    # _SENTENCE_END `[.!?](?:\s|$)` on words joined by single spaces: one per word ending so
    if w.last_cp == 0x2E or w.last_cp == 0x21 or w.last_cp == 0x3F:
        w.sentences += 1
    w.in_word = False


cdef int own_add(Own *w, const unsigned char *s, size_t n, Py_ssize_t width, bint glue) except -1:
    """Add one text node's words, the word being read running on into it when
    `glue` (no space at the seam); returns 1 (and stops) at bad UTF-8. The
    last word stays open: `own_end` closes it."""
    cdef size_t i = 0, start = 0
    cdef int step
    cdef uint32_t cp
    if w.in_word and not glue:
        own_end_word(w, width)
    while i < n:
        step = utf8_next(s, i, n, &cp)
        if step == 0:
            return 1
        if space(cp):
            if w.in_word:  # a word ends: its bytes here are s[start:i]
                own_put(w, s + start, i - start)
                own_end_word(w, width)
        elif not w.in_word:
            if w.length:
                own_put(w, <const unsigned char *> b" ", 1)
            w.in_word = True
            w.wl = 1
            w.last_cp = cp
            start = i
        else:
            w.wl += 1
            w.last_cp = cp
        i += step
    if w.in_word:
        own_put(w, s + start, n - start)
    return 0


cdef inline void own_end(Own *w, Py_ssize_t width) noexcept:
    if w.in_word:
        own_end_word(w, width)


# ---------------------------------------------------------------- tags and attributes

cdef int slow_code(tmw_element *el) except -2:
    cdef size_t ln = 0
    cdef const unsigned char *s = f_elem_qname(<const void *> el, &ln)
    if s == NULL or ln > 64:
        return -1
    cdef PyObject *o = PyDict_GetItem(name_code, (<const char *> s)[:ln])
    return -1 if o == NULL else <int> (<object> o)


cdef inline int elem_code(tmw_element *el) except -2:
    cdef uintptr_t lid = el.node.local_name
    if el.qualified_name == 0 and lid < STATIC_IDS:
        return tag_code[lid]
    return slow_code(el)


# attribute keys the walk needs (qualified names, as selectolax's `attributes` keys)
cdef enum:
    A_OTHER = 0
    A_ID = 1
    A_CLASS = 2
    A_ROLE = 3
    A_HREF = 4


cdef inline int attr_key(tmw_attr *at) noexcept:
    cdef size_t ln = 0
    cdef const unsigned char *s = f_attr_qname(<const void *> at, &ln)
    if s == NULL:
        return A_OTHER
    if ln == 2 and memcmp(s, b"id", 2) == 0:
        return A_ID
    if ln == 5 and memcmp(s, b"class", 5) == 0:
        return A_CLASS
    if ln == 4:
        if memcmp(s, b"role", 4) == 0:
            return A_ROLE
        if memcmp(s, b"href", 4) == 0:
            return A_HREF
    return A_OTHER


cdef inline bint has_href(tmw_element *el) noexcept:
    cdef tmw_attr *at = el.first_attr
    while at != NULL:
        if attr_key(at) == A_HREF:
            return True
        at = at.next
    return False


cdef object attr_value(tmw_attr *at):
    """The attribute's value as selectolax decodes it (None: no value)."""
    cdef size_t ln = 0
    cdef const unsigned char *s = f_attr_value(<const void *> at, &ln)
    if s == NULL:
        return None
    return PyUnicode_DecodeUTF8(<const char *> s, ln, "replace")


cdef int64_t value_bits(object value) except -1:
    if not value:
        return 0
    cdef PyObject *o = PyDict_GetItem(value_cache, value)
    if o != NULL:
        return <int64_t> (<object> o)
    return <int64_t> value_fn(value)


cdef void last_attrs(tmw_element *el, tmw_attr **by_key) noexcept:
    """by_key[A_ID], [A_CLASS], [A_ROLE]: the element's last attribute of each
    name (NULL: none), as the dict selectolax builds in attribute order."""
    cdef tmw_attr *at = el.first_attr
    cdef int k
    by_key[A_ID] = by_key[A_CLASS] = by_key[A_ROLE] = NULL
    while at != NULL:
        k = attr_key(at)
        if A_ID <= k <= A_ROLE:
            by_key[k] = at
        at = at.next


cdef int64_t cue_bits(tmw_element *el, int code) except -1:
    """features.cue_bits: the tag's word, then id, class and role."""
    cdef int64_t bits = code_cue[code] if code >= 0 else 0
    cdef tmw_attr *by_key[4]
    cdef int k
    last_attrs(el, by_key)
    for k in range(A_ID, A_ROLE + 1):
        if by_key[k] != NULL:
            bits |= value_bits(attr_value(by_key[k]))
    return bits


# ---------------------------------------------------------------- node -> flags / link count (open addressing)

cdef struct Slot:
    uintptr_t key
    int64_t count  # links in the subtree, saturated at k (html/pagelets.py link_counts)
    int flags  # F_PAGELET | F_SPLIT


cdef struct Table:
    Slot *slots
    size_t mask, used


cdef inline size_t t_hash(uintptr_t key) noexcept:
    cdef uint64_t h = <uint64_t> key
    h ^= h >> 33
    h *= <uint64_t> 0xff51afd7ed558ccd
    h ^= h >> 33
    return <size_t> h


cdef int t_init(Table *t, size_t n) except -1:
    cdef size_t size = 64
    while size < 2 * n + 2:
        size <<= 1
    t.slots = <Slot *> calloc(size, sizeof(Slot))
    if t.slots == NULL:
        raise MemoryError()
    t.mask = size - 1
    t.used = 0
    return 0


cdef inline Slot *t_get(Table *t, uintptr_t key) noexcept:
    """The slot of `key`, or NULL."""
    cdef size_t i = t_hash(key) & t.mask
    while t.slots[i].key != 0:
        if t.slots[i].key == key:
            return &t.slots[i]
        i = (i + 1) & t.mask
    return NULL


cdef Slot *t_put(Table *t, uintptr_t key) except NULL:
    """The slot of `key`, added (count 0, no flags) if new; valid until the next t_put."""
    cdef size_t i, j, size
    cdef Slot *old
    if 2 * (t.used + 1) > t.mask + 1:
        old, size = t.slots, t.mask + 1
        t.slots = <Slot *> calloc(2 * size, sizeof(Slot))
        if t.slots == NULL:
            t.slots = old
            raise MemoryError()
        t.mask = 2 * size - 1
        for j in range(size):
            if old[j].key != 0:
                i = t_hash(old[j].key) & t.mask
                while t.slots[i].key != 0:
                    i = (i + 1) & t.mask
                t.slots[i] = old[j]
        free(old)
    i = t_hash(key) & t.mask
    while t.slots[i].key != 0:
        if t.slots[i].key == key:
            return &t.slots[i]
        i = (i + 1) & t.mask
    t.slots[i].key = key
    t.slots[i].count = 0
    t.slots[i].flags = 0
    t.used += 1
    return &t.slots[i]


cdef bint subtree_text(tmw_node *top) noexcept:
    """_clean(top.text(deep=True, separator=" ")) is not empty: selectolax's
    text() takes the nodes whose tag id is Lexbor's text id, below `top`."""
    cdef tmw_node *node = top.first_child
    cdef tmw_chardata *cd
    while node != NULL:
        if node.local_name == text_tag_id:
            cd = <tmw_chardata *> node
            if cd.data.data != NULL and has_text(cd.data.data, cd.data.length):
                return True
        if node.first_child != NULL:
            node = node.first_child
            continue
        while node != top and node.next == NULL:
            node = node.parent
        if node == top:
            return False
        node = node.next
    return False


cdef int pagelet_flags(Table *t, tmw_node *root, list link_ids, int64_t k) except -1:
    """html/pagelets.py: link_counts, split_elements, and which elements
    `partition` makes pagelets."""
    cdef tmw_node *x
    cdef Slot *slot
    cdef Py_ssize_t i, n_split = 0
    cdef size_t j
    cdef tmw_node **split = NULL
    cdef tmw_node *child
    # link_counts: each link climbs to the root, stopping at the first element already holding k
    for link in link_ids:
        x = <tmw_node *> <size_t> link
        while True:
            slot = t_put(t, <uintptr_t> x)
            if slot.count >= k:
                break
            slot.count += 1
            if x == root or x.parent == NULL:
                break
            x = x.parent
    try:
        # split_elements: the parents of the elements (below the root) holding >= k
        split = <tmw_node **> malloc((t.used + 1) * sizeof(tmw_node *))
        if split == NULL:
            raise MemoryError()
        for j in range(t.mask + 1):
            if t.slots[j].key != 0 and t.slots[j].count >= k and t.slots[j].key != <uintptr_t> root:
                x = (<tmw_node *> t.slots[j].key).parent
                if x != NULL:
                    split[n_split] = x
                    n_split += 1
        for i in range(n_split):
            t_put(t, <uintptr_t> split[i]).flags |= F_SPLIT
        # partition: the root if not split, else the element children of split elements that are not
        # split themselves, when they hold text or links
        slot = t_get(t, <uintptr_t> root)
        if slot == NULL or not (slot.flags & F_SPLIT):
            if (slot != NULL and slot.count > 0) or subtree_text(root):
                t_put(t, <uintptr_t> root).flags |= F_PAGELET
            return 0
        for i in range(n_split):
            x = split[i]
            slot = t_get(t, <uintptr_t> x)
            if slot.flags & F_PAGELET:  # a split element listed twice: done already
                continue
            slot.flags |= F_PAGELET  # (marks it done; cleared below)
            child = x.first_child
            while child != NULL:
                if child.type == ELEMENT:
                    slot = t_get(t, <uintptr_t> child)
                    if slot == NULL:
                        if subtree_text(child):
                            t_put(t, <uintptr_t> child).flags |= F_PAGELET
                    elif not (slot.flags & F_SPLIT) and (slot.count > 0 or subtree_text(child)):
                        slot.flags |= F_PAGELET
                child = child.next
        for i in range(n_split):
            t_get(t, <uintptr_t> split[i]).flags &= ~F_PAGELET
    finally:
        free(split)
    return 0


# ---------------------------------------------------------------- the walk

cdef struct Rec:
    int64_t parent, depth, cues, inside, anchor, links, group
    size_t node  # the Lexbor node (a LexborNode's mem_id), for the NODES rows' labels and pagelets
    Py_ssize_t head, tail  # own text nodes: first and last index into the parts list (-1: none)
    Py_ssize_t after  # its parent's last own text node before it (-1: none): `text_at` is that part's `upto`
    unsigned char is_pagelet, is_split
    unsigned char seam  # OPENED | CLOSED | BROKEN since its last own text node


cdef struct Part:
    const unsigned char *data
    size_t length
    Py_ssize_t next
    bint glue  # joins the node's previous own text node without a space
    Py_ssize_t upto  # the node's own words up to the end of this part (set by `columns`)


cdef struct Frame:
    tmw_node *item
    Py_ssize_t up
    int anchor
    Py_ssize_t seam_of  # the node whose own text the parent element's end is a seam of
    unsigned char seam  # and the flag it sets there (0: none)


cdef class _Buffers:
    """The walk's growable C arrays, freed however the walk ends."""
    cdef Rec *recs
    cdef Part *parts
    cdef Frame *stack
    cdef Table table
    cdef Own own
    cdef Py_ssize_t n_recs, cap_recs, n_parts, cap_parts, cap_stack

    def __cinit__(self):
        self.cap_recs, self.cap_parts, self.cap_stack = 256, 256, 64
        self.recs = <Rec *> malloc(self.cap_recs * sizeof(Rec))
        self.parts = <Part *> malloc(self.cap_parts * sizeof(Part))
        self.stack = <Frame *> malloc(self.cap_stack * sizeof(Frame))
        self.own.buf = <char *> malloc(256)
        self.own.cap = 256
        if not (self.recs and self.parts and self.stack and self.own.buf):
            raise MemoryError()
        self.table.slots = NULL

    def __dealloc__(self):
        free(self.recs)
        free(self.parts)
        free(self.stack)
        free(self.own.buf)
        free(self.table.slots)

    cdef Rec *new_rec(self) except NULL:
        cdef void *grown
        if self.n_recs == self.cap_recs:
            grown = realloc(self.recs, 2 * self.cap_recs * sizeof(Rec))
            if grown == NULL:
                raise MemoryError()
            self.recs = <Rec *> grown
            self.cap_recs *= 2
        self.n_recs += 1
        return &self.recs[self.n_recs - 1]

    cdef int add_part(self, Py_ssize_t up, const unsigned char *data, size_t length) except -1:
        """Append an own text node of node `up`; it joins the last one without a
        space unless a break, or an inline element's start and an end, lies
        between them (features.dom_nodes)."""
        cdef void *grown
        if self.n_parts == self.cap_parts:
            grown = realloc(self.parts, 2 * self.cap_parts * sizeof(Part))
            if grown == NULL:
                raise MemoryError()
            self.parts = <Part *> grown
            self.cap_parts *= 2
        cdef Py_ssize_t p = self.n_parts
        self.n_parts += 1
        self.parts[p].data = data
        self.parts[p].length = length
        self.parts[p].next = -1
        cdef unsigned char seam = self.recs[up].seam
        self.parts[p].glue = self.recs[up].tail >= 0 and not (seam & BROKEN) and seam != (OPENED | CLOSED)
        self.recs[up].seam = 0
        if self.recs[up].tail < 0:
            self.recs[up].head = p
        else:
            self.parts[self.recs[up].tail].next = p
        self.recs[up].tail = p
        return 0

    cdef Frame *push(self) except NULL:
        cdef void *grown
        grown = realloc(self.stack, 2 * self.cap_stack * sizeof(Frame))
        if grown == NULL:
            raise MemoryError()
        self.stack = <Frame *> grown
        self.cap_stack *= 2
        return self.stack


cdef int set_rec(Rec *rec, Rec *parent, Py_ssize_t up, tmw_node *node, int code, Slot *slot) except -1:
    rec.parent = up
    rec.depth = parent.depth + 1 if parent != NULL else 0
    rec.cues = cue_bits(<tmw_element *> node, code) if node.type == ELEMENT else 0
    rec.inside = (parent.inside | parent.cues) if parent != NULL else 0
    rec.anchor = 0
    rec.links = 0
    rec.group = code_group[code] if code >= 0 else -1
    rec.head = rec.tail = -1
    rec.after = parent.tail if parent != NULL else -1
    rec.node = <size_t> node
    rec.is_pagelet = slot != NULL and (slot.flags & F_PAGELET) != 0
    rec.is_split = slot != NULL and (slot.flags & F_SPLIT) != 0
    rec.seam = 0
    return 0


cdef int walk_tree(_Buffers b, tmw_node *root) except -1:
    """features.dom_nodes: nodes in preorder with their own text nodes, anchor
    tokens, links and cue bits."""
    cdef Table *t = &b.table
    cdef tmw_node *item
    cdef tmw_element *el
    cdef tmw_chardata *cd
    cdef Frame *top
    cdef Slot *slot
    cdef Rec *rec
    cdef Py_ssize_t up, sp, words, seam_of
    cdef int code, anchor
    cdef unsigned char seam, end
    cdef const unsigned char *data
    cdef size_t nb

    code = elem_code(<tmw_element *> root) if root.type == ELEMENT else -1
    rec = b.new_rec()
    set_rec(rec, NULL, -1, root, code, t_get(t, <uintptr_t> root))
    b.stack[0].item = root.first_child
    b.stack[0].up = 0
    b.stack[0].anchor = 0
    b.stack[0].seam_of = 0
    b.stack[0].seam = 0
    sp = 1
    while sp > 0:
        top = &b.stack[sp - 1]
        item = top.item
        if item == NULL:
            b.recs[top.seam_of].seam |= top.seam
            sp -= 1
            continue
        top.item = item.next
        up = top.up
        anchor = top.anchor

        if item.type == TEXT:
            cd = <tmw_chardata *> item
            data = cd.data.data
            nb = cd.data.length
            if data == NULL or nb == 0:
                continue
            if blank_ascii(data, nb):
                b.recs[up].seam |= BROKEN
                continue
            b.add_part(up, data, nb)
            if anchor:
                words = count_words(data, nb)
                if words < 0:  # bad UTF-8: as selectolax decodes it
                    words = len(PyUnicode_DecodeUTF8(<const char *> data, nb, "replace").split())
                b.recs[up].anchor += words
            continue
        if item.type != ELEMENT:
            continue

        el = <tmw_element *> item
        code = elem_code(el)
        if code >= 0 and code_anchor[code]:
            anchor = anchor or code_anchor[code] == 1
            if has_href(el):
                b.recs[up].links += 1
        slot = t_get(t, <uintptr_t> item)
        seam_of = up
        if (code >= 0 and code_block[code]) or (slot != NULL and slot.flags != 0):
            rec = b.new_rec()
            set_rec(rec, &b.recs[up], up, item, code, slot)
            up = b.n_recs - 1
            seam = end = BROKEN  # a child node's text is not its parent's: a break in the parent's
        elif code < 0 or code_seam[code] == SEAM_INLINE:
            seam = OPENED
            end = CLOSED
        elif code_seam[code] == SEAM_BREAK:
            seam = end = BROKEN
        else:  # <wbr>
            seam = end = 0
        b.recs[seam_of].seam |= seam
        if sp == b.cap_stack:
            b.push()
        b.stack[sp].item = item.first_child
        b.stack[sp].up = up
        b.stack[sp].anchor = anchor
        b.stack[sp].seam_of = seam_of
        b.stack[sp].seam = end
        sp += 1
    return 0


cdef tuple columns(_Buffers b, Py_ssize_t width):
    """features._feature_matrix's per-node loop: own text, wrap, sentences."""
    cdef Py_ssize_t n = b.n_recs
    own_a = np.zeros((n, 8))
    parent_a = np.empty(n, dtype=np.int64)
    depth_a = np.empty(n, dtype=np.int64)
    cues_a = np.empty(n, dtype=np.int64)
    inside_a = np.empty(n, dtype=np.int64)
    group_a = np.empty(n, dtype=np.int64)
    pagelet_a = np.empty(n, dtype=np.bool_)
    split_a = np.empty(n, dtype=np.bool_)
    at_a = np.zeros(n, dtype=np.int64)
    cdef double[:, ::1] own = own_a
    cdef int64_t[::1] parent = parent_a, depth = depth_a, cues = cues_a, inside = inside_a, group = group_a
    cdef int64_t[::1] at = at_a
    cdef unsigned char[::1] is_pl = pagelet_a.view(np.uint8), is_sp = split_a.view(np.uint8)
    cdef list texts = [""] * n
    cdef Py_ssize_t i, p, tok, s, last, lines, anchor
    cdef double density
    cdef Rec *rec
    cdef Own *w = &b.own
    cdef int bad
    for i in range(n):
        rec = &b.recs[i]
        parent[i] = rec.parent
        depth[i] = rec.depth
        cues[i] = rec.cues
        inside[i] = rec.inside
        group[i] = rec.group
        is_pl[i] = rec.is_pagelet
        is_sp[i] = rec.is_split
        own[i, 2] = <double> rec.links
        if rec.after >= 0:  # the parent (an earlier node) has set its parts' `upto`
            at[i] = b.parts[rec.after].upto
        if rec.head < 0:
            continue
        own_reset(w)
        p = rec.head
        bad = 0
        while p >= 0 and not bad:
            bad = own_add(w, b.parts[p].data, b.parts[p].length, width, b.parts[p].glue)
            b.parts[p].upto = w.tokens + (1 if w.in_word else 0)  # a word still open ends at the next break
            p = b.parts[p].next
        if bad:
            tok, lines, last, s = python_own(b, rec, width, texts, i)
        else:
            own_end(w, width)
            tok, lines, last, s = w.tokens, w.lines, w.last, w.sentences
            if tok:
                texts[i] = PyUnicode_DecodeUTF8(w.buf, w.length, NULL)
        if tok == 0:
            continue
        # report.density.Wrapped.density: one IEEE division of the same integers
        density = <double> (tok - last) / <double> (lines - 1) if lines > 1 else <double> tok
        # anchor words count per text node: a word joined across an <a>'s edge counts once per side
        anchor = rec.anchor if rec.anchor < tok else tok
        own[i, 1] = <double> anchor
        own[i, 0] = <double> tok
        own[i, 3] = <double> s
        own[i, 4] = <double> tok if s else 0.0
        own[i, 5] = <double> tok * density
        if density >= 8.5 and 2 * anchor < tok:  # features.C2_MIN_DENSITY
            own[i, 6] = <double> tok
        else:
            own[i, 7] = <double> tok
    return parent_a, depth_a, own_a, texts, cues_a, inside_a, group_a, pagelet_a, split_a, at_a


cdef tuple python_own(_Buffers b, Rec *rec, Py_ssize_t width, list texts, Py_ssize_t i):
    """A node whose text holds bad UTF-8: its parts decoded as selectolax
    decodes them, then the Python walk's own code."""
    cdef list parts = []
    cdef Py_ssize_t p = rec.head, tok, k, wl, current = 0, lines = 0, last = 0, s = 0
    cdef Py_ssize_t before = 0  # words of the parts before the last
    cdef Py_UCS4 ch
    cdef bint broken = False  # a white-space part since the last part kept: a break (as in Python)
    while p >= 0:
        text = PyUnicode_DecodeUTF8(<const char *> b.parts[p].data, b.parts[p].length, "replace")
        if text and not text.isspace():
            if parts and b.parts[p].glue and not broken:  # (wraparound is off: no parts[-1])
                parts[len(parts) - 1] += text
            else:
                if parts:
                    before += len(parts[len(parts) - 1].split())
                parts.append(text)
            broken = False
        elif text:
            broken = True
        b.parts[p].upto = before + (len(parts[len(parts) - 1].split()) if parts else 0)
        p = b.parts[p].next
    cdef list words = " ".join(parts).split()
    texts[i] = " ".join(words)
    tok = PyList_GET_SIZE(words)
    for k in range(tok):
        word = <object> PyList_GET_ITEM(words, k)
        wl = PyUnicode_GET_LENGTH(word)
        if current == 0:
            current, lines, last = wl, 1, 1
        elif current + 1 + wl <= width:
            current, last = current + 1 + wl, last + 1
        else:
            current, lines, last = wl, lines + 1, 1
        ch = PyUnicode_READ_CHAR(word, wl - 1)
        if ch == u'.' or ch == u'!' or ch == u'?':
            s += 1
    return tok, lines, last, s


cdef tuple row_columns(_Buffers b):
    """Per node, for the NODES rows: its Lexbor node (mem_id), and its tag, id
    and class as selectolax's `tag` and `attributes` give them (None: no such
    attribute), which features._label_of makes the label."""
    cdef Py_ssize_t i, n = b.n_recs
    cdef list ids = [0] * n, tags = [None] * n, id_values = [None] * n, classes = [None] * n
    cdef tmw_node *node
    cdef tmw_attr *by_key[4]
    cdef size_t ln
    cdef const unsigned char *s
    for i in range(n):
        node = <tmw_node *> b.recs[i].node
        ids[i] = b.recs[i].node
        ln = 0
        s = f_elem_qname(<const void *> node, &ln)
        if s != NULL:
            tags[i] = PyUnicode_DecodeUTF8(<const char *> s, ln, "replace")
        last_attrs(<tmw_element *> node, by_key)
        if by_key[A_ID] != NULL:
            id_values[i] = attr_value(by_key[A_ID])
        if by_key[A_CLASS] != NULL:
            classes[i] = attr_value(by_key[A_CLASS])
    return ids, tags, id_values, classes


cdef bint valid_utf8(const char *s, size_t n) noexcept:
    cdef size_t i = 0
    cdef int step
    cdef uint32_t cp
    while i < n:
        step = utf8_next(<const unsigned char *> s, i, n, &cp)
        if step == 0:
            return False
        i += step
    return True


cdef inline unsigned char seam_kind(tmw_node *node) except 255:
    """SEAM_* of an element (an unknown tag is inline)."""
    cdef int code = elem_code(<tmw_element *> node)
    return SEAM_INLINE if code < 0 else code_seam[code]


cdef inline unsigned char end_seam(unsigned char kind) noexcept:
    return BROKEN if kind == SEAM_BREAK else CLOSED if kind == SEAM_INLINE else 0


def joined_text(size_t node_id):
    """html/pagelets._joined_text in C: the text nodes below the element at
    `node_id` in document order, a space between two of them where a break
    starts or ends, or an inline element starts and one ends; None when a
    text node is not valid UTF-8 (the caller takes the Python walk, which
    decodes each text node as selectolax does)."""
    if not ready:
        raise RuntimeError("templatemine.pagelevel._walk: setup() has not succeeded")
    cdef tmw_node *top = <tmw_node *> node_id
    cdef tmw_node *cur = top.first_child
    cdef tmw_chardata *cd
    cdef unsigned char seam = 0, kind
    cdef bint any_text = False
    cdef Own w
    own_reset(&w)
    w.cap = 256
    w.buf = <char *> malloc(w.cap)
    if w.buf == NULL:
        raise MemoryError()
    try:
        while cur != NULL:
            if cur.type == TEXT:
                cd = <tmw_chardata *> cur
                if cd.data.data != NULL and cd.data.length:
                    if not valid_utf8(<const char *> cd.data.data, cd.data.length):
                        return None
                    if any_text and ((seam & BROKEN) or seam == (OPENED | CLOSED)):
                        own_put(&w, <const unsigned char *> b" ", 1)
                    own_put(&w, cd.data.data, cd.data.length)
                    any_text = True
                    seam = 0
            elif cur.type == ELEMENT:
                kind = seam_kind(cur)
                if kind == SEAM_BREAK:
                    seam |= BROKEN
                elif kind == SEAM_INLINE:
                    seam |= OPENED
                if cur.first_child != NULL:
                    cur = cur.first_child
                    continue
                seam |= end_seam(kind)
            # on to the next node in document order, ending the elements left
            while cur.next == NULL:
                cur = cur.parent
                if cur == top or cur == NULL:
                    return PyUnicode_DecodeUTF8(w.buf, w.length, NULL)
                seam |= end_seam(seam_kind(cur))
            cur = cur.next
        return PyUnicode_DecodeUTF8(w.buf, w.length, NULL)
    finally:
        free(w.buf)


def walk(size_t root_id, object pagelet_ids, object split_ids, Py_ssize_t width, bint rows=False):
    """dom_nodes' accumulation below the Lexbor node at `root_id` (a
    LexborNode's mem_id; its tree must stay alive during the call), given the
    mem_ids of the pagelet elements and of the split elements.

    Returns (parent, depth, own, texts, cues, inside, group, is_pagelet,
    is_split), one entry per node in preorder: `features._node_matrix`'s input;
    with `rows`, then `row_columns`' (mem_ids, tags, ids, classes), what the
    NODES rows add (`features.node_rows`)."""
    if not ready:
        raise RuntimeError("templatemine.pagelevel._walk: setup() has not succeeded")
    cdef _Buffers b = _Buffers()
    t_init(&b.table, len(pagelet_ids) + len(split_ids))
    for k in pagelet_ids:
        t_put(&b.table, <uintptr_t> <size_t> k).flags |= F_PAGELET
    for k in split_ids:
        t_put(&b.table, <uintptr_t> <size_t> k).flags |= F_SPLIT
    walk_tree(b, <tmw_node *> root_id)
    if rows:
        return columns(b, width) + row_columns(b)
    return columns(b, width)


def page(size_t root_id, list link_ids, int64_t k, Py_ssize_t width):
    """`walk` with the pagelets and split elements found here from the links
    (`root.css(LINK_SELECTOR)` mem_ids) and Bar-Yossef & Rajagopalan's k."""
    if not ready:
        raise RuntimeError("templatemine.pagelevel._walk: setup() has not succeeded")
    cdef _Buffers b = _Buffers()
    t_init(&b.table, 4 * len(link_ids) + 16)
    pagelet_flags(&b.table, <tmw_node *> root_id, link_ids, k)
    walk_tree(b, <tmw_node *> root_id)
    return columns(b, width)


# ---------------------------------------------------------------- setup and layout check

def _links(size_t node_id):
    """A node's own fields, nothing they point to: (type, next, prev, parent,
    first_child, last_child, local_name, owner_document), pointers as ints."""
    cdef tmw_node *node = <tmw_node *> node_id
    return (node.type, <size_t> node.next, <size_t> node.prev, <size_t> node.parent, <size_t> node.first_child,
            <size_t> node.last_child, node.local_name, <size_t> node.owner_document)


cdef inline bint plausible(const void *p) noexcept:
    return p != NULL and <uintptr_t> p >= 0x10000 and (<uintptr_t> p) % sizeof(void *) == 0


def _fields(size_t node_id):
    """What the walk reads through a node (after `_links` checked the node
    itself), for the layout check: (text or None, tag code or None, [(attr
    name, attr key, value)], text below an element or None). Raises where a
    pointer does not look like what it should be instead of following it."""
    cdef tmw_node *node = <tmw_node *> node_id
    cdef tmw_chardata *cd
    cdef tmw_element *el
    cdef tmw_attr *at
    cdef size_t ln = 0
    cdef const unsigned char *s
    text = code = None
    attrs = []
    if node.type == TEXT:
        cd = <tmw_chardata *> node
        if cd.data.data != NULL:
            if <uintptr_t> cd.data.data < 0x10000 or cd.data.length > (1 << 30):
                raise RuntimeError("Lexbor text layout differs (implausible text data)")
            text = PyUnicode_DecodeUTF8(<const char *> cd.data.data, cd.data.length, "replace")
    elif node.type == ELEMENT:
        el = <tmw_element *> node
        at = el.first_attr
        while at != NULL:
            if not plausible(at) or at.owner != el or at.node.owner_document != node.owner_document:
                raise RuntimeError("Lexbor element / attribute layout differs (attribute list)")
            s = f_attr_qname(<const void *> at, &ln)
            attrs.append((None if s == NULL else PyUnicode_DecodeUTF8(<const char *> s, ln, "replace"),
                          attr_key(at), attr_value(at)))
            at = at.next
        code = elem_code(el)
    return text, code, attrs, subtree_text(node) if node.type == ELEMENT else None


def _words(bytes data, Py_ssize_t width=80):
    """(len(text.split()), normalised text, tokens, lines, last, sentences) of
    UTF-8 bytes as the walk computes them (None for bad UTF-8), for tests."""
    cdef Own w
    own_reset(&w)
    w.cap = len(data) + 16
    w.buf = <char *> malloc(w.cap)
    if w.buf == NULL:
        raise MemoryError()
    try:
        if own_add(&w, data, len(data), width, False):
            return None
        own_end(&w, width)
        return (count_words(data, len(data)), PyUnicode_DecodeUTF8(w.buf, w.length, NULL), w.tokens, w.lines,
                w.last, w.sentences)
    finally:
        free(w.buf)


def _element_name(size_t node_id):
    """The element's qualified name through lxb_dom_element_qualified_name."""
    cdef size_t ln = 0
    cdef const unsigned char *s = f_elem_qname(<const void *> node_id, &ln)
    return None if s == NULL else PyUnicode_DecodeUTF8(<const char *> s, ln, "replace")


def _lexbor_functions():
    import ctypes

    import selectolax.lexbor as sl
    lib = ctypes.CDLL(sl.__file__)
    return [ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
            for name in ("lxb_dom_element_qualified_name", "lxb_dom_attr_qualified_name", "lxb_dom_attr_value_noi")]


def setup(names, dict value_cache_, value_fn_):
    """Load the tables and check the layout; raises (and leaves the walk
    unusable) if anything differs from what selectolax reports.

    names: {tag name: (is_block, anchor 0/1 a/2 area, group index or -1, cue bits, SEAM_* kind)}
    for every tag name any table of features.py mentions; value_cache_ /
    value_fn_: features._VALUE_BITS and features._value_bits."""
    global f_elem_qname, f_attr_qname, f_attr_value, code_block, code_seam, code_anchor, code_group, code_cue
    global name_code, value_cache, value_fn, ready, READY, text_tag_id
    from selectolax.lexbor import LexborHTMLParser

    ready = READY = False
    cdef Py_ssize_t m, c
    for c in range(WS_TABLE):
        is_ws[c] = chr(c).isspace()
    text_tag_id = (<tmw_node *> <size_t> LexborHTMLParser("<p>x</p>").css_first("p").first_child.mem_id).local_name
    addresses = _lexbor_functions()
    if not all(addresses):
        raise RuntimeError("selectolax does not export the Lexbor name functions")
    f_elem_qname = <tmw_name_f> <size_t> addresses[0]
    f_attr_qname = <tmw_name_f> <size_t> addresses[1]
    f_attr_value = <tmw_name_f> <size_t> addresses[2]

    ordered = sorted(names)
    m = len(ordered)
    free(code_block)
    free(code_seam)
    free(code_anchor)
    free(code_group)
    free(code_cue)
    code_block = <unsigned char *> calloc(m, 1)
    code_seam = <unsigned char *> calloc(m, 1)
    code_anchor = <unsigned char *> calloc(m, 1)
    code_group = <int64_t *> calloc(m, sizeof(int64_t))
    code_cue = <int64_t *> calloc(m, sizeof(int64_t))
    if not (code_block and code_seam and code_anchor and code_group and code_cue):
        raise MemoryError()
    name_code = {}
    for c in range(STATIC_IDS):
        tag_code[c] = -1
    probe = LexborHTMLParser("")
    keep = []
    cdef tmw_node *node
    for c, name in enumerate(ordered):
        is_block, anchor, group, cue, seam = names[name]
        code_block[c] = bool(is_block)
        code_seam[c] = seam
        code_anchor[c] = anchor
        code_group[c] = group
        code_cue[c] = cue
        name_code[name.encode()] = c
        element = probe.create_node(name)
        keep.append(element)
        node = <tmw_node *> <size_t> element.mem_id
        if element.tag != name or node.type != ELEMENT:
            raise RuntimeError(f"probe element {name!r} reads as {element.tag!r}")
        if (<tmw_element *> node).qualified_name == 0 and node.local_name < STATIC_IDS:
            tag_code[node.local_name] = c
    value_cache = value_cache_
    value_fn = value_fn_
    ready = True
    try:
        _check(ordered)
    except BaseException:
        ready = False
        raise
    READY = True


PROBE_HTML = """<!DOCTYPE html><html lang="en"><head><title>t</title></head>
<body class="Body main" id=top role="document" data-x>lead <b>bold</b> &amp; &nbsp; caf\u00e9 \u65e5\u672c\u00a0
<div id="nav" class="menu  nav-bar" ROLE="navigation" role="dup"><ul><li><a href="/a">A link</a></li>
<li><a href="">empty href</a><a name=x>no href</a><area href="/m"></li></ul></div>
<!-- a comment --><custom-widget class="sidebar">custom <text>x</text></custom-widget>
<logo>L</logo><byline id>B</byline><Story data-y="1">S</Story>
<svg viewBox="0 0 1 1"><a xlink:href="/x" href="/y">svg link</a><clipPath id=related></clipPath><text>t</text>
<foreignObject><p>inside svg</p></foreignObject></svg><math><mi>x</mi><mtext>m</mtext></math>
<table><caption>cap</caption><thead><tr><th>h</th></tr></thead><tbody><tr><td>1</td><td><p>2</p></td></tr></tbody>
<tfoot><tr><td>f</td></tr></tfoot></table><dl><dt>t</dt><dd>d</dd></dl><form><fieldset><legend>l</legend>
<textarea>ta</textarea><button>go</button></fieldset></form><details><summary>s</summary>d</details>
<iframe src="/f">if</iframe><main><article><header><h1>Title.</h1></header><section><p>One. Two!</p></section>
<aside>a</aside><footer>f</footer></article></main>
<this-is-a-very-long-custom-element-name-here>q</this-is-a-very-long-custom-element-name-here>
<div class="rail">run one <ul><li><a href="/1">one</a></li><li><a href="/2">two</a></li><li><a href="/3">3</a></li>
</ul> run two<span>\u00a0</span> <b>bold run</b><ul><li><a href="/4">4</a><a href="/5">5</a><a href="/6">6.</a>
</li></ul></div><p class="\u00e9l\u00e8ve">\u00e9</p><nav>n</nav><menu><li>m</li></menu><hr><pre>  pre  text  </pre>
<p><span class=dropcap>T</span>he un<em>be</em>lie<wbr>vable<br>x<img src=y>z <a href="/q">a</a>b<a href="/r">c</a>.
<b>x</b><i>y</i> w<input value=v>v<select><option>o</option></select>s Hel<span></span>lo<i></i><b>!</b>
<em>e</em><a id=t></a><em>f</em> a<svg><wbr>x</wbr><text>t</text></svg>b <b>　</b>c</p>
<div hidden>hidden</div></body></html>"""


def _check(ordered):
    """Every node of the probe page as read here == as selectolax reads it:
    first the nodes' own fields (tree pointers, type), then what the walk
    reads through them (text, tag, attributes)."""
    from selectolax.lexbor import LexborHTMLParser

    codes = {name: c for c, name in enumerate(ordered)}
    tree = LexborHTMLParser(PROBE_HTML)
    nodes = []
    todo = [tree.root]
    while todo:
        nd = todo.pop()
        nodes.append(nd)
        child = nd.first_child
        while child is not None:
            todo.append(child)
            child = child.next
    if len(nodes) < 100:
        raise RuntimeError(f"probe page parsed into {len(nodes)} nodes only")
    document = (<tmw_node *> <size_t> nodes[0].mem_id).owner_document
    for nd in nodes:
        typ, nxt, prv, par, first, last, local, doc = _links(nd.mem_id)
        for got, want in ((nxt, nd.next), (prv, nd.prev), (par, nd.parent), (first, nd.first_child),
                          (last, nd.last_child)):
            if got != (0 if want is None else want.mem_id):
                raise RuntimeError(f"Lexbor node layout differs (tree pointers of {nd.tag!r})")
        if (typ == ELEMENT) != nd.is_element_node or (typ == TEXT) != nd.is_text_node:
            raise RuntimeError(f"Lexbor node layout differs (type of {nd.tag!r})")
        if (typ == TEXT) != (local == text_tag_id) or doc != <size_t> document or not doc:
            raise RuntimeError(f"Lexbor node layout differs (tag id / document of {nd.tag!r})")
    # text nodes first: an element's check reads the text below it
    for nd in sorted(nodes, key=lambda nd: not nd.is_text_node):
        typ = _links(nd.mem_id)[0]
        text, code, attrs, has_text_ = _fields(nd.mem_id)
        if typ == TEXT and text != nd.text_content:
            raise RuntimeError(f"Lexbor text layout differs ({text!r} != {nd.text_content!r})")
        if typ == TEXT and text:
            words = _words(text.encode())
            if words is None or words[0] != len(text.split()) or words[1] != " ".join(text.split()):
                raise RuntimeError(f"words of {text!r} read as {words}")
        if typ == ELEMENT:
            if code != codes.get(nd.tag, -1) or _element_name(nd.mem_id) != nd.tag:
                raise RuntimeError(f"tag of {nd.tag!r} read as code {code}")
            if has_text_ != bool(nd.text(deep=True, separator=" ").split()):
                raise RuntimeError(f"text below {nd.tag!r} misjudged")
            want_attrs = nd.attributes
            got_attrs = {k: v for k, _, v in attrs}
            if got_attrs != want_attrs or list(got_attrs) != list(want_attrs):
                raise RuntimeError(f"attributes of {nd.tag!r} read as {got_attrs} != {want_attrs}")
            for k, key, _ in attrs:
                if key != {"id": A_ID, "class": A_CLASS, "role": A_ROLE, "href": A_HREF}.get(k, A_OTHER):
                    raise RuntimeError(f"attribute {k!r} classified as {key}")
