//! The kernel manifest of a compiled module: the interfaces the lowering made beside the IR, completed with what only code
//! generation knows (the module file, the target, static shared memory).

use crate::Options;
use cutec_ir::{Module, ModuleInfo};
use cutec_manifest::{FORMAT_VERSION, Kernel, Manifest};

pub(crate) fn build(module: &Module, interfaces: &[Kernel], info: &ModuleInfo, options: &Options) -> Manifest {
    let kernels = module
        .kernels
        .iter()
        .zip(&info.kernels)
        .zip(interfaces)
        .map(|((k, i), interface)| {
            let mut entry = interface.clone();
            entry.name = k.name.clone();
            if k.shared_is_dynamic() {
                // The allocations live in dynamic shared memory: the launch must ask for them.
                let bytes = cutec_manifest::Expr::Const(i.shared_bytes as i64);
                entry.launch.smem_bytes = match entry.launch.smem_bytes.as_const() {
                    Some(0) => bytes,
                    _ => cutec_manifest::Expr::op(cutec_manifest::Op::Add, entry.launch.smem_bytes.clone(), bytes),
                };
                entry.launch.static_smem_bytes = 0;
            } else {
                entry.launch.static_smem_bytes = u32::try_from(i.shared_bytes).unwrap_or(u32::MAX);
            }
            entry
        })
        .collect();
    Manifest {
        format_version: FORMAT_VERSION,
        target: options.cpu.clone(),
        module: options.module_file.clone(),
        kernels,
    }
}
