"""Type stubs of the native module (python/src/lib.rs). Users call the API of the ``cutec`` package instead."""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str
TARGET: str

def compile_source(
    name: str,
    source: str,
    defines: Sequence[Tuple[str, Union[int, bool]]],
    kernel: Optional[str] = None,
    opt_level: int = 3,
) -> Dict[str, Any]:
    """Compiles in-process. ``{"ok": True, "ptx", "manifest", "ir", "warnings", "warnings_json"}`` or
    ``{"ok": False, "rendered", "diagnostics_json"}``."""

def explain(code: str) -> Optional[Tuple[str, str]]: ...
def read_source(path: str) -> Dict[str, Any]:
    """Reads a source file as ``cutec build`` does. ``{"ok": True, "text"}`` or ``{"ok": False, "rendered",
    "diagnostics_json"}`` (E0400, E0008)."""

class NativeKernel:
    def __init__(self, ptx: str, manifest: str, name: str) -> None: ...
    @property
    def param_names(self) -> List[str]: ...
    @property
    def scalar_names(self) -> List[str]: ...
    def plan(self, args: Tuple[Any, ...], device: Optional[int] = None) -> Dict[str, Any]: ...
    def launch(self, args: Tuple[Any, ...]) -> None: ...
    def load(self, device: int) -> None: ...
    def run_cpu(
        self, ir: str, args: Tuple[Any, ...], schedule: Optional[str] = None
    ) -> List[Optional[bytes]]: ...
