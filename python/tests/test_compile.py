"""cutec.compile: kernels from paths and from text, their manifest, PTX and signature; errors as data."""

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import cutec
from conftest import ROOT, example


def test_compile_a_path_gives_manifest_ptx_and_signature():
    k = cutec.compile(example("softmax"), defines={"N": 4096})
    assert k.name == "softmax"
    assert ".entry softmax" in k.ptx
    assert k.manifest["name"] == "softmax"
    assert [p["name"] for p in k.manifest["params"]] == ["x", "y"]
    assert k.manifest["const_params"]["N"] == 4096
    assert k.signature == "softmax(x: f32[(M,4096):(4096,1)] read, y: f32[(M,4096):(4096,1)] write)"
    assert k.dims == ["M"]
    assert k.module_manifest["target"] == cutec.TARGET == "sm_90a"


def test_compile_a_pathlib_path_and_source_text():
    src = (ROOT / "examples" / "copy.cute").read_text()
    a = cutec.compile(Path("examples/copy.cute"))
    b = cutec.compile(src)
    assert a.ptx == b.ptx
    assert a.signature == b.signature == "copy(x: f32[N:1] read, y: f32[N:1] write)"


def test_defines_are_typed():
    on = cutec.compile(example("gemm_sm90_manual"), defines={"TMA_STORE": True, "STAGES": 3})
    off = cutec.compile(example("gemm_sm90_manual"), defines={"TMA_STORE": False, "STAGES": 4})
    assert on.manifest["const_params"]["TMA_STORE"] is True
    assert off.manifest["const_params"]["STAGES"] == 4
    assert on.ptx != off.ptx
    with pytest.raises(TypeError, match="expected an int or a bool"):
        cutec.compile(example("softmax"), defines={"N": 4096.0})


def test_a_file_of_several_kernels_asks_for_one():
    src = (ROOT / "examples" / "copy.cute").read_text()
    body = "\n".join(line for line in src.splitlines() if not line.startswith("//!"))
    two = src + "\n" + body.replace("kernel copy", "kernel copy2")
    with pytest.raises(ValueError, match="2 kernels"):
        cutec.compile(two)
    assert cutec.compile(two, kernel="copy2").name == "copy2"


BROKEN = """kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (32)) {
    let y = z;
}
"""


def test_compile_errors_are_data():
    with pytest.raises(cutec.CompileError) as info:
        cutec.compile(BROKEN, name="broken.cute")
    e = info.value
    [d] = e.errors
    assert (d.severity, d.code) == ("error", "E0100")
    assert "cannot find `z`" in d.message
    label = d.primary
    assert (label.file, label.line, label.column, label.end_column) == ("broken.cute", 2, 13, 14)
    assert BROKEN[label.start : label.end] == "z"
    assert str(e).startswith("error[E0100]: cannot find `z` in this scope\n  ┌─ broken.cute:2:13\n")
    assert cutec.explain("E0100")[0]


def cli():
    """The `cutec` binary of this checkout, if built (cargo build / cargo test build it)."""
    for profile in ("debug", "release"):
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        exe = target / profile / "cutec"
        if exe.exists():
            return exe
    return shutil.which("cutec")


# One wrong program of each stage: syntax, names and types, layout algebra, lowering, the protocol check.
UI = ["syntax_three_errors", "sema_unknown_name", "layout_composition_not_divisible", "build_wgmma_divergent",
      "build_tile_always_outside", "build_protocol_parity"]


@pytest.mark.parametrize("ui", UI)
def test_str_of_a_compile_error_is_what_the_cli_prints(ui):
    path = f"tests/ui/{ui}.cute"
    if not (ROOT / path).exists():
        pytest.skip(f"{path} is gone")
    exe = cli()
    if exe is None:
        pytest.skip("no cutec binary built")
    run = subprocess.run([str(exe), "build", path, "--color", "never", "--emit", "ptx", "-o", "-"], capture_output=True, text=True)
    assert run.returncode == 1
    with pytest.raises(cutec.CompileError) as info:
        cutec.compile(path)
    assert str(info.value) == run.stderr


def test_warnings_are_issued_and_kept():
    # A kernel whose mbarrier protocol the check cannot follow builds with warning E0345 (tests/ui/warn_*.cute).
    warn = sorted((ROOT / "tests" / "ui").glob("warn_*.cute"))
    if not warn:
        pytest.skip("no warn_*.cute ui test")
    path = str(warn[0].relative_to(ROOT))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        k = cutec.compile(path)
    assert k.warnings and k.warnings[0].severity == "warning"
    assert any(issubclass(w.category, cutec.CompileWarning) for w in caught)


def test_importing_cutec_imports_no_torch():
    code = "import sys, cutec; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
