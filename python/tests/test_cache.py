"""The compile cache on disk: hits, misses, what the key covers, damaged entries, concurrent writers."""

import json
import multiprocessing
import os
import subprocess
import sys

import pytest

import cutec
from cutec import _cache
from conftest import ROOT

COPY = (ROOT / "examples" / "copy.cute").read_text()


def variant(tag):
    """The copy kernel under another name: a program no other test compiled in this process."""
    return COPY.replace("kernel copy", f"kernel copy_{tag}")


def stats():
    return dict(cutec.cache_stats())


def test_a_second_compile_is_a_hit(private_cache):
    before = stats()
    k = cutec.compile(variant("hit"))
    assert not k.cache_hit
    entries = list(private_cache.glob("*.json"))
    assert [e.name for e in entries] == [f"{k.key}.json"]
    again = cutec.compile(variant("hit"))
    after = stats()
    assert (after["misses"] - before["misses"], after["hits"] - before["hits"]) == (1, 1)
    assert again.ptx == k.ptx


def test_a_hit_in_a_fresh_process_reads_the_entry(private_cache):
    k = cutec.compile(variant("fresh"))
    src = private_cache.parent / "fresh.cute"
    src.write_text(variant("fresh"))
    # The text again (a path would name it differently, and the name is part of the key).
    code = "import cutec, sys; k = cutec.compile(open(sys.argv[1]).read()); print(k.cache_hit, k.key)"
    out = subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", k.key]


def test_the_key_covers_defines_kernel_name_and_options():
    base = _cache.key("a.cute", "src", [("N", 1)], None, 3)
    assert base == _cache.key("a.cute", "src", [("N", 1)], None, 3)
    others = {
        _cache.key("b.cute", "src", [("N", 1)], None, 3),
        _cache.key("a.cute", "src2", [("N", 1)], None, 3),
        _cache.key("a.cute", "src", [("N", 2)], None, 3),
        _cache.key("a.cute", "src", [("N", True)], None, 3),
        _cache.key("a.cute", "src", [("N", 1)], "k", 3),
        _cache.key("a.cute", "src", [("N", 1)], None, 2),
    }
    assert base not in others and len(others) == 6
    assert _cutec_identity_in_key()


def _cutec_identity_in_key():
    return cutec.__version__ in _cache.COMPILER and cutec.TARGET == "sm_90a"


def test_a_damaged_entry_is_a_miss_and_is_rewritten(private_cache):
    k = cutec.compile(variant("damaged"))
    path = private_cache / f"{k.key}.json"
    path.write_text('{"format": 1, "key": "')
    assert _cache.load(k.key) is None
    _cutec_memo_forget()
    before = stats()
    again = cutec.compile(variant("damaged"))
    assert stats()["misses"] == before["misses"] + 1 and not again.cache_hit
    assert json.loads(path.read_text())["key"] == k.key


def _cutec_memo_forget():
    from cutec import _kernel

    _kernel._MEMO.clear()


def test_no_cache_when_turned_off(private_cache, monkeypatch):
    monkeypatch.setenv("CUTEC_CACHE", "0")
    cutec.compile(variant("off"))
    assert not private_cache.exists() or not list(private_cache.glob("*.json"))
    cutec.compile(variant("off2"), cache=False)
    assert not private_cache.exists() or not list(private_cache.glob("*.json"))


def _compile_in_child(args):
    cache, tag = args
    os.environ["CUTEC_CACHE_DIR"] = cache
    k = cutec.compile(variant(tag))
    return k.key, len(k.ptx)


def test_concurrent_processes_share_the_cache(private_cache):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.map(_compile_in_child, [(str(private_cache), "race")] * 8)
    assert len(set(results)) == 1
    files = sorted(p.name for p in private_cache.iterdir())
    assert files == [f"{results[0][0]}.json"], files  # one whole entry, no temporary file left
    entry = json.loads((private_cache / files[0]).read_text())
    assert entry["key"] == results[0][0] and ".entry copy_race" in entry["ptx"]


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(blocker / "cache"))
    assert cutec.compile(variant("unwritable")).name == "copy_unwritable"
    assert cutec.cache_dir() == blocker / "cache"


@pytest.fixture(autouse=True)
def _forget():
    yield
    _cutec_memo_forget()
