"""Fixtures of the GPU-free suite: the repository's root, a private compile cache, and stand-ins for CUDA arrays."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class CudaArray:
    """An object with ``__cuda_array_interface__`` (version 3) and no memory behind it: enough for every check
    before a launch, which only reads the description."""

    def __init__(self, shape, typestr="<f4", ptr=0x7F0000000000, strides=None, readonly=False, **extra):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, readonly),
            "strides": strides,
            "version": 3,
            **extra,
        }


@pytest.fixture
def root():
    return ROOT


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test compiles into its own cache folder, and starts in the repository's root."""
    d = tmp_path / "cache"
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(d))
    monkeypatch.delenv("CUTEC_CACHE", raising=False)
    monkeypatch.chdir(ROOT)
    return d


@pytest.fixture
def fake():
    return CudaArray


def example(name):
    return str(ROOT / "examples" / (name + ".cute"))
