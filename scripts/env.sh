# Sourced by the other scripts: where cargo tools, LLVM 22 and ptxas live.
if [ -d "$HOME/.cargo/bin" ]; then
    case ":$PATH:" in *":$HOME/.cargo/bin:"*) ;; *) export PATH="$HOME/.cargo/bin:$PATH" ;; esac
fi
export LLVM_SYS_221_PREFIX="${LLVM_SYS_221_PREFIX:-/usr/lib/llvm-22}"
_nv="$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "bin"))' 2>/dev/null || true)"
if [ -n "$_nv" ] && [ -d "$_nv" ]; then
    case ":$PATH:" in *":$_nv:"*) ;; *) export PATH="$_nv:$PATH" ;; esac
fi
unset _nv
