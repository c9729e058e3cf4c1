//! `lily gate eval`: measures the whole gate (every tier plus the policy) on a labelled corpus.
//!
//! Corpus: JSON lines, one item each:
//! `{"id", "source": "generated"|"handwritten"|"blind"|"blind2"|"first_person"|"blind3"|"blind4"|
//! "dev_multilingual", "locale", "text", "spans": [{"start", "end", "category"}], "topics": [category...],
//! "decision"}`. Spans are byte offsets of identifiers and names; topics are document labels.
//! The default corpus (`crates/gate/data/eval_*.jsonl`, made by `scripts/gate/gen_data.py eval`
//! and `scripts/gate/build_eval.py`) is compiled into the binary.
//!
//! Gold decisions follow the default policy's intent: `refuse` for secrets, `local` for special
//! categories (health, mental health, sexuality, religion, politics, ethnicity, biometrics,
//! legal, immigration, criminal history), `consent` for personal finances and children, `mask` for identifiers and private
//! people's names, `allow` otherwise: places and organisations alone identify nobody, public
//! figures and fictional characters are not personal data, and neither are ISBNs, product codes,
//! or placeholder keys like `sk-...` / `YOUR_API_KEY` in code.
//!
//! Metrics (also printed with the report):
//! - Span precision/recall/F1 per category: a predicted span (confidence at least the policy's
//!   `ignore_below`) is a true positive when it has the gold span's category and overlaps it
//!   with intersection-over-union >= 0.5, one to one; unmatched predictions are false positives,
//!   unmatched gold spans false negatives. Topics are scored per item: a predicted topic is a
//!   true positive when it is among the item's gold topics.
//! - Decision confusion matrix: gold decision (rows) against the gate's (columns).
//! - Leak rate: among items whose gold decision is not `allow`, the share where something the
//!   gold says must not leave would leave: the gate allows it; or the gate masks (or allows) it
//!   while the gold says `local`, `refuse` or `consent`; or the gate masks it and the masked text
//!   still contains a gold identifier or person span verbatim. `consent`, `local` and `refuse`
//!   from the gate never leak: nothing leaves without the user.
//! - Friction: among items whose gold decision is `allow`, the share the gate does not allow.
//! - Both per source, per locale, and per category: leaks among the items whose gold carries the
//!   category (a topic or a span), and benign items held back by a finding of the category.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::time::Instant;

use serde::Deserialize;

use crate::learned::LearnedError;
use crate::{Category, Decision, Destination, Gate, Policy, Tier};

const GENERATED: &str = include_str!("../data/eval_generated.jsonl");
const HANDWRITTEN: &str = include_str!("../data/eval_handwritten.jsonl");
const BLIND: &str = include_str!("../data/eval_blind.jsonl");
const BLIND2: &str = include_str!("../data/eval_blind2.jsonl");
const FIRST_PERSON: &str = include_str!("../data/eval_first_person.jsonl");
const BLIND3: &str = include_str!("../data/eval_blind3.jsonl");
const BLIND4: &str = include_str!("../data/eval_blind4.jsonl");
const DEV_MULTILINGUAL: &str = include_str!("../data/eval_dev_multilingual.jsonl");
const DEV_IDENTIFIERS: &str = include_str!("../data/eval_dev_identifiers.jsonl");
const DEV_NAMES: &str = include_str!("../data/eval_dev_names.jsonl");
const BLIND5: &str = include_str!("../data/eval_blind5.jsonl");
const BLIND6: &str = include_str!("../data/eval_blind6.jsonl");
const BLIND7: &str = include_str!("../data/eval_blind7.jsonl");
const BLIND8: &str = include_str!("../data/eval_blind8.jsonl");
const BLIND8_ADV: &str = include_str!("../data/eval_blind8_adv.jsonl");
/// A predicted and a gold span match when they overlap at least this much (intersection over union).
pub const MIN_IOU: f32 = 0.5;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read corpus {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("corpus {origin}, line {line}: {message}")]
    Item {
        origin: String,
        line: usize,
        message: String,
    },
    #[error("loading the learned tiers: {0}")]
    Model(#[from] LearnedError),
}

#[derive(Debug, Clone, Deserialize)]
pub struct GoldSpan {
    pub start: usize,
    pub end: usize,
    pub category: Category,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    pub id: String,
    pub source: String,
    #[serde(default)]
    pub locale: String,
    pub text: String,
    pub spans: Vec<GoldSpan>,
    #[serde(default)]
    pub topics: Vec<Category>,
    pub decision: Decision,
}

/// Parses JSON lines; `origin` names the source in errors. Offsets are checked against the text.
pub fn parse_corpus(text: &str, origin: &str) -> Result<Vec<Item>, EvalError> {
    let mut items = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |message: String| EvalError::Item {
            origin: origin.to_string(),
            line: i + 1,
            message,
        };
        let item: Item = serde_json::from_str(line).map_err(|e| err(e.to_string()))?;
        for s in &item.spans {
            if s.start >= s.end
                || s.end > item.text.len()
                || !item.text.is_char_boundary(s.start)
                || !item.text.is_char_boundary(s.end)
            {
                return Err(err(format!(
                    "item {}: span {}..{} is not a range of char boundaries in a text of {} bytes",
                    item.id,
                    s.start,
                    s.end,
                    item.text.len()
                )));
            }
            if s.category.tier() == Tier::Topic {
                return Err(err(format!(
                    "item {}: topic {:?} belongs in `topics`, not `spans`",
                    item.id, s.category
                )));
            }
        }
        items.push(item);
    }
    Ok(items)
}

pub fn load_corpus(path: &Path) -> Result<Vec<Item>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_corpus(&text, &path.display().to_string())
}

/// The committed corpus: generated items, hand-written ones, the seven blind sets (each
/// measured once before the gate was tuned on it; see data/README.md for which are still
/// blind to tuning), the first-person set and the three development sets (topics in 14
/// languages, identifiers, names).
pub fn default_corpus() -> Vec<Item> {
    // The files are checked by the eval test; a parse failure here is a build defect.
    [
        (GENERATED, "data/eval_generated.jsonl"),
        (HANDWRITTEN, "data/eval_handwritten.jsonl"),
        (BLIND, "data/eval_blind.jsonl"),
        (BLIND2, "data/eval_blind2.jsonl"),
        (FIRST_PERSON, "data/eval_first_person.jsonl"),
        (BLIND3, "data/eval_blind3.jsonl"),
        (BLIND4, "data/eval_blind4.jsonl"),
        (DEV_MULTILINGUAL, "data/eval_dev_multilingual.jsonl"),
        (DEV_IDENTIFIERS, "data/eval_dev_identifiers.jsonl"),
        (DEV_NAMES, "data/eval_dev_names.jsonl"),
        (BLIND5, "data/eval_blind5.jsonl"),
        (BLIND6, "data/eval_blind6.jsonl"),
        (BLIND7, "data/eval_blind7.jsonl"),
        (BLIND8, "data/eval_blind8.jsonl"),
        (BLIND8_ADV, "data/eval_blind8_adv.jsonl"),
    ]
    .into_iter()
    .flat_map(|(text, origin)| parse_corpus(text, origin).expect("committed corpus parses"))
    .collect()
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
}

impl Counts {
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
    fn add(&mut self, o: Counts) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
    }
}

/// Empty denominators score 1: nothing to find and nothing wrongly found is not a failure.
fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

pub const DECISIONS: [Decision; 5] = [
    Decision::Allow,
    Decision::Mask,
    Decision::Consent,
    Decision::Local,
    Decision::Refuse,
];

#[derive(Debug, Default)]
pub struct Report {
    pub items: usize,
    /// Per category; per source too ("generated", "handwritten") under `by_source`.
    pub spans: BTreeMap<Category, Counts>,
    pub by_source: BTreeMap<String, BTreeMap<Category, Counts>>,
    /// confusion[gold][predicted], indices into `DECISIONS`.
    pub confusion: [[usize; 5]; 5],
    pub sensitive: usize,
    pub leaks: Vec<String>,
    pub benign: usize,
    pub held_back: Vec<String>,
    /// Per source: (sensitive items, leaks, benign items, held back).
    pub rates_by_source: BTreeMap<String, [usize; 4]>,
    /// The same per locale.
    pub rates_by_locale: BTreeMap<String, [usize; 4]>,
    /// Per category: (sensitive items whose gold carries it, leaks among them, benign items,
    /// benign items held back by a finding of it). The benign count is the same for every
    /// category: each row reads like a source's.
    pub rates_by_category: BTreeMap<Category, [usize; 4]>,
    /// Per source: the gate's decisions on gold-`local` items, indices into `DECISIONS`. Asking
    /// (`consent`) is not a leak, but a user who agrees sends a special category out; this
    /// shows how much of it the gate keeps by itself.
    pub local_outcomes_by_source: BTreeMap<String, [usize; 5]>,
    pub bytes: usize,
    pub seconds: f64,
    pub item_ms: Vec<f64>,
}

fn iou(a: (usize, usize), b: (usize, usize)) -> f32 {
    let inter = a.1.min(b.1).saturating_sub(a.0.max(b.0));
    let union = a.1.max(b.1) - a.0.min(b.0);
    if union == 0 {
        0.0
    } else {
        inter as f32 / union as f32
    }
}

/// Span counts of one item per category (greedy one-to-one matching by best overlap).
fn match_spans(gold: &[GoldSpan], pred: &[(usize, usize, Category)]) -> BTreeMap<Category, Counts> {
    let mut out: BTreeMap<Category, Counts> = BTreeMap::new();
    let mut used = vec![false; pred.len()];
    for g in gold {
        let best = pred
            .iter()
            .enumerate()
            .filter(|(i, p)| !used[*i] && p.2 == g.category)
            .map(|(i, p)| (i, iou((g.start, g.end), (p.0, p.1))))
            .filter(|&(_, o)| o >= MIN_IOU)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let c = out.entry(g.category).or_default();
        match best {
            Some((i, _)) => {
                used[i] = true;
                c.tp += 1;
            }
            None => c.fn_ += 1,
        }
    }
    for (i, p) in pred.iter().enumerate() {
        if !used[i] {
            out.entry(p.2).or_default().fp += 1;
        }
    }
    out
}

fn leaves(d: Decision) -> bool {
    matches!(d, Decision::Allow | Decision::Mask)
}

/// `lily gate eval`: the corpus at `corpus` (or the committed one) through `Gate::new(policy)`.
pub fn run(corpus: Option<&Path>, policy: Policy) -> Result<Report, EvalError> {
    let items = match corpus {
        Some(path) => load_corpus(path)?,
        None => default_corpus(),
    };
    let gate = Gate::new(policy)?;
    Ok(evaluate(&gate, &items))
}

/// Runs the gate over every item for destination `cloud`.
pub fn evaluate(gate: &Gate, items: &[Item]) -> Report {
    let mut r = Report {
        items: items.len(),
        ..Report::default()
    };
    let ignore_below = gate.policy().ignore_below;
    let start = Instant::now();
    for item in items {
        let t = Instant::now();
        let verdict = gate.inspect(&item.text, Destination::Cloud);
        r.item_ms.push(t.elapsed().as_secs_f64() * 1e3);
        r.bytes += item.text.len();

        let found: Vec<_> = verdict
            .spans()
            .filter(|s| s.confidence >= ignore_below)
            .collect();
        let pred: Vec<(usize, usize, Category)> = found
            .iter()
            .filter(|s| s.category.tier() != Tier::Topic)
            .map(|s| (s.start, s.end, s.category))
            .collect();
        let mut counts = match_spans(&item.spans, &pred);
        let mut pred_topics: Vec<Category> = found
            .iter()
            .filter(|s| s.category.tier() == Tier::Topic)
            .map(|s| s.category)
            .collect();
        pred_topics.sort();
        pred_topics.dedup();
        for t in &pred_topics {
            let c = counts.entry(*t).or_default();
            if item.topics.contains(t) {
                c.tp += 1
            } else {
                c.fp += 1
            }
        }
        for t in item.topics.iter().filter(|t| !pred_topics.contains(t)) {
            counts.entry(*t).or_default().fn_ += 1;
        }
        let per_source = r.by_source.entry(item.source.clone()).or_default();
        for (cat, c) in counts {
            r.spans.entry(cat).or_default().add(c);
            per_source.entry(cat).or_default().add(c);
        }

        let gi = DECISIONS
            .iter()
            .position(|&d| d == item.decision)
            .unwrap_or(0);
        let pi = DECISIONS
            .iter()
            .position(|&d| d == verdict.decision)
            .unwrap_or(0);
        r.confusion[gi][pi] += 1;
        if item.decision == Decision::Local {
            r.local_outcomes_by_source
                .entry(item.source.clone())
                .or_default()[pi] += 1;
        }
        let gold_categories: BTreeSet<Category> = item
            .topics
            .iter()
            .copied()
            .chain(item.spans.iter().map(|s| s.category))
            .collect();
        let mut rates = [0; 4];
        if item.decision == Decision::Allow {
            r.benign += 1;
            rates[2] += 1;
            if verdict.decision != Decision::Allow {
                rates[3] += 1;
                let holding: BTreeSet<Category> = verdict
                    .findings
                    .iter()
                    .filter(|f| f.outcome != Decision::Allow)
                    .map(|f| f.span.category)
                    .collect();
                for c in holding {
                    r.rates_by_category.entry(c).or_default()[3] += 1;
                }
                r.held_back
                    .push(format!("{} ({}): {}", item.id, verdict.decision, item.text));
            }
        } else {
            r.sensitive += 1;
            rates[0] += 1;
            let sent = verdict.masked_text.as_deref().unwrap_or(&item.text);
            let must_stay = matches!(
                item.decision,
                Decision::Local | Decision::Refuse | Decision::Consent
            );
            let visible = item.spans.iter().any(|s| {
                (s.category.tier() == Tier::Identifier || s.category == Category::Person)
                    && sent.contains(&item.text[s.start..s.end])
            });
            if leaves(verdict.decision)
                && (must_stay || verdict.decision == Decision::Allow || visible)
            {
                rates[1] += 1;
                r.leaks.push(format!(
                    "{} (gold {}, gate {}): {}",
                    item.id, item.decision, verdict.decision, item.text
                ));
            }
            for c in &gold_categories {
                let by_category = r.rates_by_category.entry(*c).or_default();
                by_category[0] += 1;
                by_category[1] += rates[1];
            }
        }
        for total in [
            r.rates_by_source.entry(item.source.clone()).or_default(),
            r.rates_by_locale.entry(item.locale.clone()).or_default(),
        ] {
            for (t, n) in total.iter_mut().zip(rates) {
                *t += n;
            }
        }
    }
    for by_category in r.rates_by_category.values_mut() {
        by_category[2] = r.benign;
    }
    r.seconds = start.elapsed().as_secs_f64();
    r
}

impl Report {
    /// The items behind the leak rate and the friction, one per line.
    pub fn write_items(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for l in &self.leaks {
            writeln!(out, "leak: {l}")?;
        }
        for h in &self.held_back {
            writeln!(out, "held back: {h}")?;
        }
        Ok(())
    }

    pub fn leak_rate(&self) -> f64 {
        1.0 - ratio(self.sensitive - self.leaks.len(), self.sensitive)
    }

    pub fn friction(&self) -> f64 {
        1.0 - ratio(self.benign - self.held_back.len(), self.benign)
    }

    /// Summed counts of one tier, over all items or one source.
    pub fn tier(&self, tier: Tier, source: Option<&str>) -> Counts {
        let map = match source {
            Some(s) => self.by_source.get(s).cloned().unwrap_or_default(),
            None => self.spans.clone(),
        };
        let mut total = Counts::default();
        for (_, c) in map.iter().filter(|(cat, _)| cat.tier() == tier) {
            total.add(*c);
        }
        total
    }

    pub fn p95_item_ms(&self) -> f64 {
        let mut v = self.item_ms.clone();
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 * 0.95).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
    }
}

/// The category as the corpus and the policy spell it ("criminal_history").
fn snake_case(category: Category) -> String {
    serde_json::to_value(category)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{category:?}"))
}

/// One line of leak and friction: (sensitive items, leaks, benign items, held back).
fn rates_row(f: &mut fmt::Formatter<'_>, name: &str, rates: [usize; 4]) -> fmt::Result {
    let [sensitive, leaks, benign, held] = rates;
    writeln!(
        f,
        "    {name:<16} leak {:>6.2}% ({leaks} of {sensitive})   friction {:>6.2}% ({held} of {benign})",
        100.0 * (1.0 - ratio(sensitive - leaks, sensitive)),
        100.0 * (1.0 - ratio(benign - held, benign)),
    )
}

fn row(f: &mut fmt::Formatter<'_>, name: &str, c: Counts) -> fmt::Result {
    writeln!(
        f,
        "  {name:<18} {:>6.3} {:>6.3} {:>6.3} {:>5} {:>5} {:>5}",
        c.precision(),
        c.recall(),
        c.f1(),
        c.tp,
        c.fp,
        c.fn_
    )
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "gate evaluation: {} items, destination cloud",
            self.items
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "Spans (identifiers, names: match = same category and IoU >= {MIN_IOU}, one to one;"
        )?;
        writeln!(
            f,
            "topics: per item, predicted topic among the gold topics)"
        )?;
        writeln!(
            f,
            "  {:<18} {:>6} {:>6} {:>6} {:>5} {:>5} {:>5}",
            "category", "P", "R", "F1", "TP", "FP", "FN"
        )?;
        for (cat, c) in &self.spans {
            row(f, &format!("{cat:?}"), *c)?;
        }
        writeln!(f)?;
        for tier in [Tier::Identifier, Tier::Name, Tier::Topic] {
            row(f, &format!("{tier:?} (all)"), self.tier(tier, None))?;
            for source in self.by_source.keys() {
                row(f, &format!("  {source}"), self.tier(tier, Some(source)))?;
            }
        }
        writeln!(f)?;
        writeln!(f, "Decisions (rows: gold, columns: gate)")?;
        write!(f, "  {:<9}", "")?;
        for d in DECISIONS {
            write!(f, "{:>9}", d.as_str())?;
        }
        writeln!(f)?;
        for (g, counts) in DECISIONS.iter().zip(self.confusion) {
            write!(f, "  {:<9}", g.as_str())?;
            for c in counts {
                write!(f, "{c:>9}")?;
            }
            writeln!(f)?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "Leak rate {:.2}% ({} of {} sensitive items): the gate would let something leave that the gold keeps \
             (allows a sensitive item, masks one that must stay local/refused/asked, or leaves a gold identifier or name visible)",
            100.0 * self.leak_rate(),
            self.leaks.len(),
            self.sensitive
        )?;
        writeln!(
            f,
            "Friction {:.2}% ({} of {} benign items): gold `allow` items the gate does not allow",
            100.0 * self.friction(),
            self.held_back.len(),
            self.benign
        )?;
        writeln!(f, "  by source")?;
        for (source, rates) in &self.rates_by_source {
            rates_row(f, source, *rates)?;
        }
        writeln!(f, "  by locale")?;
        for (locale, rates) in &self.rates_by_locale {
            rates_row(f, locale, *rates)?;
        }
        writeln!(
            f,
            "  by category (leak among the items whose gold carries it; benign items a finding of it held back)"
        )?;
        for (category, [sensitive, leaks, _, held]) in &self.rates_by_category {
            writeln!(
                f,
                "    {:<16} leak {:>6.2}% ({leaks} of {sensitive})   held back {held}",
                snake_case(*category),
                100.0 * (1.0 - ratio(sensitive - leaks, *sensitive)),
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "Gold-local items by the gate's decision (local keeps them; consent asks)"
        )?;
        for (source, counts) in &self.local_outcomes_by_source {
            write!(f, "  {source:<16}")?;
            for (d, c) in DECISIONS.iter().zip(counts) {
                write!(f, " {}: {c:<4}", d.as_str())?;
            }
            writeln!(f)?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "Time: {:.1} ms for {} bytes ({:.2} ms per KB), p95 {:.3} ms per item (one thread; the benchmark measures per-KB latency on large inputs)",
            self.seconds * 1e3,
            self.bytes,
            self.seconds * 1e3 / (self.bytes as f64 / 1024.0).max(1e-9),
            self.p95_item_ms()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(start: usize, end: usize, category: Category) -> GoldSpan {
        GoldSpan {
            start,
            end,
            category,
        }
    }

    #[test]
    fn spans_match_one_to_one_by_overlap_and_category() {
        let gold = [g(0, 10, Category::Person), g(20, 30, Category::Email)];
        let pred = [
            (0, 8, Category::Person),
            (1, 9, Category::Person),
            (20, 30, Category::Phone),
        ];
        let c = match_spans(&gold, &pred);
        assert_eq!(
            c[&Category::Person],
            Counts {
                tp: 1,
                fp: 1,
                fn_: 0
            }
        );
        assert_eq!(
            c[&Category::Email],
            Counts {
                tp: 0,
                fp: 0,
                fn_: 1
            }
        );
        assert_eq!(
            c[&Category::Phone],
            Counts {
                tp: 0,
                fp: 1,
                fn_: 0
            }
        );
    }

    #[test]
    fn small_overlap_is_not_a_match() {
        let c = match_spans(&[g(0, 10, Category::Person)], &[(8, 20, Category::Person)]);
        assert_eq!(
            c[&Category::Person],
            Counts {
                tp: 0,
                fp: 1,
                fn_: 1
            }
        );
    }

    #[test]
    fn bad_offsets_are_reported_with_the_line() {
        let line = r#"{"id":"x","source":"handwritten","text":"héllo","spans":[{"start":1,"end":2,"category":"person"}],"decision":"mask"}"#;
        let err = parse_corpus(&format!("\n{line}\n"), "c.jsonl")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("1..2"), "{err}");
    }
}
