//! scripts/gpu/clock_log.sh (the GPU's clocks and power while a command runs) with a stand-in
//! `nvidia-smi` on PATH that prints samples in the layout the script asks for: the command's
//! exit status passes through, and the summary counts only the busy samples.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory holding an executable `nvidia-smi` with this body.
fn fake_smi(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lily-clock-log-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let smi = dir.join("nvidia-smi");
    std::fs::write(&smi, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Runs `clock_log.sh CSV sh -c 'sleep 0.5; exit 3'` with `dir` first on PATH; returns the
/// exit code and the summary file's text.
fn run(dir: &Path) -> (Option<i32>, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let csv = dir.join("clocks.csv");
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let status = Command::new("bash")
        .arg(root.join("scripts/gpu/clock_log.sh"))
        .arg(&csv)
        .args(["sh", "-c", "sleep 0.5; exit 3"])
        .env("PATH", path)
        .status()
        .expect("bash runs");
    let summary = std::fs::read_to_string(dir.join("clocks.csv.summary")).unwrap_or_default();
    std::fs::remove_dir_all(dir).ok();
    (status.code(), summary)
}

#[test]
fn the_summary_counts_the_busy_samples_and_the_status_passes_through() {
    // timestamp, SM MHz, memory MHz, power W, temperature C, throttle reasons; the idle
    // sample (80 W) and the unreadable line are left out.
    let dir = fake_smi(
        "busy",
        "printf '2026/12/02 03:40:00.000, 1980, 3201, 450.0, 40, 0x0000000000000000\\n\
         2026/12/02 03:40:00.200, 1755, 3201, 500.00, 41, 0x0000000000000004\\n\
         2026/12/02 03:40:00.400, 345, 3201, 80.2, 40, 0x0000000000000001\\n[N/A]\\n'\nexec sleep 30",
    );
    let (code, summary) = run(&dir);
    assert_eq!(code, Some(3));
    assert_eq!(
        summary.trim(),
        "clocks over 2 busy samples: SM min 1755 / median 1755 / max 1980 MHz, memory 3201 MHz, \
         power mean 475 W (max 500), throttle reasons: 0x0000000000000000 x1, 0x0000000000000004 x1"
    );
}

#[test]
fn without_samples_the_summary_says_so() {
    let dir = fake_smi("none", "exit 1");
    let (code, summary) = run(&dir);
    assert_eq!(code, Some(3));
    assert_eq!(summary.trim(), "clocks: no busy samples");
}
