//! Every kernel source compiles for sm_90a, for the full model and for a tiny one, and the
//! decode kernels also under launch shapes other than the defaults (a `LILY_SHAPES` sweep).
//! Needs NVRTC (no GPU): set LILY_NVRTC to libnvrtc.so.13 (the `nvidia-cuda-nvrtc` wheel has it);
//! without it the test prints a notice and passes, unless `LILY_REQUIRE_NVRTC=1` says NVRTC was
//! installed (scripts/test.sh sets it): then a missing NVRTC is a failure, not a skip.

mod common;

use lily_cuda::Dims;
use lily_cuda::kernels::SOURCES;
use lily_cuda::runtime::nvrtc::{Nvrtc, TARGET_ARCH};
use lily_cuda::shapes::Shapes;
use lily_cuda::WeightFormat;

#[test]
fn every_kernel_compiles_for_sm90a() {
    let Some(nvrtc) = common::nvrtc("every_kernel_compiles_for_sm90a") else {
        return;
    };
    eprintln!("NVRTC {:?}", nvrtc.version());
    // Both weight formats: FP8 at the checkpoint's 128 x 128 blocks, and the one-row blocks a
    // small model whose parts do not meet on block boundaries gets (weights.rs: weight_format).
    let fp8 = |block_rows| WeightFormat::Fp8 {
        block_rows,
        block_cols: 128,
    };
    for dims in [
        Dims::qwen36_35b_a3b(),
        common::tiny_dims(),
        Dims {
            weights: fp8(128),
            ..Dims::qwen36_35b_a3b()
        },
        Dims {
            weights: fp8(1),
            ..common::tiny_dims()
        },
    ] {
        dims.validate().unwrap();
        // The tests' own kernel too: CI compiles it where the GPU tests cannot run.
        for (name, source) in SOURCES
            .iter()
            .chain(&[("write_late.cu", common::WRITE_LATE)])
        {
            let cubin = nvrtc
                .compile(name, source, TARGET_ARCH, &dims.defines())
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                cubin.starts_with(b"\x7fELF"),
                "{name}: NVRTC returned no ELF cubin"
            );
        }
    }
    let swept = Shapes::parse(common::SWEPT_SHAPES).unwrap();
    let defines = Dims::qwen36_35b_a3b().defines_for(&swept);
    for (name, source) in SOURCES
        .iter()
        .filter(|(n, _)| ["gemv.cu", "moe.cu", "attention.cu"].contains(n))
    {
        nvrtc
            .compile(name, source, TARGET_ARCH, &defines)
            .unwrap_or_else(|e| panic!("{name} under {swept:?}: {e}"));
    }
}

/// `lily bench --trace` compiles every family with the marks of common.cuh (trace.rs): that
/// build must compile too, and put its marks in the code.
#[test]
fn every_kernel_compiles_with_the_trace_marks() {
    let Some(nvrtc) = common::nvrtc("every_kernel_compiles_with_the_trace_marks") else {
        return;
    };
    let mut defines = Dims::qwen36_35b_a3b().defines();
    defines.push(("LILY_TRACE_BUF", 0x7f00_0000_0000));
    for (name, source) in SOURCES {
        let ptx = nvrtc
            .ptx(name, source, &defines)
            .unwrap_or_else(|e| panic!("{name} traced: {e}"));
        assert!(
            ptx.contains("%globaltimer") && ptx.contains("%gridid"),
            "{name}: the traced build has no marks"
        );
    }
}

#[test]
fn a_broken_source_reports_the_compiler_log() {
    let Ok(nvrtc) = Nvrtc::get() else {
        eprintln!("SKIPPED a_broken_source_reports_the_compiler_log: no NVRTC");
        return;
    };
    let err = nvrtc
        .compile(
            "broken.cu",
            "extern \"C\" __global__ void k() { undefined_name; }",
            TARGET_ARCH,
            &[],
        )
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("broken.cu") && msg.contains("undefined_name"),
        "{msg}"
    );
}

#[test]
fn the_cache_key_changes_with_every_compile_input() {
    let Ok(nvrtc) = Nvrtc::get() else {
        eprintln!("SKIPPED the_cache_key_changes_with_every_compile_input: no NVRTC");
        return;
    };
    let (name, source) = SOURCES[0];
    let full = Dims::qwen36_35b_a3b().defines();
    let key = |name: &str, source: &str, arch: &str, defines: &[(&str, i64)]| {
        nvrtc.cache_key(name, source, arch, defines)
    };
    let base = key(name, source, TARGET_ARCH, &full);
    assert_eq!(base, key(name, source, TARGET_ARCH, &full), "deterministic");
    let edited = format!("{source}\n// edited");
    for other in [
        key(name, source, TARGET_ARCH, &common::tiny_dims().defines()),
        key(name, &edited, TARGET_ARCH, &full),
        key(name, source, "sm_90", &full),
        key("other.cu", source, TARGET_ARCH, &full),
        key(
            name,
            source,
            TARGET_ARCH,
            &Dims::qwen36_35b_a3b().defines_for(&Shapes {
                gemv_out_warps: 4,
                ..Shapes::default()
            }),
        ),
    ] {
        assert_ne!(base, other);
    }
}

#[test]
fn ptx_is_written_for_the_virtual_target_with_every_entry_point() {
    let Ok(nvrtc) = Nvrtc::get() else {
        eprintln!("SKIPPED ptx_is_written_for_the_virtual_target_with_every_entry_point: no NVRTC");
        return;
    };
    let defines = Dims::qwen36_35b_a3b().defines_for(&Shapes::default());
    let (name, source) = SOURCES.iter().find(|(n, _)| *n == "moe.cu").unwrap();
    let ptx = nvrtc.ptx(name, source, &defines).unwrap();
    assert!(
        ptx.contains(".target sm_90a"),
        "{}",
        &ptx[..ptx.len().min(400)]
    );
    for entry in ["moe_router", "moe_gate_up", "moe_down", "moe_combine"] {
        assert!(
            ptx.contains(&format!(".entry {entry}(")),
            "no {entry} in moe.cu's PTX"
        );
    }
    assert!(!ptx.ends_with('\0'));
    assert_eq!(
        ptx,
        nvrtc.ptx(name, source, &defines).unwrap(),
        "deterministic"
    );
}
