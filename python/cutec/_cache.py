"""The compile cache on disk: one JSON file per build, keyed by everything that decides the build's output.

The key is the SHA-256 of: the source text and its name, the defines, the kernel asked for, the optimisation
level, the compiler (its version and the identity of the native module's file: size and modification time, so a
rebuilt compiler never reads an older one's entries) and the target architecture. An entry is written to a
temporary file in the cache's folder and renamed over its final name (``os.replace``, atomic on POSIX and Windows),
so concurrent processes compiling the same program each write a whole entry and readers never see half of one.
A file that cannot be read or parsed is a miss, and is overwritten.

The folder is ``$CUTEC_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/cutec`` or ``~/.cache/cutec``. ``CUTEC_CACHE=0``
turns the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

from . import _cutec

FORMAT = 1


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


def load(k: str) -> Optional[Dict[str, Any]]:
    try:
        with open(directory() / f"{k}.json", encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != k:
        return None
    return entry


def store(k: str, entry: Dict[str, Any]) -> None:
    """Writes the entry atomically; a cache that cannot be written is no error (the build is in hand)."""
    d = directory()
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{k[:16]}.", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"format": FORMAT, "key": k, **entry}, f)
            os.replace(tmp, d / f"{k}.json")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass
