"""Recognise an image file by its first bytes (never by its name)."""
from __future__ import annotations

from pathlib import Path

SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "png", "image/png"),
    (b"\xff\xd8\xff", "jpeg", "image/jpeg"),
    (b"GIF87a", "gif", "image/gif"),
    (b"GIF89a", "gif", "image/gif"),
    (b"%PDF-", "pdf", "application/pdf"),
)
ALIASES = {"jpg": "jpeg"}


def image_format(path: Path) -> tuple[str, str] | None:
    """(format, media type) of an image file, or None when it is not one we know."""
    with open(path, "rb") as handle:
        head = handle.read(512)
    for magic, name, media in SIGNATURES:
        if head.startswith(magic):
            return name, media
    text = head.lstrip().lower()
    if text.startswith(b"<svg") or (text.startswith(b"<?xml") and b"<svg" in text):
        return "svg", "image/svg+xml"
    return None


def same_format(measured: str, expected: str) -> bool:
    """Whether two image format names (or suffixes) mean the same format."""
    return _normal(measured) == _normal(expected)


def _normal(name: str) -> str:
    bare = name.lower().lstrip(".")
    return ALIASES.get(bare, bare)
