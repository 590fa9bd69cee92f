//! The kernel manifest of a compiled module: the interfaces the lowering recorded, completed with what only code
//! generation knows (the module file, the target, static shared memory).

use crate::Options;
use cutec_ir::{Module, ModuleInfo};
use cutec_manifest::{FORMAT_VERSION, Manifest};

pub(crate) fn build(module: &Module, info: &ModuleInfo, options: &Options) -> Manifest {
    let kernels = module
        .kernels
        .iter()
        .zip(&info.kernels)
        .filter_map(|(k, i)| {
            let mut entry = k.interface.clone()?;
            entry.name = k.name.clone();
            entry.launch.static_smem_bytes = u32::try_from(i.shared_bytes).unwrap_or(u32::MAX);
            Some(entry)
        })
        .collect();
    Manifest {
        format_version: FORMAT_VERSION,
        target: options.cpu.clone(),
        module: options.module_file.clone(),
        kernels,
    }
}
