"""tf.io.read_file / write_file / matching_files and tf.io.gfile: files as string tensors and Python objects.

Paths are local (or anything Python's `open` and `glob` reach); TF's filesystem plugins (gs://, s3://, hdfs://)
are not provided. Missing files raise TF's NotFoundError.
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import Any

import numpy as np

from tapejax._src import errors
from tapejax.ops.strings import _strings, _tensor


def path_of(value: Any, api: str) -> str:
    """A path given as str, bytes, os.PathLike or a scalar string tensor."""
    if isinstance(value, str | bytes | os.PathLike):
        return os.fsdecode(value)
    strings = _strings(value, api)
    if strings.ndim:
        raise errors.InvalidArgumentError(None, None, f"{api}: the filename must be a scalar, got shape "
                                          f"{list(strings.shape)}")
    return os.fsdecode(strings.item())


def not_found(path: str, what: str = "No such file or directory") -> errors.NotFoundError:
    return errors.NotFoundError(None, None, f"{path}; {what}")


def read_file(filename: Any, name: str | None = None):
    """The contents of a file as a scalar string tensor (`tf.io.read_file`).

    >>> import tapejax as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> tf.io.write_file(path, "hello")
    >>> print(tf.io.read_file(path))
    tf.Tensor(b'hello', shape=(), dtype=string)
    """
    path = path_of(filename, "ReadFile")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise not_found(path) from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    return _tensor(np.asarray(data, dtype=object))


def write_file(filename: Any, contents: Any, name: str | None = None) -> None:
    """Writes a scalar string to a file, creating or replacing it (`tf.io.write_file`)."""
    path = path_of(filename, "WriteFile")
    data = _strings(contents, "WriteFile")
    if data.ndim:
        raise errors.InvalidArgumentError(None, None, f"Contents tensor must be scalar, but had shape: "
                                          f"{list(data.shape)} [Op:WriteFile]")
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)  # as TF, which creates the parent directories
    with open(path, "wb") as f:
        f.write(data.item())


def matching_files(pattern: Any, name: str | None = None):
    """The sorted file names matching a glob pattern, as a string tensor (`tf.io.matching_files`)."""
    patterns = np.atleast_1d(_strings(pattern, "MatchingFiles"))
    names = sorted({os.fsencode(p) for pat in patterns for p in _glob.glob(os.fsdecode(pat))})
    out = np.empty(len(names), dtype=object)
    out[:] = names
    return _tensor(out)


# -- tf.io.gfile ------------------------------------------------------------------------------------------------

class GFile:
    """A file object (`tf.io.gfile.GFile`): read/write/readline/readlines/iteration/seek/tell/flush/close, as
    a context manager. Text modes read str, binary modes bytes; a missing file raises NotFoundError."""

    def __init__(self, name: Any, mode: str = "r"):
        self.name = path_of(name, "GFile")
        self.mode = mode
        self._file: Any = None

    def _open(self) -> Any:
        if self._file is None:
            try:
                self._file = open(self.name, self.mode if "b" in self.mode else self.mode, **(
                    {} if "b" in self.mode else {"encoding": "utf-8", "newline": ""}))
            except FileNotFoundError:
                raise not_found(self.name) from None
        return self._file

    def read(self, n: int = -1) -> Any:
        return self._open().read(n)

    def readline(self) -> Any:
        return self._open().readline()

    def readlines(self) -> list:
        return self._open().readlines()

    def write(self, file_content: Any) -> None:
        f = self._open()
        if "b" not in self.mode and isinstance(file_content, bytes):
            file_content = file_content.decode("utf-8")
        elif "b" in self.mode and isinstance(file_content, str):
            file_content = file_content.encode("utf-8")
        f.write(file_content)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._open().seek(offset, whence)

    def tell(self) -> int:
        return self._open().tell()

    def size(self) -> int:
        return os.path.getsize(self.name)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self) -> Iterator[Any]:
        return iter(self._open())

    def __next__(self) -> Any:
        return next(self._open())

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def exists(path: Any) -> bool:
    return os.path.exists(path_of(path, "gfile.exists"))


def isdir(path: Any) -> bool:
    return os.path.isdir(path_of(path, "gfile.isdir"))


def glob(pattern: Any) -> list[str]:
    """The paths matching a pattern (or list of patterns), as str (`tf.io.gfile.glob`)."""
    patterns = [pattern] if isinstance(pattern, str | bytes | os.PathLike) else list(pattern)
    return sorted({p for pat in patterns for p in _glob.glob(path_of(pat, "gfile.glob"))})


def listdir(path: Any) -> list[str]:
    path = path_of(path, "gfile.listdir")
    if not os.path.isdir(path):
        raise not_found(path, "Could not find directory")
    return sorted(os.listdir(path))


def makedirs(path: Any) -> None:
    os.makedirs(path_of(path, "gfile.makedirs"), exist_ok=True)


def mkdir(path: Any) -> None:
    path = path_of(path, "gfile.mkdir")
    try:
        os.mkdir(path)
    except FileExistsError:
        raise errors.AlreadyExistsError(None, None, f"{path}; File exists") from None
    except FileNotFoundError:
        raise not_found(path) from None


def remove(path: Any) -> None:
    path = path_of(path, "gfile.remove")
    try:
        os.remove(path)
    except FileNotFoundError:
        raise not_found(path) from None


def rmtree(path: Any) -> None:
    path = path_of(path, "gfile.rmtree")
    if not os.path.exists(path):
        raise not_found(path)
    shutil.rmtree(path)


def _refuse_existing(path: str, overwrite: bool) -> None:
    if not overwrite and os.path.exists(path):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {path}")


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    src, dst = path_of(src, "gfile.rename"), path_of(dst, "gfile.rename")
    _refuse_existing(dst, overwrite)
    if not os.path.exists(src):
        raise not_found(src)
    os.replace(src, dst)


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    src, dst = path_of(src, "gfile.copy"), path_of(dst, "gfile.copy")
    _refuse_existing(dst, overwrite)
    if not os.path.exists(src):
        raise not_found(src)
    shutil.copyfile(src, dst)


def walk(top: Any, topdown: bool = True, onerror: Any = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(directory, subdirectories, files) for each directory under `top` (`tf.io.gfile.walk`)."""
    for directory, subdirs, files in os.walk(path_of(top, "gfile.walk"), topdown=topdown, onerror=onerror):
        yield directory, sorted(subdirs), sorted(files)


def stat(path: Any) -> Any:
    path = path_of(path, "gfile.stat")
    if not os.path.exists(path):
        raise not_found(path)
    info = os.stat(path)
    return _FileStatistics(info.st_size, int(info.st_mtime_ns), os.path.isdir(path))


class _FileStatistics:
    def __init__(self, length: int, mtime_nsec: int, is_directory: bool):
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory
