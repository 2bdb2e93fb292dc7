"""Deterministic 64-bit ids (never monotonically_increasing_id: ids must agree
across runs, executors and nights)."""

from hashlib import blake2b

_PERSON = b"templatemine"


def hash64(text: str) -> int:
    """Signed 64-bit id of `text` (blake2b-64), fits Spark's LongType."""
    digest = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, person=_PERSON).digest()
    return int.from_bytes(digest, "big", signed=True)


def to_signed64(value: int) -> int:
    """Fold an unsigned 64-bit integer into the signed range of LongType."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= (1 << 63) else value
