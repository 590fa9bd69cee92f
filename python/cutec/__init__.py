"""cutec from Python: compile ``.cute`` kernels in-process and launch them on torch tensors.

>>> import cutec, torch
>>> softmax = cutec.compile("examples/softmax.cute", defines={"N": 4096})
>>> x = torch.randn(32, 4096, device="cuda")
>>> y = torch.empty_like(x)
>>> softmax(x, y)                      # on torch's current stream, no copies

``cutec.compile`` returns a :class:`Kernel` (``.manifest``, ``.ptx``, ``.signature``); compile errors raise
:class:`CompileError` with the diagnostics as data; a call whose arguments do not fit the manifest raises
:class:`LaunchError` naming the parameter, before anything runs. Builds are cached on disk (``cache_dir()``).
The compiler and the runtime are linked into the native module ``cutec._cutec``: no subprocess, no toolkit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Tuple

from . import _cache, _cutec
from ._errors import CacheWarning, CompileError, CompileWarning, Diagnostic, Label, LaunchError
from ._kernel import Kernel, Param, compile

__version__: str = _cutec.__version__
TARGET: str = _cutec.TARGET
"""The GPU architecture the compiler generates code for (``sm_90a``)."""


def explain(code: str) -> Optional[Tuple[str, str]]:
    """What an error code means, as ``cutec explain CODE`` prints it: ``(title, explanation)``, or None."""
    return _cutec.explain(code)


def cache_dir() -> Path:
    """The folder of the compile cache: ``$CUTEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/cutec`` or
    ``~/.cache/cutec``. ``CUTEC_CACHE=0`` turns the cache off."""
    return _cache.directory()


def cache_stats() -> Dict[str, int]:
    """This process's compile-cache hits and misses."""
    return {"hits": _cache.Stats.hits, "misses": _cache.Stats.misses}


__all__ = [
    "compile",
    "Kernel",
    "Param",
    "CompileError",
    "CompileWarning",
    "Diagnostic",
    "Label",
    "LaunchError",
    "CacheWarning",
    "explain",
    "cache_dir",
    "cache_stats",
    "TARGET",
    "__version__",
]
