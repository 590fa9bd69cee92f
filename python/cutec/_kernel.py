"""``cutec.compile`` and the kernel object it returns."""

from __future__ import annotations

import copy
import json
import operator
import os
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _cache, _cutec
from ._errors import CompileError, CompileWarning, Diagnostic, LaunchError

# The torch dtype of each manifest element type (by attribute name of the torch module).
TORCH_DTYPES = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "f64": "float64",
    "i8": "int8",
    "u8": "uint8",
    "i32": "int32",
    "i64": "int64",
    "u32": "uint32",
    "bool": "bool",
}


def _layout_text(t: Any) -> str:
    if isinstance(t, list):
        return "(" + ",".join(_layout_text(x) for x in t) + ")"
    return str(t)


def _leaves(t: Any) -> List[Any]:
    if isinstance(t, list):
        return [leaf for x in t for leaf in _leaves(x)]
    return [t]


class Param:
    """One parameter of a kernel, from its manifest entry."""

    __slots__ = ("name", "kind", "dtype", "access", "shape", "stride")

    def __init__(self, entry: Dict[str, Any]):
        self.name: str = entry["name"]
        self.kind: str = entry["kind"]
        self.dtype: str = entry["dtype"]
        self.access: Optional[str] = entry.get("access", "read_write") if self.kind == "tensor" else None
        layout = entry.get("layout", {})
        self.shape: List[Any] = layout.get("shape", [])
        self.stride: List[Any] = layout.get("stride", [])

    @property
    def is_output(self) -> bool:
        """A tensor the kernel only writes: what ``empty_outputs`` allocates and a torch op returns."""
        return self.kind == "tensor" and self.access == "write"

    def __str__(self) -> str:
        if self.kind == "scalar":
            return f"{self.name}: {self.dtype}"
        layout = f"{_layout_text(self.shape)}:{_layout_text(self.stride)}"
        return f"{self.name}: {self.dtype}[{layout}] {self.access}"

    def __repr__(self) -> str:
        return f"Param({self})"


class Kernel:
    """A compiled kernel: call it on tensors to launch it.

    ``kernel(*args, **kwargs)`` takes the kernel's parameters by position or by name: tensors (torch tensors on
    a CUDA device, or any object with ``__cuda_array_interface__`` or ``__dlpack__``) and scalars (Python
    numbers). Every argument is checked against the manifest first (element type, rank, shapes, strides,
    alignment, the dynamic dimensions' agreement, the tensor maps' rules); a mismatch raises
    :class:`cutec.LaunchError` naming the parameter, and nothing runs. The kernel then runs on torch's current
    stream of the tensors' device, on the tensors' own memory, without copies, asynchronously like any CUDA
    launch.

    ``kernel(*args, device="cpu")`` runs the call on the CPU instead, on numpy arrays or CPU torch tensors
    (written in place), through the same checks: the interpreter of the scheduled IR (``cutec run --cpu``),
    which also reports races and deadlocks as :class:`cutec.LaunchError`. ``schedule="latest"`` or
    ``"seed=N"`` changes when its TMA loads land.
    """

    def __init__(
        self,
        ptx: str,
        manifest: Dict[str, Any],
        name: str,
        warnings_: List[Diagnostic],
        key: str,
        cache_hit: bool,
        ir: Optional[str] = None,
    ):
        self.ptx: str = ptx
        """The module's PTX text."""
        self.ir: Optional[str] = ir
        """The scheduled IR's text form, which ``device="cpu"`` runs."""
        self.module_manifest: Dict[str, Any] = manifest
        self.manifest: Dict[str, Any] = next(k for k in manifest["kernels"] if k["name"] == name)
        """This kernel's entry of the manifest (parameters, dynamic dimensions, launch, const params)."""
        self.name: str = name
        self.warnings: List[Diagnostic] = warnings_
        self.key: str = key
        """The compile cache's key of this build."""
        self.cache_hit: bool = cache_hit
        """Whether this build came from the cache on disk."""
        self.params: List[Param] = [Param(p) for p in self.manifest["params"]]
        self._index = {p.name: i for i, p in enumerate(self.params)}
        self._native = _cutec.NativeKernel(ptx, json.dumps(manifest), name)
        self._launch = self._native.launch
        self._nparams = len(self.params)
        # The torch operators of this kernel, by qualified name (shared by the copies `_for_call` makes).
        self._torch_ops: Dict[str, Any] = {}

    def _for_call(self, cache_hit: bool) -> "Kernel":
        """This kernel (the same loaded module) as another `compile` call returns it: with that call's
        ``cache_hit``."""
        k = copy.copy(self)
        k.cache_hit = cache_hit
        return k

    @property
    def signature(self) -> str:
        """``softmax(x: f32[(M,4096):(4096,1)] read, y: f32[(M,4096):(4096,1)] write)``."""
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    @property
    def dims(self) -> List[str]:
        """The dynamic dimensions, bound from the tensors at each call."""
        return [d["name"] for d in self.manifest.get("dims", [])]

    def __repr__(self) -> str:
        return f"<cutec.Kernel {self.signature}>"

    def _bind(self, args: Tuple[Any, ...], kwargs: Mapping[str, Any]) -> Tuple[Any, ...]:
        if len(args) > self._nparams:
            raise LaunchError(
                f"kernel `{self.name}` takes {self._nparams} arguments ({self.signature}), got {len(args)}",
                kernel=self.name,
            )
        bound: List[Any] = list(args) + [_MISSING] * (self._nparams - len(args))
        for k, v in kwargs.items():
            i = self._index.get(k)
            if i is None:
                raise LaunchError(f"kernel `{self.name}` has no parameter `{k}` ({self.signature})", kernel=self.name, param=k)
            if bound[i] is not _MISSING:
                raise LaunchError(f"kernel `{self.name}`: argument `{k}` given twice", kernel=self.name, param=k)
            bound[i] = v
        missing = [p.name for p, v in zip(self.params, bound) if v is _MISSING]
        if missing:
            raise LaunchError(
                f"kernel `{self.name}`: missing argument{'s' if len(missing) > 1 else ''} "
                + ", ".join(f"`{m}`" for m in missing),
                kernel=self.name,
                param=missing[0],
            )
        return tuple(bound)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if not kwargs and len(args) == self._nparams:
            self._launch(args)
            return
        if "device" in kwargs and "device" not in self._index:
            device = kwargs.pop("device")
            schedule = kwargs.pop("schedule", None) if "schedule" not in self._index else None
            if device == "cpu":
                self._run_cpu(self._bind(args, kwargs), schedule)
                return
            if device not in (None, "cuda"):
                raise LaunchError(f"kernel `{self.name}`: device must be \"cpu\" or \"cuda\", got {device!r}", kernel=self.name)
        self._launch(self._bind(args, kwargs))

    def _run_cpu(self, bound: Tuple[Any, ...], schedule: Optional[str]) -> None:
        """``device="cpu"``: the call run by the interpreter of the scheduled IR on host memory (CPU torch tensors
        or numpy arrays, written in place), through the same checks as a GPU call. ``schedule`` says when TMA loads
        land: ``"earliest"`` (default), ``"latest"`` or ``"seed=N"``."""
        if self.ir is None:
            raise LaunchError(f"kernel `{self.name}` was built without its IR: compile it again (cache=False)", kernel=self.name)
        packed: List[Any] = []
        views: List[Any] = []
        for p, a in zip(self.params, bound):
            if p.kind != "tensor":
                packed.append(a)
                views.append(None)
                continue
            view, dtype = _host_view(a, p.name, self.name)
            packed.append((dtype, _storage_bytes(view, p.name, self.name), list(view.shape), [s // view.itemsize for s in view.strides]))
            views.append(view)
        outs = self._native.run_cpu(self.ir, tuple(packed), schedule)
        import numpy as np

        for p, view, out in zip(self.params, views, outs):
            if view is None or out is None or p.access == "read":
                continue
            result = np.lib.stride_tricks.as_strided(np.frombuffer(out, dtype=view.dtype), shape=view.shape, strides=view.strides)
            view[...] = result

    def plan(self, *args: Any, device: Optional[int] = None, **kwargs: Any) -> Dict[str, Any]:
        """Checks the arguments as a call would, without a GPU and without launching; returns the launch
        (``grid``, ``block``, ``cluster``, ``smem_bytes``, the bound ``dims``, the ``tensor_maps``, and
        ``persistent``: then ``grid`` counts tiles, and the launch runs at most one CTA per SM over them)."""
        return self._native.plan(self._bind(args, kwargs), device)

    def load(self, device: int = 0) -> None:
        """Loads the module on ``device`` now (the first call there does it otherwise)."""
        self._native.load(device)

    # -- outputs -------------------------------------------------------------------------------------------

    def bind_dims(self, *args: Any, dims: Optional[Mapping[str, int]] = None, **kwargs: Any) -> Dict[str, Any]:
        """The dynamic dimensions' values from the given tensors (inputs by position, any parameter by name)
        and ``dims``, as the manifest binds them (``dims[].from``)."""
        return self._bound_dims(self._bind_inputs(args, kwargs), dims or {})

    def _bound_dims(self, given: Mapping[str, Any], dims: Mapping[str, Any]) -> Dict[str, Any]:
        values: Dict[str, Any] = dict(dims)
        for d in self.manifest.get("dims", []):
            if d["name"] in values:
                continue
            src = d["from"]
            t = given.get(src["param"])
            if t is None:
                continue
            shape, strides = _shape_strides(t)
            seq = shape if src.get("of", "shape") == "shape" else strides
            if src["mode"] < len(seq):
                values[d["name"]] = seq[src["mode"]]
        return values

    def _bind_inputs(self, args: Tuple[Any, ...], kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        inputs = [p for p in self.params if not p.is_output]
        if len(args) > len(inputs):
            raise LaunchError(f"kernel `{self.name}` takes {len(inputs)} inputs, got {len(args)}", kernel=self.name)
        given = {p.name: a for p, a in zip(inputs, args)}
        for k, v in kwargs.items():
            if k not in self._index:
                raise LaunchError(f"kernel `{self.name}` has no parameter `{k}` ({self.signature})", kernel=self.name, param=k)
            given[k] = v
        return given

    def output_shapes(self, *args: Any, dims: Optional[Mapping[str, int]] = None, **kwargs: Any) -> Dict[str, Tuple[Tuple[Any, ...], Tuple[Any, ...]]]:
        """``{name: (shape, strides)}`` of each output (a tensor the kernel only writes), from the manifest's
        layouts and the dimensions bound from the given inputs (see ``bind_dims``)."""
        return self._output_shapes(self._bind_inputs(args, kwargs), dims or {})

    def _output_shapes(self, given: Mapping[str, Any], dims: Mapping[str, Any]) -> Dict[str, Tuple[Tuple[Any, ...], Tuple[Any, ...]]]:
        values = self._bound_dims(given, dims)

        def value(leaf: Any, p: Param) -> Any:
            if isinstance(leaf, str):
                if leaf not in values:
                    raise LaunchError(
                        f"kernel `{self.name}`: the shape of output `{p.name}` needs dimension `{leaf}`; "
                        f"pass the tensor it is bound from, or dims={{'{leaf}': ...}}",
                        kernel=self.name,
                        param=p.name,
                    )
                return values[leaf]
            return leaf

        out = {}
        for p in self.params:
            if not p.is_output:
                continue
            shape, strides = [], []
            # A layout of one mode may be written without its tuple (`N:1`): its shape is then a leaf.
            modes = zip(p.shape, p.stride) if isinstance(p.shape, list) else [(p.shape, p.stride)]
            for s_mode, d_mode in modes:
                extent = 1
                for leaf in _leaves(s_mode):
                    extent = extent * value(leaf, p)
                shape.append(extent)
                # A nested mode's flat stride is that of its first leaf of extent > 1 (the runtime's rule).
                pairs = list(zip(_leaves(s_mode), _leaves(d_mode)))
                stride = next((value(d, p) for s, d in pairs if value(s, p) != 1), value(pairs[0][1], p) if pairs else 1)
                strides.append(stride)
            out[p.name] = (tuple(shape), tuple(strides))
        return out

    def empty_outputs(self, *args: Any, dims: Optional[Mapping[str, int]] = None, device: Any = None, **kwargs: Any) -> Dict[str, Any]:
        """Allocates (uninitialized, with ``torch.empty_strided``) each output of the kernel, with the manifest's
        element type, shape and strides, on the device of the first tensor given (else ``device``, else torch's
        current device). Inputs are given by position, any parameter by name; ``dims`` sets dimensions no given
        tensor binds. Returns ``{name: tensor}``, to pass on: ``kernel(x, **kernel.empty_outputs(x))``."""
        return self._allocate_outputs(self._bind_inputs(args, kwargs), dims or {}, device)

    def _allocate_outputs(self, given: Mapping[str, Any], dims: Mapping[str, Any], device: Any) -> Dict[str, Any]:
        import torch

        if device is None:
            device = next((t.device for t in given.values() if isinstance(t, torch.Tensor)), None)
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device())
        by_name = {p.name: p for p in self.params}
        return {
            name: torch.empty_strided(shape, strides, dtype=getattr(torch, TORCH_DTYPES[by_name[name].dtype]), device=device)
            for name, (shape, strides) in self._output_shapes(given, dims).items()
        }

    # -- torch.library ----------------------------------------------------------------------------------------

    def torch_op(self, name: Optional[str] = None) -> Any:
        """This kernel as a torch custom operator: it takes the kernel's inputs (tensors it reads, tensors it
        reads and writes, which the op declares mutated, and scalars), then, by keyword, the dynamic dimensions
        that no input binds, and returns its outputs (tensors it only writes), allocated from the manifest's
        shapes. Its fake implementation runs the checks of a call (``plan``) and gives outputs of the manifest's
        element types, shapes and strides, so it traces under ``torch.compile(fullgraph=True)``.
        ``name`` is ``"namespace::op"`` (default ``cutec::<kernel>_<key>``); each name is one operator, and a
        name taken by another kernel raises ``ValueError``."""
        from ._torch_op import make_op

        qualname = name or f"cutec::{self.name}_{self.key[:12]}"
        op = self._torch_ops.get(qualname)
        if op is None:
            op = make_op(self, qualname)
            self._torch_ops[qualname] = op
        return op


# The manifest element type of each numpy dtype (numpy has no bf16 or fp8: pass torch tensors for those).
_NUMPY_DTYPES = {
    "float32": "f32",
    "float16": "f16",
    "float64": "f64",
    "int8": "i8",
    "uint8": "u8",
    "int32": "i32",
    "int64": "i64",
    "uint32": "u32",
    "bool": "bool",
}


def _host_view(a: Any, param: str, kernel: str) -> Tuple[Any, str]:
    """A numpy array sharing ``a``'s memory (a numpy array, or a CPU torch tensor: bf16 and fp8 viewed as
    integers of their size) and the manifest name of its element type."""
    import numpy as np

    if isinstance(a, np.ndarray):
        dtype = _NUMPY_DTYPES.get(a.dtype.name)
        if dtype is None:
            raise LaunchError(f"kernel `{kernel}`: `{param}` has numpy dtype {a.dtype}, which no kernel takes", kernel=kernel, param=param)
        return a, dtype
    torch = _torch()
    if torch is not None and isinstance(a, torch.Tensor):
        if a.device.type != "cpu":
            raise LaunchError(f"kernel `{kernel}`: device=\"cpu\" takes CPU tensors, `{param}` is on {a.device}", kernel=kernel, param=param)
        name = str(a.dtype).replace("torch.", "")
        dtype = next((k for k, v in TORCH_DTYPES.items() if v == name), None)
        if dtype is None:
            raise LaunchError(f"kernel `{kernel}`: `{param}` has dtype {a.dtype}, which no kernel takes", kernel=kernel, param=param)
        if dtype == "bf16":
            return a.view(torch.int16).numpy(), dtype
        if dtype in ("e4m3", "e5m2"):
            return a.view(torch.uint8).numpy(), dtype
        return a.numpy(), dtype
    raise LaunchError(f"kernel `{kernel}`: device=\"cpu\" takes numpy arrays or CPU torch tensors, `{param}` is {type(a).__name__}", kernel=kernel, param=param)


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def _storage_bytes(view: Any, param: str, kernel: str) -> bytes:
    """The bytes of ``view``'s memory from its element 0, in memory order: what the kernel addresses through
    its layout. Only arrays that cover their memory without gaps and with non-negative strides have them."""
    if any(s < 0 for s in view.strides):
        raise LaunchError(f"kernel `{kernel}`: `{param}` has a negative stride", kernel=kernel, param=param)
    span = 1 + sum((n - 1) * (s // view.itemsize) for n, s in zip(view.shape, view.strides)) if view.size else 0
    if span != view.size:
        raise LaunchError(f"kernel `{kernel}`: `{param}` has gaps in its memory; pass a compact array", kernel=kernel, param=param)
    return view.ravel(order="K").tobytes()


def _shape_strides(t: Any) -> Tuple[Tuple[Any, ...], Tuple[Any, ...]]:
    """Shape and strides (in elements) of a torch tensor, an object with ``__cuda_array_interface__`` or an
    array with ``shape``, ``strides`` (in bytes) and ``itemsize`` (numpy's)."""
    stride = getattr(t, "stride", None)
    if callable(stride):
        return tuple(t.shape), tuple(stride())
    cai = getattr(t, "__cuda_array_interface__", None)
    if cai is not None:
        shape = tuple(cai["shape"])
        size = int(cai["typestr"][2:])
        if cai.get("strides") is None:
            strides, acc = [], 1
            for e in reversed(shape):
                strides.append(acc)
                acc *= max(e, 1)
            return shape, tuple(reversed(strides))
        return shape, tuple(b // size for b in cai["strides"])
    return tuple(t.shape), tuple(b // t.itemsize for b in t.strides)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()

# Kernels compiled in this process, by cache key and kernel name: compiling the same program again returns the
# same object, with its module already loaded.
_MEMO: Dict[Tuple[str, str], Kernel] = {}


def _is_path(src: Any) -> bool:
    """The rule of ``compile``'s ``source``: a path-like object is a path; a ``str`` is program text if it holds a
    newline or a ``{`` (every kernel has a body), else a path."""
    if isinstance(src, os.PathLike):
        return True
    if isinstance(src, str):
        return "\n" not in src and "{" not in src
    raise TypeError(
        f"compile: `source` is a str (program text, or a path) or an os.PathLike, got {type(src).__name__}"
        + ("; decode the text first (source.decode())" if isinstance(src, (bytes, bytearray)) else "")
    )


_I64 = (-(2**63), 2**63 - 1)


def _define_value(k: str, v: Any) -> Union[int, bool]:
    """A define's value: a bool (numpy's too) or an integer (anything with ``__index__``: numpy's integers)."""
    if isinstance(v, bool) or type(v).__name__ in ("bool_", "bool") and type(v).__module__ == "numpy":
        return bool(v)
    if isinstance(v, float) or not hasattr(type(v), "__index__"):
        raise TypeError(f"define `{k}`: expected an int or a bool, got {type(v).__name__}")
    i = operator.index(v)
    if not _I64[0] <= i <= _I64[1]:
        raise ValueError(f"define `{k}` = {i}: values are 64-bit signed integers")
    return i


def _defines(defines: Optional[Mapping[str, Any]]) -> List[Tuple[str, Union[int, bool]]]:
    if defines is None:
        return []
    if not isinstance(defines, Mapping):
        raise TypeError(f"compile: `defines` is a mapping of names to ints or bools, got {type(defines).__name__}")
    out = []
    for k, v in defines.items():
        if not isinstance(k, str):
            raise TypeError(f"compile: a define's name is a str, got {type(k).__name__} ({k!r})")
        out.append((k, _define_value(k, v)))
    return sorted(out)


def _opt_level(level: Any) -> int:
    if isinstance(level, bool) or not hasattr(type(level), "__index__"):
        raise TypeError(f"compile: `opt_level` is an int from 0 to 3, got {type(level).__name__}")
    i = operator.index(level)
    if not 0 <= i <= 3:
        raise ValueError(f"compile: `opt_level` is 0 to 3, got {i}")
    return i


def _read(path: Union[str, "os.PathLike[str]"]) -> str:
    out = _cutec.read_source(os.fspath(path))
    if not out["ok"]:
        raise CompileError(out["rendered"], Diagnostic.from_json_lines(out["diagnostics_json"]))
    text: str = out["text"]
    return text


def _manifest(entry: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The module's manifest of a build, if it is one (a cache entry's is checked again: a miss otherwise)."""
    try:
        manifest: Any = json.loads(entry["manifest"])
    except (ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict):
        return None
    kernels = manifest.get("kernels")
    if not isinstance(kernels, list) or not kernels or not all(isinstance(k, dict) and isinstance(k.get("name"), str) for k in kernels):
        return None
    return manifest


def compile(
    source: Union[str, "os.PathLike[str]"],
    defines: Optional[Mapping[str, Union[int, bool]]] = None,
    kernel: Optional[str] = None,
    *,
    opt_level: int = 3,
    cache: bool = True,
    name: Optional[str] = None,
) -> Kernel:
    """Compiles a ``.cute`` program and returns its kernel.

    ``source`` is a path or the program's text, by one rule: an ``os.PathLike`` (``pathlib.Path``) is a path; a
    ``str`` holding a newline or a ``{`` is the program's text (every kernel has a body), any other ``str`` is a
    path. A path is read as ``cutec build`` reads it: a file that cannot be read (missing, a folder, not UTF-8)
    raises :class:`cutec.CompileError` E0400, one over the size limit E0008. ``defines`` sets const generic
    parameters (``-D N=4096``: ``{"N": 4096}``; ints, numpy's integers and bools). ``kernel`` picks one kernel of a
    file with several. ``name`` is the file name diagnostics show for a text (default ``<source>``).
    Compile errors raise :class:`cutec.CompileError`; warnings are issued as :class:`cutec.CompileWarning`.
    Builds are cached on disk (see ``cutec.cache_dir()``); ``cache=False`` compiles anyway.
    """
    if _is_path(source):
        shown = name or os.fspath(source)
        text = _read(source)
    else:
        text = str(source)
        shown = name or "<source>"
    if kernel is not None and not isinstance(kernel, str):
        raise TypeError(f"compile: `kernel` is a kernel's name (a str), got {type(kernel).__name__}")
    defs = _defines(defines)
    level = _opt_level(opt_level)
    key = _cache.key(shown, text, defs, kernel, level)
    use_cache = cache and _cache.enabled()
    entry = _cache.load(key) if use_cache else None
    manifest = _manifest(entry) if entry is not None else None
    hit = manifest is not None
    if entry is None or manifest is None:
        out = _cutec.compile_source(shown, text, defs, kernel, level)
        if not out["ok"]:
            raise CompileError(out["rendered"], Diagnostic.from_json_lines(out["diagnostics_json"]))
        entry = {k: out[k] for k in _cache.FIELDS}
        manifest = json.loads(entry["manifest"])
        if use_cache:
            _cache.store(key, entry)
    if hit:
        _cache.Stats.hits += 1
    else:
        _cache.Stats.misses += 1
    names = [k["name"] for k in manifest["kernels"]]
    chosen = kernel if kernel is not None else names[0]
    if kernel is None and len(names) > 1:
        raise ValueError(f"{shown} has {len(names)} kernels ({', '.join(names)}): choose one with kernel=")
    memo = _MEMO.get((key, chosen))
    if memo is not None:
        # The same loaded kernel, with this call's own `cache_hit`.
        return memo._for_call(hit)
    if entry["warnings"]:
        warnings.warn(CompileWarning(entry["warnings"]), stacklevel=2)
    k = Kernel(entry["ptx"], manifest, chosen, Diagnostic.from_json_lines(entry["warnings_json"]), key, hit, entry.get("ir"))
    _MEMO[(key, chosen)] = k
    return k
