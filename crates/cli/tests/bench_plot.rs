//! `lily bench --plot FILE.svg --from results.json`: the picture drawn from saved results, with
//! no GPU. The SVG must be well-formed and hold both panels' series (the run, its ceiling, each
//! peer), one point per row, and the axis labels.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_plot");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn lily(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(args)
        .output()
        .unwrap()
}

/// Rows as `lily bench --json` writes them: the prefill ceiling is prefill / fraction.
fn results(contexts: &[u64]) -> serde_json::Value {
    let rows: Vec<_> = contexts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            serde_json::json!({"context": c, "prefill_tok_s": 10_000.0 * (i + 1) as f64, "prefill_fraction_of_matrix_rate": 0.1,
                               "decode_tok_s": 560.0 - i as f64, "decode_ceiling_tok_s": 714.0 - i as f64, "digest": "c70f105eddb92aac",
                               "token_loop_decode_tok_s": null})
        })
        .collect();
    serde_json::json!({"gpu": "NVIDIA H200", "precision": "bf16 (synthetic)", "commit": "abc1234", "results": rows})
}

fn write(path: &Path, v: &serde_json::Value) -> String {
    std::fs::write(path, v.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

/// Every tag closed in order (no XML parser needed for what the plot writes: no CDATA, no
/// comments, attributes quoted without `>` inside).
fn assert_well_formed(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg
        .strip_prefix("<?xml")
        .and_then(|s| s.split_once("?>"))
        .expect("an XML declaration")
        .1;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("an unclosed tag") + start;
        let tag = &rest[start + 1..end];
        let name = tag
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap();
        if tag.starts_with('/') {
            assert_eq!(open.pop(), Some(name), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            open.push(name);
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed: {open:?}");
}

/// The polyline of the series named `name` in the panel whose title is `panel`.
fn points(svg: &str, panel: &str, name: &str) -> usize {
    let panel = svg
        .split("<g class=\"panel\">")
        .find(|p| p.contains(&format!(">{panel}</text>")))
        .unwrap_or_else(|| panic!("no panel {panel}"));
    let series = panel
        .split(&format!("data-name=\"{name}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no series {name} in {panel}"));
    let pts = series
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    pts.split_whitespace().count()
}

#[test]
fn a_plot_from_saved_results_has_both_panels_their_ceilings_and_the_peers() {
    let d = dir();
    let own = write(
        &d.join("results.json"),
        &results(&[256, 1024, 4096, 16384, 131072]),
    );
    // A peer with the reference script's rows: only some contexts, no ceilings.
    let peer = serde_json::json!({"gpu": "NVIDIA H200", "results": [
        {"context": 256, "prefill_tok_s": 4000.0, "decode_tok_s": 40.0, "digest_repeats": true},
        {"context": 1024, "prefill_tok_s": 9000.0, "decode_tok_s": 38.0, "digest_repeats": true}]});
    let peer = write(&d.join("transformers.json"), &peer);
    let svg_path = d.join("bench.svg");
    let out = lily(&[
        "bench",
        "--plot",
        svg_path.to_str().unwrap(),
        "--from",
        &own,
        "--peer",
        &format!("transformers={peer}"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert_well_formed(&svg);
    assert!(svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.contains("NVIDIA H200, bf16 (synthetic), commit abc1234"));
    assert_eq!(svg.matches("context (tokens, log scale)").count(), 2);
    assert!(svg.contains(">decode tok/s</text>") && svg.contains(">prefill tok/s</text>"));
    // Context ticks on the log axis, as the bench names them.
    assert!(svg.contains(">1K</text>") && svg.contains(">128K</text>"));
    for (panel, ceiling) in [
        ("Decode", "bandwidth ceiling"),
        ("Prefill", "matrix-rate ceiling"),
    ] {
        assert_eq!(points(&svg, panel, "lily"), 5);
        assert_eq!(points(&svg, panel, ceiling), 5);
        assert_eq!(points(&svg, panel, "transformers"), 2);
    }
}

#[test]
fn bad_input_is_an_error_naming_the_file_and_field_not_a_panic() {
    let d = dir();
    let mut bad = results(&[256, 512]);
    bad["results"][1]["decode_tok_s"] = serde_json::json!("fast");
    let bad = write(&d.join("bad.json"), &bad);
    let svg = d.join("never.svg");
    let out = lily(&["bench", "--plot", svg.to_str().unwrap(), "--from", &bad]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("bad.json: results[1]")
            && err.contains("decode_tok_s")
            && !err.contains("panicked"),
        "{err}"
    );
    assert!(!svg.exists());
    let good = write(&d.join("good.json"), &results(&[256]));
    let out = lily(&[
        "bench",
        "--plot",
        svg.to_str().unwrap(),
        "--from",
        &good,
        "--peer",
        "nameless.json",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("NAME=FILE.json"));
    // --from only makes sense with --plot.
    assert!(!lily(&["bench", "--from", &good]).status.success());
}
