"""A kernel as a torch operator (``torch.library``): its schema from the manifest, a real implementation that
allocates the outputs and launches, and a fake implementation that runs the same checks and gives outputs of the
same element types, shapes and strides, for tracing.

The operator is defined from a schema string and two Python functions that take their arguments as the
dispatcher passes them (positionally, the dimensions by keyword): no Python source is generated, so any parameter
name of a kernel works. A name the schema cannot take (a Python keyword such as ``from``, ``lambda`` or ``None``)
gets a ``_`` appended in the schema; the implementation binds the arguments by position, never by name.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Set, Tuple

if TYPE_CHECKING:
    from ._kernel import Kernel, Param

# The schema type of a scalar parameter, by element type; integers are `int`.
_SCALAR_TYPES = {"bool": "bool", "f32": "float", "f64": "float", "f16": "float", "bf16": "float", "e4m3": "float", "e5m2": "float"}

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

def schema_name(name: str, taken: Set[str]) -> str:
    """A name for `name` in the operator's schema: itself if the schema parser takes it and no other argument
    has it, else with ``_`` appended until it is; ``arg`` for a name of no ASCII letters."""
    base = name if _IDENT.match(name) else (re.sub(r"[^A-Za-z0-9_]", "_", name) or "arg")
    if base[0].isdigit():
        base = "_" + base
    out = base
    while keyword.iskeyword(out) or out in taken:
        out += "_"
    taken.add(out)
    return out


@dataclass(frozen=True)
class OpSpec:
    """What the operator of a kernel takes and returns."""

    inputs: Tuple["Param", ...]
    """The kernel's parameters the operator takes, in the kernel's order: tensors it reads or reads and writes,
    and scalars."""
    input_names: Tuple[str, ...]
    """Their names in the schema."""
    dims: Tuple[Tuple[str, str], ...]
    """The dynamic dimensions no input binds (``dims[].from`` is an output) with their names in the schema:
    keyword arguments of the operator."""
    outputs: Tuple["Param", ...]
    """The tensors the kernel only writes: what the operator returns."""
    schema: str
    """``(Tensor x, Tensor(a0!) w, float eps, *, SymInt S) -> (Tensor, Tensor)``."""


def op_spec(kernel: "Kernel") -> OpSpec:
    """The operator's arguments, results and schema for ``kernel`` (without torch)."""
    inputs = tuple(p for p in kernel.params if not p.is_output)
    outputs = tuple(p for p in kernel.params if p.is_output)
    output_names = {p.name for p in outputs}
    taken: Set[str] = set()
    names = tuple(schema_name(p.name, taken) for p in inputs)
    dims = tuple(
        (d["name"], schema_name(d["name"], taken))
        for d in kernel.manifest.get("dims", [])
        if d["from"]["param"] in output_names
    )
    args: List[str] = []
    mutated = 0
    for p, n in zip(inputs, names):
        if p.kind != "tensor":
            args.append(f"{_SCALAR_TYPES.get(p.dtype, 'int')} {n}")
        elif p.access == "read":
            args.append(f"Tensor {n}")
        else:
            args.append(f"Tensor(a{mutated}!) {n}")
            mutated += 1
    if dims:
        args.append("*")
        args.extend(f"SymInt {n}" for _, n in dims)
    if not outputs:
        ret = "()"
    elif len(outputs) == 1:
        ret = "Tensor"
    else:
        ret = "(" + ", ".join("Tensor" for _ in outputs) + ")"
    return OpSpec(inputs, names, dims, outputs, f"({', '.join(args)}) -> {ret}")


def _is_concrete(values: Any) -> bool:
    """Whether the tensors' sizes, strides and offsets and the scalars are plain numbers (not the symbols of
    tracing with dynamic shapes, which no check can read)."""
    import torch

    for v in values:
        if isinstance(v, torch.Tensor):
            if not all(type(x) is int for x in (*v.shape, *v.stride(), v.storage_offset())):
                return False
        elif isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return False
    return True


# The operators this process defined, by qualified name: the kernel (its cache key and name) each one calls, and
# the library that holds the definition (a `torch.library.Library` undefines its operators when collected).
_DEFINED: Dict[str, Tuple[Tuple[str, str], Any]] = {}


def _split(qualname: str) -> Tuple[str, str]:
    ns, sep, name = qualname.partition("::")
    if not sep or not _IDENT.match(ns) or not _IDENT.match(name):
        raise ValueError(f"torch_op: the name is `namespace::op` of identifiers, got `{qualname}`")
    return ns, name


def make_op(kernel: "Kernel", qualname: str) -> Any:
    """Defines the operator ``qualname`` for ``kernel`` and returns it (``torch.ops.<namespace>.<op>``)."""
    import torch

    ns, name = _split(qualname)
    owner = (kernel.key, kernel.name)
    defined = _DEFINED.get(qualname)
    if defined is not None:
        if defined[0] != owner:
            raise ValueError(f"torch_op: `{qualname}` is the operator of another kernel; choose another name")
        return getattr(getattr(torch.ops, ns), name)
    spec = op_spec(kernel)
    lib = torch.library.Library(ns, "FRAGMENT")
    try:
        lib.define(name + spec.schema)
    except RuntimeError as e:
        raise ValueError(f"torch_op: cannot define `{qualname}{spec.schema}`: {e}") from e

    index = {p.name: i for i, p in enumerate(kernel.params)}

    def bind(args: Tuple[Any, ...], kwargs: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        given = {p.name: a for p, a in zip(spec.inputs, args)}
        dims = {dim: kwargs[n] for dim, n in spec.dims}
        return given, dims

    def arguments(given: Mapping[str, Any], outs: Mapping[str, Any]) -> Tuple[Any, ...]:
        full: List[Any] = [None] * len(kernel.params)
        for n, v in (*given.items(), *outs.items()):
            full[index[n]] = v
        return tuple(full)

    def result(outs: Mapping[str, Any]) -> Any:
        values = [outs[p.name] for p in spec.outputs]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    def impl(*args: Any, **kwargs: Any) -> Any:
        given, dims = bind(args, kwargs)
        outs = kernel._allocate_outputs(given, dims, None)
        kernel._launch(arguments(given, outs))
        return result(outs)

    def fake(*args: Any, **kwargs: Any) -> Any:
        given, dims = bind(args, kwargs)
        outs = kernel._allocate_outputs(given, dims, None)
        full = arguments(given, outs)
        if _is_concrete(full):
            # The checks of a call, on the tensors' descriptions: what the real implementation would refuse, the
            # trace refuses too (LaunchError naming the parameter).
            kernel._native.plan(full, None)
        return result(outs)

    # An operator without tensor inputs has nothing to dispatch on: its implementation is for every backend (it
    # allocates on torch's current CUDA device).
    has_tensors = any(p.kind == "tensor" for p in spec.inputs)
    lib.impl(name, impl, "CUDA" if has_tensors else "CompositeExplicitAutograd")
    torch.library.register_fake(qualname, fake, lib=lib)
    _DEFINED[qualname] = (owner, lib)
    return getattr(getattr(torch.ops, ns), name)
