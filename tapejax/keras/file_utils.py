"""tf.keras.utils.get_file: a file from a URL, cached where Keras 3 caches it, checked by its hash, and extracted.

The cache is `$KERAS_HOME` (else `~/.keras`, or `/tmp/.keras` when that is not writable) followed by
`cache_subdir` ("datasets"): a file already there is used without the network (re-downloaded only when a given
hash does not match), so data sets downloaded by real Keras are found by tapejax and the other way round. A
download goes through `urllib.request.urlopen`, so any URL scheme urllib opens works (`file://` included).

>>> import os, pathlib, tempfile
>>> import tapejax as tf
>>> source = pathlib.Path(tempfile.mkdtemp()) / "hello.txt"
>>> _ = source.write_text("hello")
>>> path = tf.keras.utils.get_file(origin=source.as_uri(), cache_dir=tempfile.mkdtemp())  # doctest: +ELLIPSIS
Downloading data from file://...
>>> os.path.basename(path), pathlib.Path(path).read_text()
('hello.txt', 'hello')
"""

from __future__ import annotations

import hashlib
import os
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from typing import Any


def keras_home() -> str:
    """Keras's home: `$KERAS_HOME`, else `~/.keras` (`/tmp/.keras` when the home directory is not writable).

    Differences from TensorFlow: Keras reads `KERAS_HOME` once, when it is imported; tapejax on each call."""
    if os.environ.get("KERAS_HOME"):
        return os.environ["KERAS_HOME"]
    base = os.path.expanduser("~")
    return os.path.join(base if os.access(base, os.W_OK) else "/tmp", ".keras")


def _hasher(algorithm: str, file_hash: str | None = None) -> Any:
    # Keras's rule: 'auto' means sha256 for a 64-digit hash, md5 (the legacy hash) otherwise.
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()


def hash_file(fpath: str, algorithm: Any = "sha256", chunk_size: int = 65535) -> str:
    """The hex digest of a file: algorithm 'sha256', 'md5' (also what 'auto' means here) or a hashlib object."""
    hasher = _hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath: str, file_hash: str, algorithm: str = "auto", chunk_size: int = 65535) -> bool:
    """Whether the file's digest is `file_hash` (sha256 for a 64-digit hash under 'auto', else md5)."""
    return str(hash_file(fpath, _hasher(algorithm, file_hash), chunk_size)) == str(file_hash)


def _inside(base: str, name: str) -> bool:
    target = os.path.realpath(os.path.join(base, name))
    return os.path.commonpath([base, target]) == base


def _safe_members(archive: Any, base: str) -> list[Any]:
    """The members that land inside `base` (links too must point inside); the others are skipped with Keras's
    warning, so a hostile archive cannot write elsewhere."""
    base = os.path.realpath(base)
    safe = []
    for info in (archive.infolist() if isinstance(archive, zipfile.ZipFile) else archive.getmembers()):
        name = info.filename if isinstance(archive, zipfile.ZipFile) else info.name
        ok = _inside(base, name)
        if ok and isinstance(info, tarfile.TarInfo) and (info.issym() or info.islnk()):
            link = info.linkname if info.islnk() else os.path.join(os.path.dirname(name), info.linkname)
            ok = _inside(base, link)
        if ok:
            safe.append(info)
        else:
            warnings.warn(f"Skipping invalid path during archive extraction: '{name}'.", stacklevel=3)
    return safe


def extract_archive(file_path: Any, path: Any = ".", archive_format: Any = "auto") -> bool:
    """Extracts a tar (any compression) or zip archive into `path`; False if it is none of `archive_format`
    ('auto': tar then zip; 'tar', 'zip', a list, or None for none). A failed extraction removes `path`."""
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else [archive_format] if isinstance(archive_format, str) \
        else list(archive_format)
    file_path, path = os.fspath(file_path), os.fspath(path)
    for kind in formats:
        if kind == "tar":
            is_kind, open_archive = tarfile.is_tarfile, tarfile.open
        elif kind == "zip":
            is_kind, open_archive = zipfile.is_zipfile, zipfile.ZipFile
        else:
            raise NotImplementedError(kind)
        if not is_kind(file_path):
            continue
        with open_archive(file_path) as archive:
            try:
                members = _safe_members(archive, path)
                if isinstance(archive, tarfile.TarFile) and hasattr(tarfile, "data_filter"):
                    archive.extractall(path, members=members, filter="data")
                else:
                    archive.extractall(path, members=members)
            except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                if os.path.isfile(path):
                    os.remove(path)
                elif os.path.exists(path):
                    import shutil
                    shutil.rmtree(path)
                raise
        return True
    return False


def _download(origin: str, target: str) -> None:
    """Copies `origin` to `target` in chunks through `urllib.request.urlopen`, with Keras's progress bar."""
    from tapejax.keras.utils import Progbar  # utils re-exports this module's functions

    with urllib.request.urlopen(origin) as response:
        length = response.info().get("Content-Length")
        total = int(length.strip()) if length is not None else None
        progbar = Progbar(total)
        done = 0
        with open(target, "wb") as out:
            while chunk := response.read(8192):
                out.write(chunk)
                done += len(chunk)
                if total is None or done < total:
                    progbar.update(done)
        if total is not None:
            progbar.update(total)


def get_file(fname: Any = None, origin: str | None = None, untar: bool = False, md5_hash: str | None = None,
             file_hash: str | None = None, cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format: Any = "auto", cache_dir: Any = None,
             force_download: bool = False) -> str:
    """The local path of the file at `origin`, downloaded into `cache_dir/cache_subdir` unless already there.

    `fname` defaults to the URL's last path component (it may not contain a directory). With `file_hash` (sha256
    or, legacy, md5 via `md5_hash` or `hash_algorithm`), a cached file that does not match is downloaded again
    and a download that does not match raises. With `extract` (or `untar`), the archive is kept as `fname`
    (`fname_archive` when `fname` has no extension) and extracted, on every call, into `fname_extracted`
    (`fname` when it has no extension; `fname` up to its first dot otherwise); that directory is returned.

    Raises:
      ValueError: no `origin`, no file name, a path as `fname`, a download whose hash does not match.
      Exception: a download that fails ("URL fetch failure on ...", Keras's plain `Exception`); the partial
        file is removed.
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    if cache_dir is None:
        cache_dir = keras_home()
        try:  # Keras makes its home when it is imported
            os.makedirs(os.path.expanduser(cache_dir), exist_ok=True)
        except OSError:
            pass
    base = os.path.expanduser(os.fspath(cache_dir))
    if not os.access(base, os.W_OK):
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    given = fname
    fname = os.fspath(fname) if fname is not None else None
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'.Please specify the "
                             "`fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    target = os.path.join(datadir, fname)
    if extract or untar:
        if given and "." in fname:
            extraction_dir = os.path.join(datadir, fname[:fname.find(".")] + "_extracted")
        else:
            extraction_dir, target = target, target + "_archive"
    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and not validate_file(target, file_hash, hash_algorithm):
        print(f"A local file was found, but it seems to be incomplete or outdated because the {hash_algorithm} "
              f"file hash does not match the original value of {file_hash} so we will re-download the data.")
        download = True
    if download:
        print(f"Downloading data from {origin}")
        sys.stdout.flush()
        try:
            try:
                _download(origin, target)
            except urllib.error.HTTPError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.code} -- {e.msg}") from e
            except urllib.error.URLError as e:
                raise Exception(f"URL fetch failure on {origin}: {e.errno} -- {e.reason}") from e
        except (Exception, KeyboardInterrupt):
            if os.path.exists(target):
                os.remove(target)
            raise
        if file_hash is not None and not validate_file(target, file_hash, hash_algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not "
                             f"match the provided value of {file_hash}.")
    if extract or untar:
        if not extract_archive(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target
