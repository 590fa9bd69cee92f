"""The compile cache on disk: one JSON file per build, keyed by everything that decides the build's output.

The key is the SHA-256 of: the source text and its name, the defines, the kernel asked for, the optimisation
level, the compiler (its version and the identity of the native module's file: size and modification time, so a
rebuilt compiler never reads an older one's entries) and the target architecture. An entry is written to a
temporary file in the cache's folder and renamed over its final name (``os.replace``, atomic on POSIX and Windows),
so concurrent processes compiling the same program each write a whole entry and readers never see half of one.

No entry is trusted: each holds its key and a digest of its key and fields, and is read through a cap, never through
a symbolic link. A file that is not a whole entry written for its key (damaged, edited, another program's, too
large, not a regular file) is a miss, and is overwritten. A cache that cannot be written warns once a process.

The folder is ``$CUTEC_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/cutec`` or ``~/.cache/cutec``. ``CUTEC_CACHE=0``
turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, Mapping, Optional

from . import _cutec
from ._errors import CacheWarning

FORMAT = 2


def _compiler_identity() -> str:
    try:
        st = os.stat(_cutec.__file__)
        return f"{_cutec.__version__}:{st.st_size}:{st.st_mtime_ns}"
    except (OSError, AttributeError):
        return f"{_cutec.__version__}:unknown"


COMPILER = _compiler_identity()


class Stats:
    """Hits and misses of this process (``cutec.cache_stats()``)."""

    hits = 0
    misses = 0


def enabled() -> bool:
    return os.environ.get("CUTEC_CACHE", "1") not in ("0", "false", "no", "off")


def directory() -> Path:
    d = os.environ.get("CUTEC_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cutec"


def key(name: str, source: str, defines: Any, kernel: Optional[str], opt_level: int) -> str:
    material = json.dumps(
        {
            "format": FORMAT,
            "compiler": COMPILER,
            "target": _cutec.TARGET,
            "name": name,
            "source": source,
            "defines": defines,
            "kernel": kernel,
            "opt_level": opt_level,
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()


# What an entry holds besides its format, its key and its digest: the build's output, every field a string.
FIELDS = ("ptx", "manifest", "ir", "warnings", "warnings_json")

# The most bytes of an entry read back: far more than any module's PTX and manifest. A larger file (or an endless
# one) is a miss, read no further.
MAX_ENTRY_BYTES = 64 << 20


def digest(k: str, entry: Mapping[str, Any]) -> str:
    """The SHA-256 of an entry's key and fields, stored in it: an entry whose text changed after it was written
    (an edited PTX, a field from another entry) no longer matches it."""
    h = hashlib.sha256(k.encode())
    for field in FIELDS:
        value = entry[field].encode("utf-8", "surrogatepass")
        h.update(b"\0%s\0%d\0" % (field.encode(), len(value)))
        h.update(value)
    return h.hexdigest()


def _read_capped(path: Path, limit: int) -> Optional[bytes]:
    """The bytes of a regular file, not through a symbolic link, if it has at most `limit` of them."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(limit + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data if len(data) <= limit else None


def load(k: str) -> Optional[Dict[str, Any]]:
    """The entry of key `k`, if there is a whole one written for that key: anything else (no file, a symbolic
    link, a file that is not regular or too large, not UTF-8 or JSON, another key, a missing or mistyped field, a
    digest that does not match the fields) is a miss, and the build that follows overwrites it."""
    data = _read_capped(directory() / f"{k}.json", MAX_ENTRY_BYTES)
    if data is None:
        return None
    try:
        entry = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != k:
        return None
    if not all(isinstance(entry.get(field), str) for field in FIELDS) or entry.get("digest") != digest(k, entry):
        return None
    return {field: entry[field] for field in FIELDS}


class _Unwritable:
    """Whether this process has warned that the cache cannot be written."""

    warned = False


def store(k: str, entry: Mapping[str, Any]) -> None:
    """Writes the entry atomically, with its key and digest. A cache that cannot be written is no error (the build
    is in hand): the first failure of a process issues a :class:`cutec.CacheWarning`."""
    d = directory()
    record = {"format": FORMAT, "key": k, "digest": digest(k, entry), **{f: entry[f] for f in FIELDS}}
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{k[:16]}.", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f)
            os.replace(tmp, d / f"{k}.json")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        if not _Unwritable.warned:
            _Unwritable.warned = True
            warnings.warn(
                CacheWarning(f"the compile cache `{d}` cannot be written ({e}); builds go on without it"),
                stacklevel=3,
            )
