"""A call's arguments against the manifest, without a GPU: Kernel.plan runs every check a launch runs first, on
stand-ins with __cuda_array_interface__, numpy arrays (host memory, refused) and Python scalars."""

import numpy as np
import pytest

import cutec
from conftest import example


@pytest.fixture(scope="module")
def softmax():
    return cutec.compile(example("softmax"), defines={"N": 4096})


def refusal(kernel, *args, **kwargs):
    with pytest.raises(cutec.LaunchError) as info:
        kernel.plan(*args, **kwargs)
    return info.value


def test_plan_binds_dims_and_the_launch(softmax, fake):
    plan = softmax.plan(fake((32, 4096)), fake((32, 4096)))
    assert plan["dims"] == {"M": 32}
    assert plan["grid"] == [32, 1, 1] and plan["block"] == [256, 1, 1]
    assert plan["cluster"] is None and plan["tensor_maps"] == []


def test_arguments_by_name_and_position(softmax, fake):
    x, y = fake((8, 4096)), fake((8, 4096))
    assert softmax.plan(x, y=y) == softmax.plan(y=y, x=x) == softmax.plan(x, y)
    e = refusal(softmax, x)
    assert e.param == "y" and "missing argument `y`" in str(e)
    e = refusal(softmax, x, y, z=x)
    assert e.param == "z" and "no parameter `z`" in str(e)
    e = refusal(softmax, x, x=x, y=y)
    assert e.param == "x" and "given twice" in str(e)
    e = refusal(softmax, x, y, x)
    assert e.param is None and "takes 2 arguments" in str(e)


@pytest.mark.parametrize(
    "x, y, param, message",
    [
        ((32, 4096), (32, 4096), None, None),
        ({"shape": (32, 4096), "typestr": "<f2"}, (32, 4096), "x", "expected dtype f32, got f16"),
        ((32, 4095), (32, 4095), "x", "shape[1] is 4095, but the kernel was compiled for 4096"),
        ((32, 4096, 1), (32, 4096), "x", "expected rank 2"),
        ((32, 4096), (16, 4096), "y", "dimension `M` is 32 (from x.shape[0]), but argument `y` has shape[0] = 16"),
        ({"shape": (32, 4096), "ptr": 0x7F0000000004}, (32, 4096), "x", "not aligned to 16 bytes"),
        # Column-major: the strides are the layout's business.
        ((32, 4096), {"shape": (32, 4096), "strides": (4, 128)}, "y", "stride[0] is 1, but the kernel was compiled for 4096"),
        ((32, 4096), {"shape": (32, 4096), "readonly": True}, "y", "read-only"),
        ((32, 4096), {"shape": (32, 4096), "mask": object()}, "y", "masked array"),
        ((32, 4096), {"shape": (32, 4096), "strides": (16384, 2)}, "y", "not a whole number of f32 elements"),
        ({"shape": (32, 4096), "typestr": "<V2"}, (32, 4096), "x", "typestr `<V2` is no element type"),
        ({"shape": (32, 4096), "typestr": "é4"}, (32, 4096), "x", "typestr `é4` is no element type"),
    ],
)
def test_the_manifest_checks_name_the_parameter(softmax, fake, x, y, param, message):
    def make(spec):
        return fake(spec) if isinstance(spec, tuple) else fake(**spec)

    if param is None:
        softmax.plan(make(x), make(y))
        return
    e = refusal(softmax, make(x), make(y))
    assert e.param == param, str(e)
    assert e.kernel == "softmax"
    assert message in str(e)
    assert str(e).startswith("kernel `softmax`: ")


def test_host_memory_and_non_arrays_are_refused(softmax, fake):
    e = refusal(softmax, np.zeros((32, 4096), np.float32), fake((32, 4096)))
    assert e.param == "x" and "on the CPU" in str(e) and "CUDA memory" in str(e)

    class HostOnly:
        __array_interface__ = {"shape": (32, 4096), "typestr": "<f4", "data": (0, False), "version": 3}

    e = refusal(softmax, fake((32, 4096)), HostOnly())
    assert e.param == "y" and "host array" in str(e)
    e = refusal(softmax, fake((32, 4096)), 1.0)
    assert e.param == "y" and "expected a tensor" in str(e) and "got float" in str(e)


def test_scalars_are_converted_to_the_parameter_type_or_refused(fake):
    rms = cutec.compile(example("rmsnorm"), defines={"N": 4096})
    x, w, y = fake((4, 4096), "<i2"), fake((4096,), "<i2"), fake((4, 4096), "<i2")
    # bf16 has no __cuda_array_interface__ typestr: the refusal says so, for the tensor, not the scalar.
    e = refusal(rms, x, w, y, 1e-6)
    assert e.param == "x" and "typestr `<i2`" in str(e)
    assert rms.signature.endswith("eps: f32)")
    assert [p.name for p in rms.params if p.kind == "scalar"] == ["eps"]
    e = refusal(rms, x, w, y, "1e-6")
    assert e.param == "x"  # tensors are described first, in order
    fakes32 = cutec.compile(SCALARS)
    t = fake((1024,))
    fakes32.plan(t, 1.5, 3, True)
    fakes32.plan(t, 2, n=np.int32(3), flag=False)  # an int for a float, numpy integers for ints
    for args, param, message in [
        ((t, "1.5", 3, True), "alpha", "expected a number for f32, got str"),
        ((t, 1.5, 3.0, True), "n", "expected an integer for i32, got float"),
        ((t, 1.5, 2**31, True), "n", "2147483648 is out of range for i32"),
        ((t, 1.5, True, True), "n", "expected an integer for i32, got bool"),
        ((t, 1.5, 3, 1), "flag", "expected a bool, got int"),
    ]:
        e = refusal(fakes32, *args)
        assert e.param == param and message in str(e), str(e)


SCALARS = """
kernel scale(x: Tensor<f32, N:1, gmem>, alpha: f32, n: i32, flag: bool)
launch(grid = (ceil_div(N, 256)), block = (256)) {
    let i = block_idx.x * 256 + thread_idx.x;
    if flag && i < n {
        x[i] = x[i] * alpha;
    }
}
"""


def test_tensor_maps_are_planned_from_the_arguments(fake):
    k = cutec.compile(example("tma_copy"))
    plan = k.plan(fake((1000, 4096)), fake((1000, 4096)))
    assert plan["tensor_maps"] and plan["grid"] == [16, 32, 1]
    # A row of 4097 floats is no multiple of 16 bytes: the driver's rule for a tensor map's stride.
    e = refusal(k, fake((1000, 4097)), fake((1000, 4097)))
    assert e.param == "x" and "tensor map" in str(e) and "multiple of 16" in str(e)


def test_requirements_of_the_kernel_are_checked(fake):
    k = cutec.compile(example("gemm_sm90_manual"))
    a, b = fake((256, 128), "<i2"), fake((512, 128), "<i2")
    e = refusal(k, a, b, fake((256, 512), "<i2"))
    assert e.param == "a"  # bf16 arrays cannot be described by a typestr: refused at the first


def test_output_shapes_from_the_manifest(softmax, fake):
    assert softmax.output_shapes(fake((32, 4096))) == {"y": ((32, 4096), (4096, 1))}
    assert softmax.output_shapes(x=fake((7, 4096))) == {"y": ((7, 4096), (4096, 1))}
    assert softmax.output_shapes(dims={"M": 3}) == {"y": ((3, 4096), (4096, 1))}
    e = pytest.raises(cutec.LaunchError, softmax.output_shapes).value
    assert e.param == "y" and "needs dimension `M`" in str(e)
    t = cutec.compile(example("transpose"))
    assert t.output_shapes(np.zeros((30, 10), np.float32)) == {"y": ((10, 30), (30, 1))}
    gemm = cutec.compile(example("gemm_sm90_manual"))
    assert gemm.output_shapes(fake((256, 64)), fake((512, 64))) == {"c": ((256, 512), (512, 1))}


PERSISTENT = """
kernel tiles(x: Tensor<f32, N:1, gmem>) launch(grid = (ceil_div(N, 256)), block = (256)) persistent {
    let i = block_idx.x * 256 + thread_idx.x;
    if i < N {
        x[i] = x[i] * 2.0;
    }
}
"""


def test_a_persistent_kernel_plans_its_grid_of_tiles(fake, softmax):
    k = cutec.compile(PERSISTENT)
    plan = k.plan(fake((100000,)))
    assert plan["persistent"] is True and plan["grid"] == [391, 1, 1]
    assert softmax.plan(fake((8, 4096)), fake((8, 4096)))["persistent"] is False


def test_a_null_pointer_is_refused(softmax, fake):
    e = refusal(softmax, fake((32, 4096), ptr=0), fake((32, 4096)))
    assert e.param == "x" and "data pointer is null" in str(e)


STRIDED = """
kernel rows(x: Tensor<f32, (L, N):(SX, 1), gmem>, y: Tensor<f32, (L, N):(SY, 1), gmem>)
launch(grid = (L), block = (32)) {
    if thread_idx.x < N {
        y[block_idx.x, thread_idx.x] = x[block_idx.x, thread_idx.x];
    }
}
"""


def test_a_broadcast_output_is_refused(fake):
    k = cutec.compile(STRIDED)
    assert k.plan(fake((4, 32)), fake((4, 32)))["dims"] == {"L": 4, "N": 32, "SX": 32, "SY": 32}
    # An input may be broadcast (every batch reads one row); an output may not (every batch would write one row).
    assert k.plan(fake((4, 32), strides=(0, 4)), fake((4, 32)))["dims"]["SX"] == 0
    e = refusal(k, fake((4, 32)), fake((4, 32), strides=(0, 4)))
    assert e.param == "y" and "mode 0 has stride 0 over 4 elements" in str(e) and "broadcast" in str(e)
    k.plan(fake((1, 32)), fake((1, 32), strides=(0, 4)))  # one batch: no two indices share memory
