//! `lily bench --plot FILE.svg`: tok/s against context, one panel for decode and one for
//! prefill, each with its ceiling line and any peer figures, on a log-scale context axis.
//!
//! The picture is drawn from the results document that `lily bench --json` writes (the run's
//! own, or a saved one with `--from`, which needs no GPU), so a plot can always be redrawn
//! from what was measured. Peers are documents with the same `results` rows (`context`,
//! `decode_tok_s`, `prefill_tok_s`; either rate may be missing), e.g. what
//! scripts/reference/bench_transformers.py --json writes. The SVG is written by hand: a few
//! lines, axes and labels need no plotting library.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context};
use serde_json::Value;

/// One context's figures; a peer may give only some of them.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    context: f64,
    decode: Option<f64>,
    prefill: Option<f64>,
    /// The decode bandwidth ceiling (tok/s).
    decode_ceiling: Option<f64>,
    /// The prefill rate at the full bf16 matrix rate (tok/s).
    prefill_ceiling: Option<f64>,
}

/// A results document: its title line and its rows, by context.
#[derive(Debug)]
pub struct Results {
    title: String,
    points: Vec<Point>,
}

/// A positive finite number at `field` of `row`, if there (null counts as absent).
fn rate(row: &Value, field: &str, at: &str) -> anyhow::Result<Option<f64>> {
    match row.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
            _ => bail!("{at}: `{field}` must be a positive number, found {v}"),
        },
    }
}

impl Results {
    /// The rows of a results document; `source` names it in errors.
    pub fn from_json(doc: &Value, source: &str) -> anyhow::Result<Self> {
        let Some(rows) = doc.get("results").and_then(Value::as_array) else {
            bail!("{source}: no `results` array (the format `lily bench --json` writes)");
        };
        let mut points = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let at = format!("{source}: results[{i}]");
            let context = match row.get("context").and_then(Value::as_u64) {
                Some(c) if c > 0 => c as f64,
                _ => bail!("{at}: `context` must be a positive integer"),
            };
            let decode = rate(row, "decode_tok_s", &at)?;
            let prefill = rate(row, "prefill_tok_s", &at)?;
            if decode.is_none() && prefill.is_none() {
                bail!("{at}: neither `decode_tok_s` nor `prefill_tok_s`");
            }
            let fraction = rate(row, "prefill_fraction_of_matrix_rate", &at)?;
            points.push(Point {
                context,
                decode,
                prefill,
                decode_ceiling: rate(row, "decode_ceiling_tok_s", &at)?,
                prefill_ceiling: prefill.zip(fraction).map(|(p, f)| p / f),
            });
        }
        if points.is_empty() {
            bail!("{source}: `results` is empty");
        }
        points.sort_by(|a, b| a.context.total_cmp(&b.context));
        let text = |k: &str| {
            doc.get(k).and_then(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .or_else(|| v.is_number().then(|| v.to_string()))
            })
        };
        let title = ["gpu", "precision", "commit"]
            .iter()
            .filter_map(|k| {
                text(k).map(|v| {
                    if *k == "commit" {
                        format!("commit {v}")
                    } else {
                        v
                    }
                })
            })
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Self { title, points })
    }

    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        Self::from_json(&doc, &path.display().to_string())
    }
}

/// `NAME=FILE.json`, as `--peer` takes it.
pub fn read_peer(spec: &str) -> anyhow::Result<(String, Results)> {
    match spec.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), Results::read(Path::new(file))?))
        }
        _ => bail!("--peer {spec:?}: expected NAME=FILE.json"),
    }
}

const PANEL_W: f64 = 460.0;
const PANEL_H: f64 = 300.0;
/// Room left of, above and below each panel's plot area (tick labels, titles, axis label),
/// between the panels, and right of the last (its last context label).
const LEFT: f64 = 70.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 50.0;
const GAP: f64 = 40.0;
const RIGHT: f64 = 30.0;
/// Colours of the own series, then of each peer in turn.
const COLOURS: [&str; 6] = [
    "#1f5fbf", "#d9541e", "#2a9d4b", "#8e44ad", "#b8860b", "#c2185b",
];

struct Series<'a> {
    name: &'a str,
    colour: &'a str,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

/// 1, 2 or 5 times a power of ten, at least `x` (the top of a linear axis).
fn nice_ceil(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&v| v >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// A context as the bench prints it: 512, 4K, 128K.
fn context_label(c: f64) -> String {
    if c >= 1024.0 && (c / 1024.0).fract() == 0.0 {
        format!("{}K", c / 1024.0)
    } else {
        format!("{c}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One panel at horizontal offset `x0`: axes, ticks, labels, the series and a legend.
fn panel(
    svg: &mut String,
    x0: f64,
    title: &str,
    y_label: &str,
    contexts: (f64, f64),
    series: &[Series],
) {
    let (lo, hi) = contexts;
    let y_max = nice_ceil(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(1.0, f64::max),
    );
    let (left, right, top, bottom) = (x0 + LEFT, x0 + LEFT + PANEL_W, TOP, TOP + PANEL_H);
    let x = |c: f64| left + (c.log2() - lo.log2()) / (hi.log2() - lo.log2()) * PANEL_W;
    let y = |v: f64| bottom - v / y_max * PANEL_H;
    let _ = writeln!(
        svg,
        r#"<g class="panel"><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        left + PANEL_W / 2.0,
        top - 14.0,
        escape(title)
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{left:.1}" y="{top:.1}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#444"/>"##
    );
    // Context ticks at the powers of two in range, every other one when there are many.
    let (first, last) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    let stride = if last - first > 10 { 2 } else { 1 };
    for e in (first..=last).step_by(stride) {
        let c = 2f64.powi(e);
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{top:.1}" x2="{0:.1}" y2="{bottom:.1}" stroke="#ddd"/><text x="{0:.1}" y="{1:.1}" text-anchor="middle" font-size="11">{2}</text>"##,
            x(c),
            bottom + 15.0,
            context_label(c)
        );
    }
    for i in 0..=5 {
        let v = y_max * i as f64 / 5.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{left:.1}" y1="{0:.1}" x2="{right:.1}" y2="{0:.1}" stroke="#ddd"/><text x="{1:.1}" y="{2:.1}" text-anchor="end" font-size="11">{3}</text>"##,
            y(v),
            left - 6.0,
            y(v) + 4.0,
            v
        );
    }
    let _ = writeln!(
        svg,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">context (tokens, log scale)</text>"#,
        left + PANEL_W / 2.0,
        bottom + 38.0
    );
    let (yx, yy) = (x0 + 18.0, top + PANEL_H / 2.0);
    let _ = writeln!(
        svg,
        r#"<text class="axis-label" x="{yx:.1}" y="{yy:.1}" text-anchor="middle" font-size="12" transform="rotate(-90 {yx:.1} {yy:.1})">{}</text>"#,
        escape(y_label)
    );
    for (i, s) in series.iter().enumerate() {
        let points: Vec<String> = s
            .points
            .iter()
            .map(|&(c, v)| format!("{:.1},{:.1}", x(c), y(v)))
            .collect();
        let dash = if s.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = writeln!(
            svg,
            r#"<g class="series" data-name="{}"><polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
            escape(s.name),
            points.join(" "),
            s.colour
        );
        if !s.dashed {
            for &(c, v) in &s.points {
                let _ = writeln!(
                    svg,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                    x(c),
                    y(v),
                    s.colour
                );
            }
        }
        let ly = top + 16.0 + 16.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{0:.1}" y1="{1:.1}" x2="{2:.1}" y2="{1:.1}" stroke="{3}" stroke-width="2"{dash}/><text x="{4:.1}" y="{5:.1}" font-size="11">{6}</text></g>"#,
            left + 10.0,
            ly,
            left + 34.0,
            s.colour,
            left + 40.0,
            ly + 4.0,
            escape(s.name)
        );
    }
    svg.push_str("</g>\n");
}

/// The SVG: decode (left) and prefill (right) against context, the own run first with its
/// ceilings dashed, then each peer.
pub fn svg(own: &Results, peers: &[(String, Results)]) -> String {
    let all = || {
        std::iter::once(own)
            .chain(peers.iter().map(|p| &p.1))
            .flat_map(|r| r.points.iter())
    };
    let (mut lo, mut hi) = all().fold((f64::INFINITY, 0f64), |(lo, hi), p| {
        (lo.min(p.context), hi.max(p.context))
    });
    // A single context still gets an axis: an octave either side.
    if hi / lo < 2.0 {
        lo /= 2.0;
        hi *= 2.0;
    }
    let pick = |r: &Results, f: fn(&Point) -> Option<f64>| {
        r.points
            .iter()
            .filter_map(|p| f(p).map(|v| (p.context, v)))
            .collect::<Vec<_>>()
    };
    let draw = |measured: fn(&Point) -> Option<f64>,
                ceiling: fn(&Point) -> Option<f64>,
                ceiling_name: &'static str| {
        let mut series = vec![Series {
            name: "lily",
            colour: COLOURS[0],
            dashed: false,
            points: pick(own, measured),
        }];
        series.push(Series {
            name: ceiling_name,
            colour: "#777",
            dashed: true,
            points: pick(own, ceiling),
        });
        for (i, (name, r)) in peers.iter().enumerate() {
            series.push(Series {
                name,
                colour: COLOURS[(i + 1) % COLOURS.len()],
                dashed: false,
                points: pick(r, measured),
            });
        }
        series.retain(|s| !s.points.is_empty());
        series
    };
    let width = 2.0 * (LEFT + PANEL_W) + GAP + RIGHT;
    let height = TOP + PANEL_H + BOTTOM;
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="22" text-anchor="middle" font-size="14">lily bench, batch 1: {}</text>"#,
        width / 2.0,
        escape(&own.title)
    );
    panel(
        &mut out,
        0.0,
        "Decode",
        "decode tok/s",
        (lo, hi),
        &draw(|p| p.decode, |p| p.decode_ceiling, "bandwidth ceiling"),
    );
    panel(
        &mut out,
        LEFT + PANEL_W + GAP,
        "Prefill",
        "prefill tok/s",
        (lo, hi),
        &draw(|p| p.prefill, |p| p.prefill_ceiling, "matrix-rate ceiling"),
    );
    out.push_str("</svg>\n");
    out
}

/// Writes the plot of `own` and `peers` to `path`.
pub fn write(path: &Path, own: &Results, peers: &[(String, Results)]) -> anyhow::Result<()> {
    std::fs::write(path, svg(own, peers)).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_prefill_ceiling_is_the_rate_over_its_fraction_and_rows_are_sorted() {
        let doc = json!({"gpu": "H200", "results": [
            {"context": 4096, "prefill_tok_s": 50000.0, "prefill_fraction_of_matrix_rate": 0.5, "decode_tok_s": 500.0, "decode_ceiling_tok_s": 700.0},
            {"context": 256, "decode_tok_s": 560.0, "prefill_tok_s": null},
        ]});
        let r = Results::from_json(&doc, "doc").unwrap();
        assert_eq!(r.points[0].context, 256.0);
        assert_eq!(r.points[0].prefill, None);
        assert_eq!(r.points[1].prefill_ceiling, Some(100_000.0));
        assert_eq!(r.title, "H200");
    }

    #[test]
    fn a_bad_row_is_named_by_index_and_field() {
        let doc = json!({"results": [{"context": 256, "decode_tok_s": 1.0}, {"context": 512, "decode_tok_s": "fast"}]});
        let e = Results::from_json(&doc, "peer.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("peer.json: results[1]") && e.contains("decode_tok_s"),
            "{e}"
        );
        let e = Results::from_json(&json!({"rows": []}), "x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`results`"), "{e}");
        assert!(read_peer("no-equals-sign").is_err());
    }

    #[test]
    fn a_higher_rate_is_drawn_higher_and_a_longer_context_further_right() {
        let doc = json!({"results": [{"context": 1024, "decode_tok_s": 100.0}, {"context": 65536, "decode_tok_s": 400.0}]});
        let svg = svg(&Results::from_json(&doc, "d").unwrap(), &[]);
        let circles: Vec<(f64, f64)> = svg
            .lines()
            .filter(|l| l.starts_with("<circle"))
            .map(|l| {
                let attr = |k: &str| {
                    l.split(&format!("{k}=\""))
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .parse::<f64>()
                        .unwrap()
                };
                (attr("cx"), attr("cy"))
            })
            .collect();
        assert_eq!(circles.len(), 2);
        assert!(
            circles[1].0 > circles[0].0 && circles[1].1 < circles[0].1,
            "{circles:?}"
        );
    }

    #[test]
    fn axis_tops_and_context_labels() {
        assert_eq!(nice_ceil(712.0), 1000.0);
        assert_eq!(nice_ceil(130.0), 200.0);
        assert_eq!(nice_ceil(500.0), 500.0);
        assert_eq!(context_label(131_072.0), "128K");
        assert_eq!(context_label(256.0), "256");
    }
}
