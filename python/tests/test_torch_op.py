"""The torch custom operator's source, without torch: its functions take the kernel's inputs by name and type,
and pass them on by name (the outputs may sit between the inputs in the parameter list, as rmsnorm's y does)."""

import cutec
from cutec._torch_op import op_source
from conftest import example


def test_the_operator_takes_the_inputs_and_returns_the_outputs():
    rms = cutec.compile(example("rmsnorm"), defines={"N": 4096})
    src = op_source(rms)
    assert "def impl(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:" in src
    assert "kernel(x=x, w=w, eps=eps, **outs)" in src
    assert "def fake(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:" in src
    compile(src, "<op>", "exec")  # valid Python


def test_several_outputs_are_a_tuple():
    two = cutec.compile(
        """kernel two(x: Tensor<f32, N:1, gmem>, a: Tensor<f32, N:1, gmem>, b: Tensor<f32, N:1, gmem>, n: i32)
        launch(grid = (ceil_div(N, 256)), block = (256)) {
            let i = block_idx.x * 256 + thread_idx.x;
            if i < N { a[i] = x[i]; b[i] = x[i] + 1.0; }
        }"""
    )
    assert [p.name for p in two.params if p.is_output] == ["a", "b"]
    src = op_source(two)
    assert "def impl(x: torch.Tensor, n: int) -> typing.Tuple[torch.Tensor, torch.Tensor]:" in src
