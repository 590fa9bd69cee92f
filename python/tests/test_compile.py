"""cutec.compile: kernels from paths and from text, their manifest, PTX and signature; errors as data."""

import concurrent.futures
import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
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


def test_a_compile_error_pickles_with_its_diagnostics():
    with pytest.raises(cutec.CompileError) as info:
        cutec.compile(BROKEN, name="broken.cute")
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is cutec.CompileError
    assert str(e) == str(info.value) and e.diagnostics == info.value.diagnostics
    launch = pickle.loads(pickle.dumps(cutec.LaunchError("kernel `k`: bad", kernel="k", param="x")))
    assert (str(launch), launch.kernel, launch.param) == ("kernel `k`: bad", "k", "x")


def _compile_text(text):
    return cutec.compile(text, name="broken.cute").name


def test_a_process_pool_gets_the_compile_error():
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        future = pool.submit(_compile_text, BROKEN)
        with pytest.raises(cutec.CompileError) as info:
            future.result(timeout=300)
    assert [d.code for d in info.value.errors] == ["E0100"]


def test_a_string_is_a_path_unless_it_holds_a_newline_or_a_brace(tmp_path):
    # A path that names no file is read as one (E0400), never parsed as a program.
    for missing in ("kernels/nope.cu", "nope", Path("nope.cute")):
        with pytest.raises(cutec.CompileError) as info:
            cutec.compile(missing)
        [d] = info.value.errors
        assert d.code == "E0400" and f"cannot read `{missing}`" in d.message, d.message
    with pytest.raises(cutec.CompileError) as info:
        cutec.compile("examples")  # a folder
    assert info.value.errors[0].code == "E0400"
    one_line = BROKEN.replace("\n", " ")
    with pytest.raises(cutec.CompileError) as info:
        cutec.compile(one_line)  # a `{`: the text of a program
    assert info.value.errors[0].code == "E0100"


def test_bytes_are_refused_with_a_type_error():
    with pytest.raises(TypeError, match=r"got bytes; decode the text first"):
        cutec.compile(BROKEN.encode())
    with pytest.raises(TypeError, match="got int"):
        cutec.compile(3)


def test_a_file_not_utf8_is_e0400_as_the_cli_says(tmp_path):
    path = tmp_path / "latin1.cute"
    path.write_bytes("// caf\u00e9\n".encode("latin-1"))
    with pytest.raises(cutec.CompileError) as info:
        cutec.compile(path)
    [d] = info.value.errors
    assert d.code == "E0400" and "not contain valid UTF-8" in d.message
    exe = cli()
    if exe is not None:
        run = subprocess.run([str(exe), "build", str(path), "--color", "never", "-o", "-"], capture_output=True, text=True)
        assert run.returncode == 1 and str(info.value) == run.stderr


def test_opt_level_out_of_range_or_mistyped():
    for level in (4, -1, 300):
        with pytest.raises(ValueError, match=f"`opt_level` is 0 to 3, got {level}"):
            cutec.compile(example("copy"), opt_level=level)
    for level in ("3", 3.0, True, None):
        with pytest.raises(TypeError, match="`opt_level` is an int from 0 to 3"):
            cutec.compile(example("copy"), opt_level=level)
    assert cutec.compile(example("copy"), opt_level=np.int64(2)).key == cutec.compile(example("copy"), opt_level=2).key


def test_numpy_integers_and_bools_are_defines():
    a = cutec.compile(example("softmax"), defines={"N": np.int64(4096)})
    b = cutec.compile(example("softmax"), defines={"N": 4096})
    assert a.key == b.key and a.manifest["const_params"]["N"] == 4096
    on = cutec.compile(example("gemm_sm90_manual"), defines={"TMA_STORE": np.bool_(True), "STAGES": np.int32(3)})
    assert on.manifest["const_params"]["TMA_STORE"] is True and on.manifest["const_params"]["STAGES"] == 3
    with pytest.raises(ValueError, match="64-bit signed integers"):
        cutec.compile(example("softmax"), defines={"N": 2**63})
    with pytest.raises(TypeError, match="expected an int or a bool, got float64"):
        cutec.compile(example("softmax"), defines={"N": np.float64(4096)})
    with pytest.raises(TypeError, match="a define's name is a str"):
        cutec.compile(example("softmax"), defines={1: 4096})
