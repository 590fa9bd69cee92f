//! Warpgroup roles: `role` statements become `warpgroup` regions on consecutive warpgroups, and the lowering
//! refuses roles that cannot run (E0313, E0314) and mbarriers that cannot complete (E0315).

use crate::lower::{example, lower_source, lowered_and_optimized};
use cutec_diagnostics::Diagnostic;
use cutec_ir::{Block, KernelBuilder, Loc, Module, Role, RoleRegion, Stmt, ValidationError, validate};

/// The warpgroup regions of a kernel: (name, first, count, regs).
fn regions(k: &cutec_ir::Kernel) -> Vec<(String, u32, u32, Option<u32>)> {
    let mut v = Vec::new();
    k.body.visit(&mut |s| {
        if let Stmt::Roles(regions) = s {
            v.extend(regions.iter().map(|r| (r.role.kind.name().to_string(), r.role.first, r.role.count, r.regs)));
        }
    });
    v
}

/// The role chains of a kernel's top level: the names of each chain's regions.
fn chains(k: &cutec_ir::Kernel) -> Vec<Vec<String>> {
    let chain = |s: &Stmt| match s {
        Stmt::Roles(regions) => Some(regions.iter().map(|r| r.role.kind.name().to_string()).collect()),
        _ => None,
    };
    k.body.stmts().iter().filter_map(chain).collect()
}

/// The codes and messages of the lowering's errors on `source`.
fn errors(source: &str) -> Vec<(String, String)> {
    match lower_source(source, "k", &[]) {
        Ok(m) => panic!("expected errors, got\n{}", cutec_ir::print(&m)),
        Err(d) => {
            d.iter().filter(|d| d.is_error()).map(|d: &Diagnostic| (d.code.to_string(), d.message.clone())).collect()
        }
    }
}

const HEAD: &str = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (384)) {";

#[test]
fn roles_take_consecutive_warpgroups_and_bind_their_rank() {
    let src = format!(
        "{HEAD}
    let v = x[thread_idx.x];
    role producer(registers = 40) {{ x[0] = v; }}
    role consumer(warpgroups = 2, registers = 232) as wg {{ x[wg + 1] = v; }}
    x[2] = v;
}}"
    );
    let (module, text) = lowered_and_optimized(&src, "k", &[]);
    let k = &module.kernels[0];
    assert_eq!(regions(k), [("producer".into(), 0, 1, Some(40)), ("consumer".into(), 1, 2, Some(232))], "{text}");
    // Roles written one after the other are one chain, which the text shows like `else if`.
    assert_eq!(chains(k), [vec!["producer".to_string(), "consumer".to_string()]], "{text}");
    // The rank is `thread_idx.x / 128 - 1`, computed in the consumers' region.
    assert!(text.contains("} else warpgroup role consumer 1..3 regs(232) {"), "{text}");
    assert!(text.contains("= div %") && text.contains(", 128"), "{text}");
    let again = cutec_ir::print(&cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}")));
    assert_eq!(again, text);
}

#[test]
fn a_role_without_registers_sets_none_and_the_rank_is_optional() {
    let src = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (256)) {
    role a { x[0] = 1.0; }
    role b(warpgroups = 1) { x[1] = 1.0; }
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    assert_eq!(regions(&module.kernels[0]), [("a".into(), 0, 1, None), ("b".into(), 1, 1, None)], "{text}");
}

#[test]
fn roles_apart_are_chains_apart() {
    // A statement between two roles ends the chain: the second role's region is entered after it, by every
    // thread that reaches it.
    let src = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (256)) {
    role a { x[0] = 1.0; }
    x[5] = 2.0;
    role b { x[1] = 1.0; }
}";
    let (module, text) = lowered_and_optimized(src, "k", &[]);
    assert_eq!(chains(&module.kernels[0]), [vec!["a".to_string()], vec!["b".to_string()]], "{text}");
}

#[test]
fn the_manual_gemm_runs_one_producer_and_two_consumers() {
    let (module, text) = lowered_and_optimized(&example("gemm_sm90_manual.cute"), "gemm_sm90_manual", &[]);
    let k = &module.kernels[0];
    assert_eq!(regions(k), [("producer".into(), 0, 1, Some(40)), ("consumer".into(), 1, 2, Some(232))], "{text}");
    // The budgets are regions' now: no `setmaxnreg` statement is left in the bodies.
    assert!(!text.contains("setmaxnreg"), "{text}");
}

#[test]
fn roles_that_do_not_fit_the_block_are_refused() {
    let cases = [
        // A role past the block's warpgroups.
        (
            "role p { } role c(warpgroups = 3) { }",
            "the role `c` has no threads: it needs warpgroups 1..=3, and the block has only 3",
        ),
        // Warpgroups left without a role.
        ("role p { }", "warpgroups 1..=2 of the block have no role"),
        ("role p(warpgroups = 0) { } role c(warpgroups = 3) { }", "the role `p` has no threads: 0 warpgroups"),
        ("role p(warpgroups = 9) { }", "the role `p` asks for 9 warpgroups, more than a block has"),
        (
            "if thread_idx.x < 128 { role p(warpgroups = 3) { } }",
            "the role `p` is not at the top level of a kernel body",
        ),
        ("{ role p(warpgroups = 3) { } }", "the role `p` is not at the top level of a kernel body"),
        ("role p(warpgroups = 3) { role q { } }", "the role `q` is not at the top level of a kernel body"),
    ];
    for (body, message) in cases {
        let src = format!("{HEAD}\n    {body}\n}}");
        assert_eq!(errors(&src), [("E0313".to_string(), message.to_string())], "{src}");
    }
    let odd = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (320)) { role p(warpgroups = 2) { } }";
    assert_eq!(errors(odd), [("E0313".into(), "a block of 320 threads is not a whole number of warpgroups".into())]);
    let dynamic = "kernel k(x: Tensor<f32, N:1, gmem>) launch(grid = (1), block = (N)) { role p { } }";
    assert_eq!(errors(dynamic), [("E0313".into(), "roles need a block size known at compile time".into())]);
    let in_fn = format!("{HEAD}\n    f(x);\n}}\nfn f(x: Tensor<f32, N:1, gmem>) {{ role p(warpgroups = 3) {{ }} }}");
    assert_eq!(errors(&in_fn), [("E0313".into(), "the role `p` is not at the top level of a kernel body".into())]);
}

#[test]
fn register_budgets_past_the_register_file_are_refused() {
    let over =
        format!("{HEAD}\n    role p(registers = 240) {{ }}\n    role c(warpgroups = 2, registers = 232) {{ }}\n}}");
    // 240 * 128 + 232 * 256 = 90112 > 65536; the role asking for the most per thread is blamed.
    assert_eq!(errors(&over), [("E0314".into(), "the roles ask for 90112 registers, more than the SM's 65536".into())]);
    // A role without `registers` counts at the budget at entry: 65536 / 384 = 170, 168 in steps of 8.
    let entry = format!("{HEAD}\n    role p {{ }}\n    role c(warpgroups = 2, registers = 200) {{ }}\n}}");
    assert_eq!(
        errors(&entry),
        [("E0314".into(), "the roles ask for 72704 registers, more than the SM's 65536".into())]
    );
    let fits = format!("{HEAD}\n    role p {{ }}\n    role c(warpgroups = 2, registers = 168) {{ }}\n}}");
    assert!(lower_source(&fits, "k", &[]).is_ok());
    for bad in [20, 100, 264] {
        let src = format!("{HEAD}\n    role p(warpgroups = 3, registers = {bad}) {{ }}\n}}");
        let message = format!("the role `p` asks for {bad} registers per thread");
        assert_eq!(errors(&src), [("E0314".to_string(), message)], "{src}");
    }
}

#[test]
fn gemm_in_a_role_is_warpgroup_uniform_but_not_under_a_lane_test() {
    let body = |cond: &str| {
        format!(
            "kernel k(c: Tensor<bf16, (M, N):(N, 1), gmem>) launch(grid = (1), block = (256)) {{
    let sa = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (128, 64)));
    let sb = make_tensor<bf16, smem>(tile_to_shape(SW128_K<bf16>, (64, 64)));
    role consumer(warpgroups = 2, registers = 232) as wg {{
        let mma = tiled_mma(wgmma<64, 64, 16, bf16, bf16, f32>, (1, 1, 1));
        let acc = mma.fragment_c((64, 64));
        if {cond} {{
            gemm(mma, local_tile(sa, (64, 64), (wg, 0)), sb, acc);
            wgmma_wait<0>();
        }}
        store(acc, mma.partition_c(local_tile(c, (64, 64), (wg, 0))));
    }}
}}"
        )
    };
    let (module, text) = lowered_and_optimized(&body("wg == 0"), "k", &[]);
    assert_eq!(regions(&module.kernels[0]).len(), 1, "{text}");
    let codes: Vec<_> = errors(&body("lane_idx == 0")).into_iter().map(|(c, _)| c).collect();
    assert_eq!(codes, ["E0312", "E0312"]);
}

#[test]
fn mbarriers_nobody_waits_on_or_nothing_arrives_on_are_refused() {
    let kernel = |uses: &str| {
        format!(
            "{HEAD}
    let bars = make_tensor<u64, smem>(2);
    if thread_idx.x == 0 {{ mbarrier_init(bars[0], 1); }}
    sync_threads();
    {uses}
}}"
        )
    };
    // The IR's `check-sync` proves it of the lowered kernel (and of what the scheduling passes write).
    let check_sync = |source: &str| -> Result<(), (String, String)> {
        let mut module = lower_source(source, "k", &[]).unwrap_or_else(|d| panic!("{d:#?}"));
        let pass = cutec_ir::find_pass("check-sync").expect("the pass exists");
        let mut analyses = cutec_ir::passes::Analyses::default();
        cutec_ir::passes::run_pass(pass, &mut module, &mut analyses).map_err(|e| {
            let d = e.to_diagnostic();
            (d.code.to_string(), d.message)
        })
    };
    assert_eq!(
        check_sync(&kernel("mbarrier_arrive(bars[1]);")),
        Err(("E0315".into(), "no thread waits on `bars`".into()))
    );
    assert_eq!(
        check_sync(&kernel("mbarrier_wait(bars[1], 0);")),
        Err(("E0315".into(), "this wait on `bars` never completes".into()))
    );
    // Per tensor: an arrival on one element and a wait on another are the tensor's protocol (whether this wait
    // completes is `check-protocol`'s proof).
    assert_eq!(check_sync(&kernel("mbarrier_arrive(bars[1]); mbarrier_wait(bars[0], 0);")), Ok(()));
}

#[test]
fn role_chains_that_leave_warpgroups_out_are_refused_after_the_passes() {
    // IR as a pass could leave it: a block of three warpgroups, a chain over two of them.
    let text = "kernel @k(%x: ptr<global> align(4)) block(384, 1, 1) {
  warpgroup producer 0..1 regs(40) {
    store 1.0, %x align(4)
  } else warpgroup consumer 1..2 regs(232) {
    store 2.0, %x align(4)
  }
}
";
    let run = |text: &str| {
        let mut module = cutec_ir::parse(text).unwrap_or_else(|e| panic!("{e}"));
        let pass = cutec_ir::find_pass("check-sync").expect("the pass exists");
        let mut analyses = cutec_ir::passes::Analyses::default();
        cutec_ir::passes::run_pass(pass, &mut module, &mut analyses).map_err(|e| {
            let d = e.to_diagnostic();
            (d.code.to_string(), d.message)
        })
    };
    assert_eq!(run(text), Err(("E0313".into(), "warpgroup 2 of the block runs no role".into())));
    assert_eq!(run(&text.replace("consumer 1..2", "consumer 1..3")), Ok(()));
    // Two chains together cover the block.
    let apart = text.replace("} else warpgroup consumer 1..2", "}\n  warpgroup consumer 1..3");
    assert_eq!(run(&apart), Ok(()));
}

#[test]
fn a_region_needs_its_warpgroups_in_a_known_block() {
    let region = |block: Option<[u32; 3]>, first: u32, count: u32| {
        let mut b = KernelBuilder::new("k");
        b.kernel_mut().block_size = block;
        b.warpgroup(Role { kind: cutec_ir::RoleKind::Source("p".into()), first, count }, Some(40), |_| {});
        validate(&Module { kernels: vec![b.finish()] }).map(drop).map_err(|e| e.error)
    };
    assert_eq!(region(Some([256, 1, 1]), 1, 1), Ok(()));
    assert_eq!(region(None, 0, 1), Err(ValidationError::WarpgroupsWithoutBlock));
    assert_eq!(region(Some([128, 2, 1]), 0, 1), Err(ValidationError::WarpgroupsWithoutBlock));
    assert_eq!(
        region(Some([256, 1, 1]), 1, 2),
        Err(ValidationError::NoSuchWarpgroups { first: 1, count: 2, warpgroups: 2 })
    );
    assert_eq!(
        region(Some([256, 1, 1]), 0, 0),
        Err(ValidationError::NoSuchWarpgroups { first: 0, count: 0, warpgroups: 2 })
    );
}

#[test]
fn a_role_chain_holds_regions_of_disjoint_warpgroups() {
    let chain = |second: (u32, u32)| {
        let mut b = KernelBuilder::new("k");
        b.kernel_mut().block_size = Some([384, 1, 1]);
        let region = |name: &str, (first, count): (u32, u32)| RoleRegion {
            role: Role { kind: cutec_ir::RoleKind::Source(name.into()), first, count },
            regs: None,
            body: Block::new(),
            at: Loc::NONE,
        };
        b.push(Stmt::Roles(vec![region("p", (0, 1)), region("c", second)]));
        validate(&Module { kernels: vec![b.finish()] }).map(drop).map_err(|e| e.error)
    };
    assert_eq!(chain((1, 2)), Ok(()));
    assert_eq!(chain((0, 2)), Err(ValidationError::OverlappingRoles { first: "p".into(), second: "c".into() }));
    // The builder starts a new chain for a region that shares warpgroups with the chain before it.
    let mut b = KernelBuilder::new("k");
    b.kernel_mut().block_size = Some([384, 1, 1]);
    for (name, first) in [("a", 0), ("b", 1), ("c", 1)] {
        let role = Role { kind: cutec_ir::RoleKind::Source(name.into()), first, count: 1 };
        b.push_role_region(RoleRegion { role, regs: None, body: Block::new(), at: Loc::NONE });
    }
    assert_eq!(chains(&b.finish()), [vec!["a".to_string(), "b".to_string()], vec!["c".to_string()]]);
}

/// `cutec explain` states the target's limits in words; they are the numbers `cutec-target` holds.
#[test]
fn explanations_state_the_targets_limits() {
    let explain = |code: &str| cutec_ir::CODES.iter().find(|c| c.code == code).expect("a code").explanation;
    let registers = explain("E0314");
    assert!(registers.contains(&format!("register file of {} registers", cutec_ir::SM_REGISTERS)), "{registers}");
    assert!(registers.contains(&format!("at most {}", cutec_ir::entry_registers(1))), "{registers}");
    let shared = explain("E0307");
    let (max, fixed) = (cutec_ir::MAX_SHARED_BYTES, cutec_ir::MAX_STATIC_SHARED_BYTES);
    assert!(shared.contains(&format!("at most {} KiB ({max} bytes)", max / 1024)), "{shared}");
    assert!(shared.contains(&format!("Up to {} KiB", fixed / 1024)), "{shared}");
}
