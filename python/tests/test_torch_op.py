"""A kernel as a torch operator: its schema (without torch), then, where torch is installed, the operator on meta
tensors, which runs its fake implementation (what tracing runs) and needs no GPU. The GPU harness
(scripts/gpu/python_check.py) runs the real implementation under torch.compile."""

import pytest

import cutec
from cutec._torch_op import op_spec
from conftest import example

TWO = """kernel two(x: Tensor<f32, N:1, gmem>, a: Tensor<f32, N:1, gmem>, b: Tensor<f32, N:1, gmem>, n: i32)
launch(grid = (ceil_div(N, 256)), block = (256)) {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < N { a[i] = x[i]; b[i] = x[i] + 1.0; }
}"""

# Parameter names that are Python keywords, or that the operator's code once used for its own variables.
NAMES = """kernel names(from: Tensor<f32, N:1, gmem>, lambda: Tensor<f32, N:1, gmem>, None: f32, _result: i32,
    outs: Tensor<f32, N:1, gmem>)
launch(grid = (ceil_div(N, 256)), block = (256)) {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < N && _result > 0 { outs[i] = from[i] * None; lambda[i] = lambda[i] + 1.0; }
}"""

# An output whose length no input binds.
FILL = """kernel fill(y: Tensor<f32, N:1, gmem>, v: f32) launch(grid = (ceil_div(N, 256)), block = (256)) {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < N { y[i] = v; }
}"""


def test_the_schema_takes_the_inputs_and_returns_the_outputs():
    rms = cutec.compile(example("rmsnorm"), defines={"N": 4096})
    assert op_spec(rms).schema == "(Tensor x, Tensor w, float eps) -> Tensor"
    two = cutec.compile(TWO)
    assert op_spec(two).schema == "(Tensor x, int n) -> (Tensor, Tensor)"


def test_a_one_mode_output():
    copy = cutec.compile(example("copy"))
    assert copy.output_shapes(dims={"N": 100}) == {"y": ((100,), (1,))}
    assert op_spec(copy).schema == "(Tensor x) -> Tensor"


def test_names_the_schema_cannot_take_are_renamed():
    spec = op_spec(cutec.compile(NAMES))
    assert [p.name for p in spec.inputs] == ["from", "lambda", "None", "_result"]
    assert spec.schema == "(Tensor from_, Tensor(a0!) lambda_, float None_, int _result) -> Tensor"


def test_dims_no_input_binds_are_keyword_arguments():
    assert op_spec(cutec.compile(FILL)).schema == "(float v, *, SymInt N) -> Tensor"
    batched = cutec.compile(example("gemm_batched"))
    assert op_spec(batched).schema == "(Tensor a, Tensor b, *, SymInt SC) -> Tensor"


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def meta(torch, *shape, dtype=None):
    return torch.empty(*shape, device="meta", dtype=dtype or torch.float32)


def test_the_fake_implementation_gives_the_outputs_and_checks_the_inputs(torch):
    softmax = cutec.compile(example("softmax"), defines={"N": 4096})
    op = softmax.torch_op("cutec_test::softmax")
    y = op(meta(torch, 32, 4096))
    assert (y.shape, y.stride(), y.dtype, y.device.type) == ((32, 4096), (4096, 1), torch.float32, "meta")
    for bad, message in [
        (meta(torch, 32, 4096, dtype=torch.float16), "expected dtype f32, got f16"),
        (meta(torch, 32, 4095), "shape\\[1\\] is 4095"),
        (meta(torch, 4096, 32).t(), "stride\\[0\\] is 1, but the kernel was compiled for 4096"),
        (meta(torch, 32 * 4096 + 1)[1:].view(32, 4096), "not aligned to 16 bytes"),
    ]:
        with pytest.raises(cutec.LaunchError, match=message):
            op(bad)


def test_one_mode_outputs_keyword_dims_and_odd_names(torch):
    copy = cutec.compile(example("copy")).torch_op("cutec_test::copy")
    y = copy(meta(torch, 1000))
    assert (y.shape, y.dtype) == ((1000,), torch.float32)
    names = cutec.compile(NAMES).torch_op("cutec_test::names")
    assert names(meta(torch, 64), meta(torch, 64), 2.0, 1).shape == (64,)
    batched = cutec.compile(example("gemm_batched")).torch_op("cutec_test::batched")
    a = meta(torch, 2, 256, 64, dtype=torch.bfloat16)
    b = meta(torch, 2, 512, 64, dtype=torch.bfloat16)
    c = batched(a, b, SC=256 * 512)
    assert (c.shape, c.stride(), c.dtype) == ((2, 256, 512), (256 * 512, 512, 1), torch.bfloat16)
    # SC = 0 would write every batch into one matrix: the fake implementation refuses it as the real one does.
    with pytest.raises(cutec.LaunchError, match="stride 0"):
        batched(a, b, SC=0)


def test_each_name_is_its_own_operator(torch):
    softmax = cutec.compile(example("softmax"), defines={"N": 4096})
    a, b = softmax.torch_op("cutec_test::sm_a"), softmax.torch_op("cutec_test::sm_b")
    assert a is not b and a is softmax.torch_op("cutec_test::sm_a")
    assert "sm_a" in str(a) and "sm_b" in str(b)
    other = cutec.compile(example("copy"))
    with pytest.raises(ValueError, match="operator of another kernel"):
        other.torch_op("cutec_test::sm_a")
    with pytest.raises(ValueError, match="namespace::op"):
        other.torch_op("no_namespace")


def test_plan_takes_meta_tensors_and_a_launch_refuses_them(torch):
    softmax = cutec.compile(example("softmax"), defines={"N": 4096})
    assert softmax.plan(meta(torch, 32, 4096), meta(torch, 32, 4096))["dims"] == {"M": 32}
    with pytest.raises(cutec.LaunchError, match="meta tensor, which has no memory"):
        softmax(meta(torch, 32, 4096), meta(torch, 32, 4096))
    with pytest.raises(cutec.LaunchError, match="stride 0"):
        softmax.plan(meta(torch, 32, 4096), meta(torch, 1, 4096).expand(32, 4096))
