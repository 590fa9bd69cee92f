"""The errors of cutec: compile errors carry the compiler's diagnostics as data; launch errors name the parameter."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple


@dataclass(frozen=True)
class Label:
    """A span of source a diagnostic points at. Lines and columns are 1-based (columns count characters);
    ``start`` and ``end`` are byte offsets into the file."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    start: int
    end: int
    message: str
    primary: bool


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of the compiler, as ``cutec check --error-format=json`` prints it."""

    severity: str
    """``"error"``, ``"warning"`` or ``"note"``."""
    code: Optional[str]
    """The stable code (``"E0101"``); ``cutec.explain(code)`` says what it means."""
    message: str
    labels: Tuple[Label, ...] = ()
    notes: Tuple[str, ...] = ()
    help: Tuple[str, ...] = ()

    @property
    def primary(self) -> Optional[Label]:
        """The label the diagnostic is about (None for a diagnostic about no text, such as the GPU's)."""
        return next((label for label in self.labels if label.primary), None)

    @staticmethod
    def from_json_lines(text: str) -> List["Diagnostic"]:
        out = []
        for line in text.splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            labels = tuple(
                Label(
                    file=l["file"],
                    line=l["line"],
                    column=l["column"],
                    end_line=l["end_line"],
                    end_column=l["end_column"],
                    start=l["start"],
                    end=l["end"],
                    message=l["message"],
                    primary=l["primary"],
                )
                for l in d.get("labels", [])
            )
            out.append(
                Diagnostic(
                    severity=d["severity"],
                    code=d.get("code"),
                    message=d["message"],
                    labels=labels,
                    notes=tuple(d.get("notes", [])),
                    help=tuple(d.get("help", [])),
                )
            )
        return out


class CompileError(Exception):
    """The program has errors. ``str(error)`` is what ``cutec build`` prints (without colour);
    ``error.diagnostics`` holds them as data."""

    def __init__(self, rendered: str, diagnostics: List[Diagnostic]):
        super().__init__(rendered)
        self.rendered = rendered
        self.diagnostics = diagnostics

    @property
    def errors(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def __str__(self) -> str:
        return self.rendered

    def __reduce__(self) -> Tuple[Any, ...]:
        # An exception pickles as its class and `args` (here only the text): give back the diagnostics too, so that
        # a process pool's worker hands the whole error to its parent.
        return (type(self), (self.rendered, self.diagnostics))


class CompileWarning(UserWarning):
    """The compiler's warnings of a successful build, rendered as ``cutec build`` prints them."""


class LaunchError(Exception):
    """The arguments of a call do not fit the kernel's manifest (raised before anything runs), or the launch
    failed. ``param`` names the parameter when the error is about one."""

    def __init__(self, message: str, kernel: Optional[str] = None, param: Optional[str] = None):
        super().__init__(message)
        self.kernel = kernel
        self.param = param

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (str(self), self.kernel, self.param))


class CacheWarning(UserWarning):
    """The compile cache cannot be written (issued once a process): builds go on, uncached."""


__all__ = ["Label", "Diagnostic", "CompileError", "CompileWarning", "LaunchError", "CacheWarning"]
