"""The compile cache on disk: hits, misses, what the key covers, damaged entries, concurrent writers."""

import json
import multiprocessing
import os
import subprocess
import sys
import warnings

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


def _recompiled(tag, k, path):
    """Compiles the variant again: a miss that rewrites a whole entry for the key."""
    _cutec_memo_forget()
    before = stats()
    again = cutec.compile(variant(tag))
    assert stats()["misses"] == before["misses"] + 1 and not again.cache_hit
    assert again.ptx == k.ptx and f".entry copy_{tag}" in again.ptx
    assert path.is_file() and not path.is_symlink()
    entry = json.loads(path.read_text())
    assert entry["key"] == k.key and entry["ptx"] == k.ptx
    assert _cache.load(k.key) is not None
    return again


def test_a_damaged_entry_is_a_miss_and_is_rewritten(private_cache):
    k = cutec.compile(variant("damaged"))
    path = private_cache / f"{k.key}.json"
    good = json.loads(path.read_text())
    damaged = {
        "truncated": '{"format": 2, "key": "',
        "not json": "{{",
        "a list": "[]",
        "no fields": json.dumps({"format": 2, "key": k.key}),
        "no digest": json.dumps({f: good[f] for f in ("format", "key", "ptx", "manifest", "warnings", "warnings_json")}),
        "a field not a string": json.dumps({**good, "warnings": None}),
        "deeply nested": "[" * 100000 + "]" * 100000,
    }
    for what, text in damaged.items():
        path.write_text(text)
        assert _cache.load(k.key) is None, what
        _recompiled("damaged", k, path)
    path.write_bytes(b'{"format": 2, "key": "\xff"}')
    assert _cache.load(k.key) is None
    _recompiled("damaged", k, path)


def test_an_edited_ptx_is_a_miss(private_cache):
    k = cutec.compile(variant("edited"))
    path = private_cache / f"{k.key}.json"
    entry = json.loads(path.read_text())
    entry["ptx"] = entry["ptx"].replace("ld.global", "st.global")
    assert entry["ptx"] != k.ptx
    path.write_text(json.dumps(entry))
    assert _cache.load(k.key) is None
    _recompiled("edited", k, path)


def test_another_programs_entry_under_the_key_is_a_miss(private_cache):
    a = cutec.compile(variant("first"))
    b = cutec.compile(variant("second"))
    path_b = private_cache / f"{b.key}.json"
    entry = json.loads((private_cache / f"{a.key}.json").read_text())
    path_b.write_text(json.dumps(entry))  # a's entry, its own key inside
    assert _cache.load(b.key) is None
    path_b.write_text(json.dumps({**entry, "key": b.key}))  # and with b's key written over a's
    assert _cache.load(b.key) is None
    _recompiled("second", b, path_b)


def test_a_link_to_dev_zero_a_fifo_and_a_large_file_are_misses(private_cache, monkeypatch):
    k = cutec.compile(variant("special"))
    path = private_cache / f"{k.key}.json"
    if os.path.exists("/dev/zero"):
        path.unlink()
        path.symlink_to("/dev/zero")
        assert _cache.load(k.key) is None
        _recompiled("special", k, path)
    path.unlink()
    os.mkfifo(path)  # opened without blocking, and no regular file
    assert _cache.load(k.key) is None
    _recompiled("special", k, path)
    # A regular entry through a link is not read either: the cache's files are its own.
    target = private_cache.parent / "elsewhere.json"
    target.write_text(path.read_text())
    path.unlink()
    path.symlink_to(target)
    assert _cache.load(k.key) is None
    _recompiled("special", k, path)
    monkeypatch.setattr(_cache, "MAX_ENTRY_BYTES", path.stat().st_size - 1)
    assert _cache.load(k.key) is None


def test_cache_hit_is_the_calls_own(private_cache):
    first = cutec.compile(variant("own"))
    second = cutec.compile(variant("own"))
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert second._native is first._native  # the same loaded module
    (private_cache / f"{first.key}.json").unlink()
    third = cutec.compile(variant("own"))
    assert (first.cache_hit, second.cache_hit, third.cache_hit) == (False, True, False)


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


def test_an_unwritable_cache_is_no_error_and_warns_once(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(_cache._Unwritable, "warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cutec.compile(variant("unwritable")).name == "copy_unwritable"
        assert cutec.compile(variant("unwritable2")).name == "copy_unwritable2"
    cache_warnings = [w for w in caught if issubclass(w.category, cutec.CacheWarning)]
    assert len(cache_warnings) == 1, [str(w.message) for w in caught]
    assert "cannot be written" in str(cache_warnings[0].message) and str(blocker) in str(cache_warnings[0].message)
    assert cache_warnings[0].filename == __file__  # points at the caller's compile
    assert cutec.cache_dir() == blocker / "cache"


@pytest.fixture(autouse=True)
def _forget():
    yield
    _cutec_memo_forget()
