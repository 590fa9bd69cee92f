"""The book's chapter "From Python" (book/src/python.md): its ```python listings run in order, in one namespace,
from the repository's root; listings marked `gpu` need a GPU and torch and are only compiled here (the GPU harness,
scripts/gpu/python_check.py, runs the same calls)."""

import re

from conftest import ROOT

CHAPTER = ROOT / "book" / "src" / "python.md"


def listings():
    text = CHAPTER.read_text()
    return [(m.group(1), text[: m.start()].count("\n") + 2, m.group(2))
            for m in re.finditer(r"^```python(,[\w,]+)?\n(.*?)^```", text, re.S | re.M)]


def test_the_chapter_has_listings_of_both_kinds():
    kinds = [info for info, _, _ in listings()]
    assert kinds.count(None) >= 3 and kinds.count(",gpu") >= 2


def test_the_listings_run(capsys):
    namespace = {"__name__": "book"}
    for info, line, code in listings():
        compiled = compile(code, f"{CHAPTER.name}:{line}", "exec")
        if info is None:
            exec(compiled, namespace)
    out = capsys.readouterr().out
    assert "softmax(x: f32[(M,4096):(4096,1)] read" in out
    assert "error[E0100]: cannot find `alpah` in this scope" in out
