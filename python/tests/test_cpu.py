"""``kernel(..., device="cpu")``: calls run by the interpreter of the scheduled IR on numpy arrays (and CPU
torch tensors where torch is installed), with no GPU."""

import numpy as np
import pytest

import cutec


def test_copy_runs_on_numpy_arrays(root):
    k = cutec.compile(root / "examples/copy.cute")
    x = np.arange(1003, dtype=np.float32) * 0.5
    y = np.full_like(x, np.nan)
    k(x, y, device="cpu")
    np.testing.assert_array_equal(y, x)


def test_transpose_and_gemm_simt_match_numpy(root):
    rng = np.random.default_rng(0)
    t = cutec.compile(root / "examples/transpose.cute")
    x = rng.standard_normal((45, 70), dtype=np.float32)
    y = np.zeros((70, 45), dtype=np.float32)
    t(x, y, device="cpu")
    np.testing.assert_array_equal(y, x.T)

    g = cutec.compile(root / "examples/gemm_simt.cute", defines={"BM": 32, "BN": 32})
    a = rng.standard_normal((33, 24), dtype=np.float32)
    b = rng.standard_normal((20, 24), dtype=np.float32)
    c = np.zeros((33, 20), dtype=np.float32)
    g(a, b, c, device="cpu", schedule="latest")
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5, atol=1e-5)


def test_a_race_is_a_launch_error(root):
    src = (root / "examples/transpose.cute").read_text().replace("    sync_threads();\n", "")
    k = cutec.compile(src, name="racy.cute")
    x = np.zeros((40, 40), dtype=np.float32)
    with pytest.raises(cutec.LaunchError, match="race"):
        k(x, np.zeros_like(x), device="cpu")


def test_the_checks_of_a_gpu_call_apply(root):
    k = cutec.compile(root / "examples/copy.cute")
    with pytest.raises(cutec.LaunchError, match="y"):
        k(np.zeros(8, dtype=np.float32), np.zeros(9, dtype=np.float32), device="cpu")
    with pytest.raises(cutec.LaunchError):
        k(np.zeros(8, dtype=np.float64), np.zeros(8, dtype=np.float64), device="cpu")
    with pytest.raises(cutec.LaunchError, match="device"):
        k(np.zeros(8, dtype=np.float32), np.zeros(8, dtype=np.float32), device="tpu")


def test_a_bf16_wgmma_gemm_on_torch_cpu_tensors(root):
    torch = pytest.importorskip("torch")
    k = cutec.compile(root / "examples/gemm_sm90.cute")
    a = torch.randn(129, 72).to(torch.bfloat16)
    b = torch.randn(264, 72).to(torch.bfloat16)
    c = torch.zeros(129, 264, dtype=torch.bfloat16)
    k(a, b, c, device="cpu")
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=1e-2, atol=1e-2)
