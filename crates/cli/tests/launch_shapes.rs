//! A mistyped `LILY_SHAPES` is refused before any GPU, NVRTC or weight work, with a message
//! that names the key and the known ones (so this runs without a GPU).

use std::process::Command;

fn run(args: &[&str], shapes: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(args)
        .env("LILY_SHAPES", shapes)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn bench_and_ptx_refuse_an_unknown_shape_before_starting() {
    let out = std::env::temp_dir().join("lily-launch-shapes-test");
    for args in [
        &["bench", "--synthetic"][..],
        &["ptx", "--out", out.to_str().unwrap()][..],
    ] {
        let (ok, err) = run(args, "gemv_warps=4");
        assert!(!ok, "{args:?} accepted an unknown shape");
        assert!(
            err.contains("LILY_SHAPES: unknown shape `gemv_warps`")
                && err.contains("gemv_out_warps"),
            "{args:?}: {err}"
        );
        let (ok, err) = run(args, "moe_down_rows=5");
        assert!(
            !ok && err.contains("moe_down_rows = 5 is more than 4"),
            "{args:?}: {err}"
        );
    }
    assert!(!out.exists(), "ptx wrote output despite the error");
}
