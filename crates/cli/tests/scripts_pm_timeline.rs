//! scripts/profile/pm_timeline.py (the DRAM table of one step that scripts/profile/ncu_step.sh
//! sampled) on a hand-made sample file in ncu's CSV layout: four launches of two kernels and
//! eight samples, whose windows and averages were worked out by hand. Uses `$LILY_TEST_PYTHON` (set by
//! scripts/test.sh) or `python3`; the script needs only the standard library.

use std::path::Path;
use std::process::Command;

fn run(csv: &Path) -> (bool, String, String) {
    let python = std::env::var("LILY_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(python)
        .arg(root.join("scripts/profile/pm_timeline.py"))
        .arg(csv)
        .arg("--launches")
        .output()
        .expect("python runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn windows_run_end_to_end_and_average_the_samples_they_cover() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu_step/step_samples.csv");
    let (ok, out, err) = run(&fixture);
    assert!(ok, "{err}");
    // Windows 3, 3, 1.5, 4.5 us; a sample covers the 1.5 us before its timestamp.
    for line in [
        "4 launches, 12.0 us, DRAM read 65.0% of peak over the step",
        // k1: 3 us at 10%, 1.5 us at 60%; k2: 3 us at 100%, 4.5 us at 80%. Most idle first.
        "| k1 grid 1x1x1 | 2 | 2.25 | 26.7 | 1.65 | 3.3 |",
        "| k2 grid 2x1x1 | 2 | 3.75 | 88.0 | 0.45 | 0.9 |",
        "| 2 | k1 grid 1x1x1 | 6.00 | 1.50 | 60.0 |",
        "| 3 | k2 grid 2x1x1 | 7.50 | 4.50 | 80.0 |",
    ] {
        assert!(out.contains(line), "missing `{line}` in:\n{out}");
    }
    assert!(out.find("| k1 grid").unwrap() < out.find("| k2 grid").unwrap(), "{out}");
}

#[test]
fn a_file_without_a_profiled_step_is_an_error_that_says_so() {
    let path = std::env::temp_dir().join(format!("lily-pm-timeline-{}.csv", std::process::id()));
    std::fs::write(&path, "\"ID\",\"Kernel Name\"\n\"\",\"\"\n").unwrap();
    let (ok, _, err) = run(&path);
    std::fs::remove_file(&path).ok();
    assert!(!ok);
    assert!(err.contains("no profiled workload"), "{err}");
}
