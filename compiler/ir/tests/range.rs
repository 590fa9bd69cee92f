//! The range analysis and the operand rules proved with it (`check-operands`), on hand-written IR: the range of
//! each source and operator, and each rule's refusal next to the nearest accepted program.

use cutec_ir::analysis::range::{Interval, Ranges};
use cutec_ir::passes::operands::{OperandError, Rule};
use cutec_ir::{Handle, Module};

/// A kernel of block `block` (and `cluster`, if given) whose body is `body`, with `%0 = tid.x` and
/// `%1 = laneid` first, and an mbarrier array `@bars`.
fn kernel(block: &str, cluster: &str, body: &str) -> Module {
    let text = format!(
        "kernel @k(%p: ptr<global> align(4), %n: i32, %map: ptr<param> align(64) noalias readonly) \
         block({block}){cluster} {{\n  shared @bars: [4 x i64] align(8)\n  \
         var $i: i32\n  var $c: i32\n  %0: i32 = sreg tid.x\n  %1: i32 = sreg laneid\n{body}}}\n"
    );
    let module = cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    cutec_ir::validate(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    module
}

/// The range, in the whole CTA, of the expression the body's last line defines (`%N: ... = ...`).
fn range_of_last(block: &str, body: &str) -> Interval {
    let module = kernel(block, "", body);
    let info = cutec_ir::validate(&module).expect("valid");
    let k = &module.kernels[0];
    let mut ranges = Ranges::new(k, &info.kernels[0]);
    let cta = ranges.cta();
    let mut last: Option<Handle<cutec_ir::Expr>> = None;
    k.body.visit(&mut |s| last = s.defines().or(last));
    let last = last.expect("an expression");
    ranges.of(cta, last)
}

/// What `check-operands` refuses in the kernel, if anything.
fn operand_error(module: &mut Module) -> Option<OperandError> {
    let pass = cutec_ir::passes::find_pass("check-operands").expect("the pass exists");
    let mut analyses = cutec_ir::passes::Analyses::default();
    match pass.run(module, &mut analyses) {
        Ok(()) => None,
        Err(e) => match e.kind {
            cutec_ir::passes::PassErrorKind::Operand(o) => Some(*o),
            other => panic!("not an operand error: {other:?}"),
        },
    }
}

fn refused(block: &str, cluster: &str, body: &str) -> OperandError {
    operand_error(&mut kernel(block, cluster, body)).unwrap_or_else(|| panic!("accepted:\n{body}"))
}

fn accepted(block: &str, cluster: &str, body: &str) {
    if let Some(e) = operand_error(&mut kernel(block, cluster, body)) {
        panic!("refused: {e:?}\n{body}");
    }
}

#[test]
fn thread_indices_and_their_arithmetic_have_the_block_s_ranges() {
    let r = |body: &str| range_of_last("256, 1, 1", body);
    assert_eq!(r("  %2: i32 = add %0, 0\n"), Interval::new(0, 255));
    assert_eq!(r("  %2: i32 = div %0, 128\n"), Interval::new(0, 1));
    assert_eq!(r("  %2: i32 = div %0, 128\n  %3: i32 = add %2, 1\n"), Interval::new(1, 2));
    assert_eq!(r("  %2: i32 = shr %0, 5\n"), Interval::new(0, 7));
    assert_eq!(r("  %2: i32 = rem %0, 32\n"), Interval::new(0, 31));
    assert_eq!(r("  %2: i32 = and %0, 15\n"), Interval::new(0, 15));
    assert_eq!(r("  %2: i32 = mul %0, -2\n"), Interval::new(-510, 0));
    assert_eq!(r("  %2: i32 = shl 1, 16\n"), Interval::exact(65536));
    assert_eq!(r("  %2: i32 = sub %1, 40\n"), Interval::new(-40, -9));
    // A parameter is anything of its type; dividing it by a constant narrows it.
    assert_eq!(r("  %2: i32 = div %n, 65536\n"), Interval::new(-32768, 32767));
    // A result that may wrap is anything of its type.
    assert_eq!(r("  %2: i32 = mul %n, 2\n"), Interval::new(i32::MIN.into(), i32::MAX.into()));
    // Division by a divisor that may be 0 says nothing.
    assert_eq!(r("  %2: i32 = div 7, %0\n"), Interval::new(i32::MIN.into(), i32::MAX.into()));
}

#[test]
fn variables_take_every_value_written_to_them() {
    let r = |body: &str| range_of_last("128, 1, 1", body);
    // A loop's variable takes its bounds.
    assert_eq!(r("  for $i in 2..10 step 1 {\n    %2: i32 = read $i\n  }\n"), Interval::new(2, 9));
    // Written under a condition: both values.
    let two = "  $c = 3\n  %2: i1 = cmp.eq %0, 0\n  if %2 {\n    $c = 7\n  }\n  %3: i32 = read $c\n";
    assert_eq!(r(two), Interval::new(3, 7));
    // A counter keeps growing: its type's whole range.
    let counter = "  $c = 0\n  for $i in 0..%n step 1 {\n    %2: i32 = read $c\n    %3: i32 = add %2, 1\n    \
                   $c = %3\n  }\n  %4: i32 = read $c\n";
    assert_eq!(r(counter), Interval::new(i32::MIN.into(), i32::MAX.into()));
}

#[test]
fn mbarrier_counts_and_bytes_are_in_range() {
    for (count, ok) in [("1", true), ("1048575", true), ("0", false), ("-1", false), ("1048576", false)] {
        let body = format!("  %2: ptr<shared> = offset @bars, 0 x i64\n  mbarrier.init %2, {count}\n");
        match ok {
            true => accepted("128, 1, 1", "", &body),
            false => assert_eq!(refused("128, 1, 1", "", &body).rule, Rule::MbarrierCount, "{count}"),
        }
    }
    let bytes = |b: &str| format!("  %2: ptr<shared> = offset @bars, 0 x i64\n  mbarrier.arrive.expect_tx %2, {b}\n");
    accepted("128, 1, 1", "", &bytes("0"));
    accepted("128, 1, 1", "", &bytes("32768"));
    assert_eq!(refused("128, 1, 1", "", &bytes("-8192")).rule, Rule::ExpectTxBytes);
    // A count from a kernel argument is not bounded: refused, with the range found.
    let e = refused("128, 1, 1", "", "  %2: ptr<shared> = offset @bars, 0 x i64\n  mbarrier.init %2, %n\n");
    assert_eq!((e.rule, e.range.lo), (Rule::MbarrierCount, i128::from(i32::MIN)));
}

#[test]
fn named_barriers_have_ids_1_to_15_and_whole_warps_within_the_block() {
    let sync = |id: &str, n: &str| format!("  %2: i32 = div %0, 128\n  %3: i32 = add %2, 1\n  bar.sync {id}, {n}\n");
    accepted("256, 1, 1", "", &sync("%3", "128"));
    accepted("256, 1, 1", "", &sync("15", "256"));
    for (id, n, block) in
        [("0", "128", "256, 1, 1"), ("16", "128", "256, 1, 1"), ("%0", "128", "256, 1, 1"), ("%n", "128", "128, 1, 1")]
    {
        assert_eq!(refused(block, "", &sync(id, n)).rule, Rule::BarrierId, "{id}");
    }
    for n in ["256", "100", "0", "%n"] {
        let e = refused("128, 1, 1", "", &sync("1", n));
        assert!(matches!(e.rule, Rule::BarrierThreads { block: Some(128) }), "{n}: {e:?}");
    }
    // In a role of warpgroups 1 and 2, `tid.x / 128 + 1` is 2 or 3.
    let role = "  warpgroup consumer 1..3 {\n    %2: i32 = div %0, 128\n    %3: i32 = add %2, 1\n    \
                bar.sync %3, 128\n  }\n  warpgroup producer 0..1 {\n  }\n";
    accepted("384, 1, 1", "", role);
    // With 15 warpgroups' worth of ids taken, one more is past 15.
    let past = "  %2: i32 = div %0, 64\n  %3: i32 = add %2, 1\n  bar.sync %3, 64\n";
    assert_eq!(refused("1024, 1, 1", "", past).range, Interval::new(1, 16));
}

#[test]
fn multicast_masks_name_ctas_of_the_cluster() {
    let load = |mask: &str| {
        format!(
            "  %2: ptr<shared> = offset @bars, 0 x i64\n  %3: ptr<shared> = offset @bars, 2 x i64\n  \
             tma.load %3, %map[0, 0], %2 multicast {mask}\n"
        )
    };
    accepted("128, 1, 1", " cluster(2, 1, 1)", &load("3"));
    accepted("128, 1, 1", " cluster(4, 1, 1)", &load("5"));
    for (mask, cluster) in [("7", 2), ("0", 2), ("65536", 2), ("%n", 2)] {
        let e = refused("128, 1, 1", " cluster(2, 1, 1)", &load(mask));
        assert_eq!(e.rule, Rule::MulticastMask { cluster: Some(cluster) }, "{mask}");
    }
    assert_eq!(refused("128, 1, 1", "", &load("1")).rule, Rule::MulticastMask { cluster: None });
    // The rank of a remote arrive, like `map_shared`'s, is inside the cluster.
    let remote =
        |r: &str| format!("  %2: ptr<shared> = offset @bars, 0 x i64\n  mbarrier.arrive.cluster %2, cta {r}\n");
    accepted("128, 1, 1", " cluster(2, 1, 1)", &remote("1"));
    let e = refused("128, 1, 1", " cluster(2, 1, 1)", &remote("2"));
    assert_eq!((e.code(), e.rule), ("E0319", Rule::CtaRank { cluster: Some(2) }));
}

#[test]
fn a_role_has_at_least_its_accumulator_s_registers() {
    let role = |regs: u32| {
        let text = format!(
            "kernel @k() block(256, 1, 1) {{\n  shared @s: [16384 x bf16] align(1024)\n  local @acc: [128 x f32] \
             align(16)\n  warpgroup producer 0..1 regs(40) {{\n  }}\n  warpgroup consumer 1..2 regs({regs}) {{\n    \
             wgmma.fence\n    wgmma.mma_async m64n256k16.bf16 @acc, @s desc(sw128, lbo 16, sbo 1024, k), @s \
             desc(sw128, lbo 16, sbo 1024, k), scale_d true\n    wgmma.commit_group\n    wgmma.wait_group 0\n  }}\n}}\n"
        );
        let mut module = cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        operand_error(&mut module)
    };
    assert_eq!(role(128), None);
    let e = role(120).expect("refused");
    assert_eq!(e.rule, Rule::RoleRegisters { role: "consumer".into(), regs: 120, needed: 128, n: 256, count: 1 });
    assert_eq!(e.code(), "E0333");
}

/// The warpgroups' budgets must fit the SM's 65536 registers (E0314), each warpgroup counting its regions'
/// `setmaxnreg` or, outside any, its budget at entry: as the lowering checks roles written by hand, proved here
/// for the regions the passes write.
#[test]
fn the_warpgroups_register_budgets_fit_the_register_file() {
    let roles = |regions: &str| {
        let text = format!("kernel @k(%x: ptr<global> align(4)) block(384, 1, 1) {{\n{regions}}}\n");
        let mut module = cutec_ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        operand_error(&mut module)
    };
    let two = |producer: u32, consumers: u32| {
        format!(
            "  warpgroup producer 0..1 regs({producer}) {{\n  }}\n  warpgroup consumer 1..3 regs({consumers}) {{\n  }}\n"
        )
    };
    // 40 * 128 + 232 * 256 = 64512: what specialize-warps gives two consumer warpgroups.
    assert_eq!(roles(&two(40, 232)), None);
    let e = roles(&two(40, 240)).expect("refused");
    assert_eq!((e.code(), e.rule), ("E0314", Rule::RegisterBudget { total: 66560, sm: 65536 }));
    // Warpgroup 0 runs no region: it keeps the 168 registers of the entry.
    let e = roles("  warpgroup consumer 1..3 regs(232) {\n  }\n").expect("refused");
    assert_eq!(e.rule, Rule::RegisterBudget { total: 168 * 128 + 232 * 256, sm: 65536 });
    assert_eq!(roles("  warpgroup consumer 1..3 regs(168) {\n  }\n"), None);
}
