"""A kernel as a torch custom operator (``torch.library.custom_op``) with a fake implementation from its manifest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:
    from ._kernel import Kernel

_SCALAR_TYPES = {"bool": "bool", "f32": "float", "f64": "float", "f16": "float", "bf16": "float", "e4m3": "float", "e5m2": "float"}


def op_source(kernel: "Kernel") -> str:
    """The Python source of the operator's implementation and fake implementation for ``kernel``: functions of
    the kernel's inputs, written out with their parameters' names and types, since ``custom_op`` infers the
    operator's schema from the annotations."""
    inputs = [p for p in kernel.params if not p.is_output]
    outputs = [p for p in kernel.params if p.is_output]
    for p in inputs:
        if not p.name.isidentifier():
            raise ValueError(f"parameter `{p.name}` cannot be a Python argument name")

    def annotation(p: Any) -> str:
        return "torch.Tensor" if p.kind == "tensor" else _SCALAR_TYPES.get(p.dtype, "int")

    if not outputs:
        ret = "None"
    elif len(outputs) == 1:
        ret = "torch.Tensor"
    else:
        ret = "typing.Tuple[" + ", ".join("torch.Tensor" for _ in outputs) + "]"
    arglist = ", ".join(f"{p.name}: {annotation(p)}" for p in inputs)
    # By name: the outputs may come between the inputs in the kernel's parameter list.
    by_name = ", ".join(f"{p.name}={p.name}" for p in inputs)
    return (
        f"def impl({arglist}) -> {ret}:\n"
        f"    outs = kernel.empty_outputs({by_name})\n"
        f"    kernel({by_name}, **outs)\n"
        f"    return _result(outs)\n"
        f"\n"
        f"def fake({arglist}) -> {ret}:\n"
        f"    return _result(kernel.empty_outputs({by_name}))\n"
    )


def make_op(kernel: "Kernel", qualname: str) -> Any:
    import typing

    import torch

    outputs = [p for p in kernel.params if p.is_output]
    mutated = tuple(p.name for p in kernel.params if p.kind == "tensor" and p.access == "read_write")

    def _result(outs: Dict[str, Any]) -> Any:
        values: List[Any] = [outs[p.name] for p in outputs]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    scope: Dict[str, Any] = {"torch": torch, "typing": typing, "kernel": kernel, "_result": _result}
    exec(op_source(kernel), scope)
    op = torch.library.custom_op(qualname, mutates_args=mutated, device_types="cuda")(scope["impl"])
    op.register_fake(scope["fake"])
    return op
