//! The PDL wait stays where the source puts it, in the machine code (SASS) that runs.
//!
//! ptxas treats a read-only-path load (`ld.global.nc`) as reading memory that nothing writes
//! while the kernel runs, and moves it across `griddepcontrol.wait` either way: it once sank
//! every row product's weight prefetch below the wait (the prefetch never happened) and hoisted
//! gdn_decode's read of the position, which the previous step's last kernel writes, above it (a
//! race). For every kernel of the full model, the tiny test model and the full model under other
//! launch shapes, this compiles the PTX and the cubin with NVRTC, disassembles the cubin
//! with `cuobjdump`, and follows both control-flow graphs from the entry: the loads that can run
//! before a wait must be the same number in both (nothing sunk, nothing hoisted), and none of
//! those in SASS may use the read-only path.
//!
//! Needs NVRTC and cuobjdump (no GPU): LILY_NVRTC as in compile_kernels, LILY_CUOBJDUMP the
//! `cuobjdump` binary (the `nvidia-cuda-cuobjdump` wheel has it; it runs the `nvdisasm` beside it
//! or on PATH: `nvidia-cuda-nvdisasm`). Without them the test prints a
//! notice and passes, unless `LILY_REQUIRE_NVRTC=1` (scripts/test.sh sets it when it installed
//! both): then a missing tool is a failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use lily_cuda::Dims;
use lily_cuda::kernels::SOURCES;
use lily_cuda::runtime::nvrtc::{Nvrtc, TARGET_ARCH};
use lily_cuda::shapes::Shapes;

mod common;

/// One instruction as the control-flow walk needs it.
#[derive(Debug, PartialEq)]
enum Op {
    Wait,
    /// A global load; `read_only` when it takes the read-only (non-coherent) path.
    Load {
        read_only: bool,
    },
    /// A branch to a label (PTX) or address (SASS); `always` when it has no predicate.
    Branch {
        target: String,
        always: bool,
    },
    /// The end of the thread's path; `always` when it has no predicate.
    Exit {
        always: bool,
    },
    Label(String),
    Other,
}

/// How many loads can run before a wait on some path from the entry, and how many of those
/// take the read-only path. A block's entry is "not yet waited" if any predecessor leaves it so.
fn loads_before_wait(ops: &[Op]) -> (usize, usize) {
    let labels: HashMap<&str, usize> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| match op {
            Op::Label(l) => Some((l.as_str(), i)),
            _ => None,
        })
        .collect();
    let mut unwaited_at = vec![false; ops.len()];
    let mut stack = vec![0usize];
    while let Some(start) = stack.pop() {
        let mut i = start;
        while i < ops.len() {
            if unwaited_at[i] {
                break;
            }
            unwaited_at[i] = true;
            match &ops[i] {
                Op::Wait => break,
                Op::Branch { target, always } => {
                    // Its own scope's label, else the body's.
                    let plain = target.split('#').next().unwrap_or("");
                    let to = *labels
                        .get(target.as_str())
                        .or_else(|| labels.get(plain))
                        .unwrap_or_else(|| panic!("branch to unknown target {target}"));
                    stack.push(to);
                    if *always {
                        break;
                    }
                }
                Op::Exit { always: true } => break,
                _ => {}
            }
            i += 1;
        }
    }
    let mut loads = 0;
    let mut read_only = 0;
    for (op, unwaited) in ops.iter().zip(&unwaited_at) {
        if let (Op::Load { read_only: ro }, true) = (op, unwaited) {
            loads += 1;
            read_only += *ro as usize;
        }
    }
    (loads, read_only)
}

/// Each `.entry` of a PTX module as ops, by kernel name. An entry's body is its `{` .. `}`
/// scope; inline asm opens scopes of its own (`{` and `}` alone on a line), whose labels are
/// theirs only (every inlined mbar_wait has a LAB_WAIT), so a label inside one is named with
/// its scope and a branch looks in its own scope first.
fn ptx_kernels(ptx: &str) -> HashMap<String, Vec<Op>> {
    let mut kernels = HashMap::new();
    let mut current: Option<(String, Vec<Op>)> = None;
    // Open scopes of the current entry (the body first), and how many were opened.
    let mut scopes: Vec<usize> = Vec::new();
    let mut opened = 0;
    let scoped = |label: &str, scopes: &[usize]| match scopes {
        [_] | [] => label.to_string(),
        [.., inner] => format!("{label}#{inner}"),
    };
    for raw in ptx.lines() {
        if let Some(rest) = raw.strip_prefix(".visible .entry ") {
            current = Some((
                rest.split('(').next().unwrap().trim().to_string(),
                Vec::new(),
            ));
            continue;
        }
        let Some((_, ops)) = current.as_mut() else {
            continue;
        };
        let line = raw.trim();
        match line {
            "{" => {
                opened += 1;
                scopes.push(opened);
                continue;
            }
            "}" => {
                scopes.pop();
                if scopes.is_empty() {
                    let (name, ops) = current.take().unwrap();
                    kernels.insert(name, ops);
                }
                continue;
            }
            _ => {}
        }
        if let Some(label) = line.strip_suffix(':') {
            ops.push(Op::Label(scoped(label, &scopes)));
            continue;
        }
        let (pred, body) = match line.strip_prefix('@') {
            Some(rest) => (
                true,
                rest.split_once(char::is_whitespace)
                    .map_or("", |(_, b)| b.trim()),
            ),
            None => (false, line),
        };
        let word = body
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(';');
        ops.push(if word == "griddepcontrol.wait" {
            Op::Wait
        } else if word.starts_with("ld.global") {
            Op::Load {
                read_only: word.contains(".nc"),
            }
        } else if word.starts_with("cp.async.")
            && word.contains(".global")
            && !word.starts_with("cp.async.bulk.prefetch")
        {
            Op::Load { read_only: false }
        } else if word == "bra" || word.starts_with("bra.") {
            let target = body
                .split_whitespace()
                .nth(1)
                .unwrap_or("")
                .trim_end_matches(';');
            Op::Branch {
                target: scoped(target, &scopes),
                always: !pred,
            }
        } else if word == "ret" || word == "exit" {
            Op::Exit { always: !pred }
        } else {
            Op::Other
        });
    }
    kernels
}

/// Each function of `cuobjdump -sass` as ops, by name. Branch targets are addresses; every
/// instruction's address is its label.
fn sass_kernels(sass: &str) -> HashMap<String, Vec<Op>> {
    let mut kernels: HashMap<String, Vec<Op>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in sass.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            current = Some(name.trim().to_string());
            kernels.entry(name.trim().to_string()).or_default();
            continue;
        }
        let (Some(name), Some(rest)) = (current.as_ref(), line.trim().strip_prefix("/*")) else {
            continue;
        };
        let Some((addr, text)) = rest.split_once("*/") else {
            continue;
        };
        if addr.len() != 4 || !addr.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        let ops = kernels.get_mut(name).unwrap();
        ops.push(Op::Label(format!("0x{}", addr.trim_start_matches('0'))));
        let text = text.split(';').next().unwrap_or("").trim();
        let (pred, body) = match text.strip_prefix('@') {
            Some(rest) => (true, rest.split_once(' ').map_or("", |(_, b)| b.trim())),
            None => (false, text),
        };
        let word = body.split_whitespace().next().unwrap_or("");
        ops.push(if word == "ACQBULK" {
            Op::Wait
        } else if word.starts_with("LDG") && !word.starts_with("LDGDEPBAR") {
            Op::Load {
                read_only: word.contains("CONSTANT"),
            }
        } else if word.starts_with("BRA") {
            // `BRA 0x1c50`, `BRA.DIV UR4, 0x6270`: the target is the last operand.
            let target = body.rsplit([' ', ',']).next().unwrap_or("");
            let target = format!(
                "0x{}",
                target.trim_start_matches("0x").trim_start_matches('0')
            );
            Op::Branch {
                target,
                always: !pred && !word.contains("DIV"),
            }
        } else if word == "EXIT" || word.starts_with("RET") {
            Op::Exit { always: !pred }
        } else {
            Op::Other
        });
    }
    kernels
}

#[test]
fn the_pdl_wait_stays_where_the_source_puts_it() {
    const TEST: &str = "the_pdl_wait_stays_where_the_source_puts_it";
    let (Some(nvrtc), Some(cuobjdump)) =
        (common::nvrtc(TEST), common::tool(TEST, "LILY_CUOBJDUMP"))
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("lily-pdl-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The full model, the tiny one the GPU tests run, and the full model under other shapes.
    let full = Dims::qwen36_35b_a3b();
    let swept = Shapes::parse(common::SWEPT_SHAPES).unwrap();
    let builds = [
        ("full", full.defines()),
        ("tiny", common::tiny_dims().defines()),
        ("swept shapes", full.defines_for(&swept)),
    ];
    let mut failures = Vec::new();
    for (build, defines) in &builds {
        let checked = check_build(nvrtc, &cuobjdump, &dir, build, defines, &mut failures);
        assert!(
            checked > 20,
            "{build}: only {checked} kernels with a PDL wait found: the parsers lost them"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        failures.is_empty(),
        "ptxas moved loads across the PDL wait:\n{}",
        failures.join("\n")
    );
}

/// Every kernel of one build (one set of `-D` values): appends what moved to `failures` and
/// returns how many kernels with a wait it checked.
fn check_build(
    nvrtc: &Nvrtc,
    cuobjdump: &Path,
    dir: &Path,
    build: &str,
    defines: &[(&str, i64)],
    failures: &mut Vec<String>,
) -> usize {
    let mut checked = 0;
    for (name, source) in SOURCES {
        let ptx = nvrtc
            .ptx(name, source, defines)
            .unwrap_or_else(|e| panic!("{e}"));
        let cubin = nvrtc
            .compile(name, source, TARGET_ARCH, defines)
            .unwrap_or_else(|e| panic!("{e}"));
        let file = dir.join(format!("{name}.cubin"));
        std::fs::write(&file, cubin).unwrap();
        // cuobjdump runs nvdisasm, which the wheels put beside it.
        let path = std::env::join_paths(cuobjdump.parent().into_iter().map(PathBuf::from).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        let out = Command::new(cuobjdump)
            .env("PATH", path)
            .arg("-sass")
            .arg(&file)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", cuobjdump.display()));
        assert!(
            out.status.success(),
            "cuobjdump failed on {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sass = sass_kernels(&String::from_utf8_lossy(&out.stdout));
        for (kernel, ptx_ops) in ptx_kernels(&ptx) {
            if !ptx_ops.contains(&Op::Wait) {
                continue;
            }
            let sass_ops = sass
                .get(&kernel)
                .unwrap_or_else(|| panic!("{name}: {kernel} is in the PTX but not in the cubin"));
            assert!(
                sass_ops.contains(&Op::Wait),
                "{name}: {kernel} lost its wait (no ACQBULK)"
            );
            let (ptx_early, _) = loads_before_wait(&ptx_ops);
            let (sass_early, sass_read_only) = loads_before_wait(sass_ops);
            eprintln!("{build:12} {name:16} {kernel:28} loads before the wait: PTX {ptx_early:3}, SASS {sass_early:3} ({sass_read_only} read-only)");
            if ptx_early != sass_early || sass_read_only > 0 {
                failures.push(format!(
                    "{build}: {name}: {kernel}: {ptx_early} loads before the wait in the PTX, {sass_early} in the SASS, {sass_read_only} of them read-only"
                ));
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_walk_counts_loads_on_any_path_before_a_wait() {
    let ptx = ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n\tsetp.gt.s32 %p1, %r1, 3;\n\t@%p1 bra $L__BB0_2;\n\tld.global.nc.f32 %f1, [%rd1];\n\tgriddepcontrol.wait;\n\tld.global.f32 %f2, [%rd2];\n\tret;\n$L__BB0_2:\n\tld.global.cg.f32 %f3, [%rd3];\n\tld.global.cg.f32 %f4, [%rd4];\n\tgriddepcontrol.wait;\n\tret;\n\n}\n";
    let kernels = ptx_kernels(ptx);
    assert_eq!(loads_before_wait(&kernels["k"]), (3, 1));
    let sass = "\t\tFunction : k\n        /*0000*/                   ACQBULK ;  /* 0x0 */\n        /*0010*/              @P0 BRA 0x40 ;  /* 0x0 */\n        /*0020*/                   LDG.E.CONSTANT R1, desc[UR4][R2.64] ;  /* 0x0 */\n        /*0030*/                   EXIT ;  /* 0x0 */\n        /*0040*/                   LDG.E.STRONG.GPU R1, desc[UR4][R2.64] ;  /* 0x0 */\n        /*0050*/                   EXIT ;  /* 0x0 */\n";
    let kernels = sass_kernels(sass);
    assert_eq!(loads_before_wait(&kernels["k"]), (0, 0));
    let hoisted = sass
        .replace(
            "/*0000*/                   ACQBULK",
            "/*0000*/                   NOP",
        )
        .replace(
            "/*0030*/                   EXIT",
            "/*0030*/                   ACQBULK",
        );
    assert_eq!(loads_before_wait(&sass_kernels(&hoisted)["k"]), (2, 1));
}

#[test]
fn the_reader_takes_inline_asm_scopes_as_part_of_the_body() {
    // Two inlined mbarrier waits (each its own LAB_WAIT scope, `}` at the start of a line, as
    // common.cuh writes them) before the wait, then a load after a wgmma-like braced operand:
    // the body runs to its own `}`, and each scope's branch loops back within itself.
    let wait_scope = "\t// begin inline asm\n{\n.reg .pred done;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%r1], %r2;\n@!done bra LAB_WAIT;\n}\n\t// end inline asm\n";
    let ptx = format!(
        ".visible .entry k(\n.param .u64 k_param_0\n)\n{{\n{wait_scope}\tld.global.cg.f32 %f1, [%rd1];\n{wait_scope}\tgriddepcontrol.wait;\n\tmov.b32 {{%r3, %r4}}, %rd5;\n\tld.global.f32 %f2, [%rd2];\n\tret;\n\n}}\n.visible .entry next(\n)\n{{\n\tret;\n}}\n"
    );
    let kernels = ptx_kernels(&ptx);
    assert_eq!(loads_before_wait(&kernels["k"]), (1, 0));
    assert!(kernels.contains_key("next"));
    let labels = kernels["k"]
        .iter()
        .filter(|op| matches!(op, Op::Label(_)))
        .count();
    assert_eq!(labels, 2, "each scope's label is its own");
    // The load after the wait is in the body: before it, the walk would stop at the first `}`.
    assert_eq!(
        kernels["k"]
            .iter()
            .filter(|op| matches!(op, Op::Load { .. }))
            .count(),
        2
    );
}
