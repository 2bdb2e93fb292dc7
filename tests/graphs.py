"""A plain breadth-first search: the reference the connected components are tested against."""


def bfs_components(edges) -> dict:
    """{vertex: least vertex of its component} for the vertices of `edges` (pairs)."""
    adjacency: dict = {}
    for a, b in edges:
        adjacency.setdefault(a, set()).add(b)
        adjacency.setdefault(b, set()).add(a)
    label: dict = {}
    for start in adjacency:
        if start in label:
            continue
        seen, frontier = {start}, [start]
        while frontier:
            frontier = [w for x in frontier for w in adjacency[x] if w not in seen and not seen.add(w)]
        for x in seen:
            label[x] = min(seen)
    return label
