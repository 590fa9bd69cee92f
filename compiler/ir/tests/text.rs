//! The text form: hand-written `.ir` files parse and validate, every module round-trips through the parser, each
//! pass runs on `.ir` fixtures (`passes/*.ir`, first line `// pass: NAME`), and the dependency graphs of the
//! hand-written loops are pinned.

use cutec_ir::analysis::deps::DepGraph;
use cutec_ir::passes::{Analyses, run_pass};
use cutec_ir::{Module, Stmt, find_pass, fixtures, parse, print, validate};

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parsed(text: &str) -> Module {
    let module = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    validate(&module).unwrap_or_else(|e| panic!("{e}\n{}", print(&module)));
    module
}

/// `print(parse(print(m))) == print(m)`.
pub fn assert_round_trips(module: &Module) {
    let text = print(module);
    let again = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(print(&again), text);
}

#[test]
fn fixtures_round_trip() {
    for m in [fixtures::copy(), fixtures::softmax(), fixtures::kitchen_sink()] {
        assert_round_trips(&m);
        let mut m = m;
        cutec_ir::run_pipeline(&mut m, Default::default()).unwrap();
        assert_round_trips(&m);
    }
}

/// The rewrite that overrides nothing.
struct Identity;

impl cutec_ir::visit::Rewrite for Identity {
    type Error = std::convert::Infallible;
}

/// The walk's defaults rebuild every statement kind unchanged: the fixtures (every kind among them, the Hopper
/// operations, warpgroup regions and `while` loops too) come out of a rewrite that overrides nothing equal to
/// what went in.
#[test]
fn a_rewrite_that_overrides_nothing_rebuilds_every_block_unchanged() {
    let mut modules = vec![fixtures::copy(), fixtures::softmax(), fixtures::kitchen_sink()];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ir");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    modules.extend(files.iter().filter(|p| p.extension().is_some_and(|e| e == "ir")).map(|p| parsed(&read(p))));
    assert!(modules.len() > 3);
    for m in modules {
        for k in &m.kernels {
            let Ok(body) = cutec_ir::visit::Rewrite::block(&mut Identity, k.body.clone());
            assert_eq!(body, k.body, "{}", print(&m));
        }
    }
}

#[test]
fn hand_written_ir_parses_validates_and_round_trips() {
    insta::glob!("ir/*.ir", |path| {
        let module = parsed(&read(path));
        assert_round_trips(&module);
        insta::assert_snapshot!(print(&module));
    });
}

#[test]
fn passes_on_ir_fixtures() {
    insta::glob!("passes/*.ir", |path| {
        let text = read(path);
        let name = text.lines().next().and_then(|l| l.strip_prefix("// pass: ")).expect("a `// pass: NAME` line");
        let pass = find_pass(name).unwrap_or_else(|| panic!("no pass `{name}`"));
        let mut module = parsed(&text);
        let out = match run_pass(pass, &mut module, &mut Analyses::default()) {
            Ok(()) => {
                validate(&module).unwrap_or_else(|e| panic!("{name} left invalid IR: {e}\n{}", print(&module)));
                assert_round_trips(&module);
                print(&module)
            }
            Err(e) => {
                let d = e.to_diagnostic();
                format!("error[{}]: {e}\nnote: {}\n", d.code, d.notes.join("\nnote: "))
            }
        };
        insta::assert_snapshot!(out);
    });
}

/// The first loop of the kernel, in program order.
fn first_loop(module: &Module) -> Option<&Stmt> {
    fn find(b: &cutec_ir::Block) -> Option<&Stmt> {
        b.stmts().iter().find_map(|s| if s.is_loop() { Some(s) } else { s.blocks().find_map(find) })
    }
    find(&module.kernels[0].body)
}

#[test]
fn dependency_graphs_of_hand_written_loops() {
    insta::glob!("ir/*.ir", |path| {
        let module = parsed(&read(path));
        let lp = first_loop(&module).expect("a loop");
        let g = DepGraph::of_loop(&module.kernels[0], lp).expect("a loop");
        insta::assert_snapshot!(format!("{}\n{}", g.to_text(), g.to_dot()));
    });
}

#[test]
fn parse_errors_say_where() {
    let e = parse("kernel @k() {\n  %0: i32 = frobnicate 1\n}\n").unwrap_err();
    assert_eq!(e.to_string(), "2:24: unknown expression `frobnicate`");
    let e = parse("kernel @k() {\n  store %4, %5 align(4)\n}\n").unwrap_err();
    assert_eq!(e.to_string(), "0:0: %4 is used but never defined");
    let e = parse("kernel @k(%x: ptr<global> align(4)) {\n  store 1, @nope align(4)\n}\n").unwrap_err();
    assert_eq!(e.to_string(), "2:18: no allocation `@nope`");
}

/// The dependency graph names resources and pairs each asynchronous operation with the waits of its domain: two
/// TMA loads into two tiles, each signalling its own mbarrier, then a wait on each and a read of each tile.
#[test]
fn dependency_edges_name_resources_and_async_domains() {
    let module = parsed(
        "kernel @two(%a: ptr<param> align(64), %k: i32) block(128, 1, 1) {
  shared @ta: [1024 x bf16] align(1024)
  shared @tb: [1024 x bf16] align(1024)
  shared @bars: [2 x i64] align(8)
  var $i: i32
  %0: i32 = sreg tid.x
  %1: ptr<shared> = offset @bars, 1 x i64
  for $i in 0..%k step 1 {
    %2: i32 = read $i
    mbarrier.arrive.expect_tx @bars, 2048
    tma.load @ta, %a[0, %2], @bars
    tma.load @tb, %a[64, %2], %1
    mbarrier.wait @bars, parity 0
    mbarrier.wait %1, parity 0
    %3: bf16 = load bf16, @ta align(2)
    %4: bf16 = load bf16, @tb align(2)
    barrier.cta
  }
}
",
    );
    let k = &module.kernels[0];
    let lp = k.body.stmts().iter().find(|s| s.is_loop()).expect("a loop");
    let g = DepGraph::of_loop(k, lp).expect("a loop");
    let edges = |from: usize, to: usize| -> Vec<String> {
        g.edges()
            .into_iter()
            .filter(|&(a, b, d)| a == from && b == to && d.distance == 0)
            .map(|(_, _, d)| g.kind_name(d.kind))
            .collect()
    };
    // s1 expect_tx @bars, s2 tma.load @ta (signals @bars), s3 tma.load @tb (signals @bars[1]), s4 wait @bars,
    // s5 wait @bars[1], s6 load @ta, s7 load @tb.
    assert!(edges(1, 2).is_empty(), "the expect_tx and the load it arms touch no common memory: {:?}", edges(1, 2));
    assert!(edges(2, 3).is_empty(), "two loads into two tiles: {:?}", edges(2, 3));
    // A load and the wait of its barrier (which, a barrier, orders the load too).
    assert_eq!(edges(2, 4), ["async", "order"]);
    // The second barrier is an offset of the same allocation: the analysis does not tell them apart.
    assert_eq!(edges(2, 5), ["async", "order"]);
    assert_eq!(edges(2, 6), ["mem.raw(@ta)"], "{:?}", edges(2, 6));
    assert!(edges(2, 7).is_empty(), "the load into @ta and the read of @tb: {:?}", edges(2, 7));
    assert_eq!(edges(3, 7), ["mem.raw(@tb)"]);
    // The wait is not a write of the tile it makes readable: it orders the read.
    assert_eq!(edges(4, 6), ["order"]);
    // wgmma groups complete at wgmma.wait_group only, TMA stores at bulk.wait_group only.
    use cutec_ir::effects::{Domain, Resource};
    let bars = Domain::Mbarrier(Resource::Any);
    assert!(!Domain::WgmmaGroups.completed_by(bars, k) && !Domain::BulkGroups.completed_by(Domain::WgmmaGroups, k));
    assert!(Domain::WgmmaGroups.completed_by(Domain::WgmmaGroups, k) && Domain::Unscheduled.completed_by(bars, k));
}

/// A loop-carried hazard between accesses that stay inside stage `i % S` of a ring has distance S; one whose
/// address the analysis cannot bound keeps distance 1.
#[test]
fn ring_stages_give_loop_carried_distances_of_s() {
    let ring = |read_index: &str| {
        parsed(&format!(
            "kernel @ring(%a: ptr<param> align(64) box(2048), %n: i32) block(128, 1, 1) {{
  shared @stages: [3072 x bf16] align(1024)
  var $i: i32
  %0: i32 = sreg tid.x
  for $i in 0..%n step 1 {{
    %1: i32 = read $i
    %2: i32 = rem %1, 3
    %3: i32 = mul %2, 1024
    %4: ptr<shared> = offset @stages, %3 x bf16
    tma.load.unscheduled %4, %a[0, %1]
    %5: ptr<shared> = offset %4, {read_index} x bf16
    %6: bf16 = load bf16, %5 align(2)
  }}
}}
"
        ))
    };
    let carried = |m: &Module| {
        let k = &m.kernels[0];
        let lp = k.body.stmts().iter().find(|s| s.is_loop()).expect("a loop");
        let g = DepGraph::of_loop(k, lp).expect("a loop");
        g.edges()
            .into_iter()
            .filter(|&(_, _, d)| d.distance > 0)
            .map(|(a, b, d)| format!("s{a} -> s{b} {} +{}", g.kind_name(d.kind), d.distance))
            .collect::<Vec<_>>()
    };
    // The read of the thread's element (0..128 of the stage's 1024) meets the copy of 3 iterations later.
    let within = carried(&ring("%0"));
    assert!(within.contains(&"s6 -> s4 mem.war(@stages) +3".to_string()), "{within:?}");
    // An index the analysis does not bound (the loop variable itself may leave the stage): distance 1.
    let beyond = carried(&ring("%1"));
    assert!(beyond.contains(&"s6 -> s4 mem.war(@stages) +1".to_string()), "{beyond:?}");
}

/// Malformed declarations of the schedule's entities are parse errors that say where, never panics: entities out of
/// order, references to ones not declared, empty id ranges, unknown kinds.
#[test]
fn malformed_schedule_entities_are_parse_errors() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ir/schedule_entities.ir");
    let text = read(&path);
    for (from, to, says) in [
        ("barrier #b1 empty", "barrier #b5 empty", "declared out of order"),
        ("full(#b0)", "full(#b7)", "no barrier `#b7`"),
        ("named ids(1..3)", "named ids(3..3)", "empty range"),
        ("named ids(1..3)", "named ids(3..1)", "empty range"),
        ("filler(producer)", "filler(everyone)", "expected `thread0` or `producer`"),
        ("release(end_of_iteration)", "release(never)", "expected `end_of_iteration`"),
        ("wgmma.commit_group #g0", "wgmma.commit_group #g3", "no wgmma group `#g3`"),
        ("wgmma.commit_group #g0", "wgmma.commit_group #r0", "expected `#gN`"),
        ("group #g0: reads(@tile)", "group #g0: reads(@nothing)", "no allocation `@nothing`"),
        ("of #b2", "of #b9", "no barrier `#b9`"),
        ("warpgroup role epilogue", "warpgroup epilogue", "expected `producer`, `consumer` or `role NAME`"),
    ] {
        assert!(text.contains(from), "{from}");
        let e = parse(&text.replacen(from, to, 1)).expect_err(to);
        assert!(e.to_string().contains(says), "`{to}`: {e}");
    }
}
