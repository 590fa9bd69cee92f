# Sourced by the other scripts: where cargo tools, LLVM 22, ptxas, cuobjdump and nvdisasm live.
if [ -d "$HOME/.cargo/bin" ]; then
    case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) export PATH="$HOME/.cargo/bin:$PATH" ;; esac
fi
export LLVM_SYS_221_PREFIX="${LLVM_SYS_221_PREFIX:-/usr/lib/llvm-22}"
_nv="$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "bin"))' 2>/dev/null || true)"
if [ -n "$_nv" ] && [ -d "$_nv" ]; then
    case ":$PATH:" in *":$_nv:"*) ;; *) export PATH="$_nv:$PATH" ;; esac
    # cuobjdump --dump-sass runs nvdisasm from the directory NVDISASM_PATH names (a directory, not the binary).
    if [ -x "$_nv/nvdisasm" ]; then export NVDISASM_PATH="$_nv"; fi
fi
unset _nv
