"""The kernel image's name: a content hash of what defines it, so a rebuild happens only when
the Dockerfile, the pinned requirements or the offline build (its base packages) change
(`make image` is a no-op otherwise).

`python -m runner.sandbox.image tag` prints the tag (kernel_image/build.sh uses it).
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from runner.core.paths import PROJECT_ROOT

IMAGE_DIR = PROJECT_ROOT / "kernel_image"
REPOSITORY = "eegbench-kernel"
# What the image is built from: a change to any of these is a different image.
DEFINING_FILES = ("Dockerfile", "requirements.txt", "build.sh")


def content_hash(image_dir: Path = IMAGE_DIR) -> str:
    """16 hex digits of sha256 over the defining files: the same files, the same image."""
    digest = hashlib.sha256()
    for name in DEFINING_FILES:
        digest.update(name.encode() + b"\0" + (image_dir / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def image_tag(image_dir: Path = IMAGE_DIR) -> str:
    """eegbench-kernel:<content hash>, the image the docker backend runs."""
    return f"{REPOSITORY}:{content_hash(image_dir)}"


def main(argv: list[str]) -> int:
    """`python -m runner.sandbox.image tag`: print the tag (for kernel_image/build.sh)."""
    if argv != ["tag"]:
        print("usage: python -m runner.sandbox.image tag", file=sys.stderr)
        return 2
    print(image_tag())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
