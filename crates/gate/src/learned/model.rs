//! The file format of the learned tiers' weights, and the linear scorer they share.
//!
//! Both models are linear over hashed features: a score per label is the sum of the weight rows
//! of the features present, plus a bias. Weights are stored as i8 with one f32 scale, which
//! keeps the committed files under a megabyte each and costs no measurable accuracy
//! (`scripts/gate/train_*.py` report the quantised model's scores).
//!
//! Layout, all little-endian:
//! ```text
//! magic      [u8; 4]   b"LGNM" (names tagger) or b"LGTP" (topic classifier)
//! format     u32       FORMAT_VERSION
//! features   u32       the version of the model's features it was trained with
//!                      (features::NAME_FEATURE_VERSION or TOPIC_FEATURE_VERSION)
//! log2_rows  u32       hash buckets = 1 << log2_rows
//! n_labels   u32
//! labels     n_labels x (u8 length, UTF-8 bytes)
//! scale      f32       weight = i8 * scale
//! bias       n_labels x f32
//! calib_a    n_labels x f32   Platt scaling: p = sigmoid(a * score + b)
//! calib_b    n_labels x f32   (the tagger stores a = 1, b = 0 and normalises with softmax)
//! weights    (1 << log2_rows) x n_labels x i8, row-major by bucket
//! ```

use super::LearnedError;

pub const FORMAT_VERSION: u32 = 1;
/// Large enough for any table we would commit; guards the allocation against corrupt headers.
const MAX_LOG2_ROWS: u32 = 22;
const MAX_LABELS: u32 = 64;

pub struct LinearModel {
    pub labels: Vec<String>,
    mask: u32,
    scale: f32,
    bias: Vec<f32>,
    pub calib_a: Vec<f32>,
    pub calib_b: Vec<f32>,
    weights: Vec<i8>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    file: &'static str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], LearnedError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(LearnedError::Truncated {
                file: self.file,
                field,
                offset: self.pos,
                len: self.bytes.len(),
            })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, LearnedError> {
        let b = self.take(4, field)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f32s(&mut self, n: usize, field: &'static str) -> Result<Vec<f32>, LearnedError> {
        let b = self.take(n * 4, field)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

impl LinearModel {
    /// Parses and validates a model file. `file` names it in errors; `magic`, `feature_version`
    /// and `labels` are what the caller was built for, so a swapped or stale file is refused
    /// here, not misread.
    pub fn parse(
        bytes: &[u8],
        file: &'static str,
        magic: &[u8; 4],
        feature_version: u32,
        labels: &[&str],
    ) -> Result<Self, LearnedError> {
        let mut r = Reader {
            bytes,
            pos: 0,
            file,
        };
        let found = r.take(4, "magic")?;
        if found != magic {
            return Err(LearnedError::BadMagic {
                file,
                expected: *magic,
                found: found.to_vec(),
            });
        }
        let check = |field: &'static str, expected: u32, found: u32| {
            if expected == found {
                Ok(())
            } else {
                Err(LearnedError::Mismatch {
                    file,
                    field,
                    expected: expected.to_string(),
                    found: found.to_string(),
                })
            }
        };
        check("format version", FORMAT_VERSION, r.u32("format version")?)?;
        check(
            "feature version",
            feature_version,
            r.u32("feature version")?,
        )?;
        let log2_rows = r.u32("log2_rows")?;
        if log2_rows == 0 || log2_rows > MAX_LOG2_ROWS {
            return Err(LearnedError::Mismatch {
                file,
                field: "log2_rows",
                expected: format!("1..={MAX_LOG2_ROWS}"),
                found: log2_rows.to_string(),
            });
        }
        let n_labels = r.u32("n_labels")?;
        if n_labels == 0 || n_labels > MAX_LABELS {
            return Err(LearnedError::Mismatch {
                file,
                field: "n_labels",
                expected: format!("1..={MAX_LABELS}"),
                found: n_labels.to_string(),
            });
        }
        let n = n_labels as usize;
        let mut found_labels = Vec::with_capacity(n);
        for _ in 0..n {
            let len = r.take(1, "label length")?[0] as usize;
            let b = r.take(len, "label")?;
            found_labels.push(String::from_utf8_lossy(b).into_owned());
        }
        if found_labels
            .iter()
            .map(String::as_str)
            .ne(labels.iter().copied())
        {
            return Err(LearnedError::Mismatch {
                file,
                field: "labels",
                expected: labels.join(","),
                found: found_labels.join(","),
            });
        }
        let scale = r.f32s(1, "scale")?[0];
        let bias = r.f32s(n, "bias")?;
        let calib_a = r.f32s(n, "calib_a")?;
        let calib_b = r.f32s(n, "calib_b")?;
        let rows = 1usize << log2_rows;
        let weights: Vec<i8> = r
            .take(rows * n, "weights")?
            .iter()
            .map(|&b| b as i8)
            .collect();
        if r.pos != bytes.len() {
            return Err(LearnedError::Mismatch {
                file,
                field: "file length",
                expected: r.pos.to_string(),
                found: bytes.len().to_string(),
            });
        }
        Ok(LinearModel {
            labels: found_labels,
            mask: (rows - 1) as u32,
            scale,
            bias,
            calib_a,
            calib_b,
            weights,
        })
    }

    pub fn n_labels(&self) -> usize {
        self.labels.len()
    }

    /// Raw per-label scores of one feature set, given by the FNV-1a hashes of its feature
    /// strings, written into `out` (length `n_labels`).
    pub fn score_hashes(&self, hashes: impl IntoIterator<Item = u32>, out: &mut [f32]) {
        let n = self.n_labels();
        // On the stack: this runs once per token.
        let mut acc = [0i32; MAX_LABELS as usize];
        let acc = &mut acc[..n];
        for h in hashes {
            let row = (h & self.mask) as usize * n;
            for (a, &w) in acc.iter_mut().zip(&self.weights[row..row + n]) {
                *a += i32::from(w);
            }
        }
        for ((o, &a), b) in out.iter_mut().zip(acc.iter()).zip(&self.bias) {
            *o = a as f32 * self.scale + b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learned::features::NAME_FEATURE_VERSION;

    const NAMES: &[u8] = include_bytes!("../../models/names.lgm");
    const LABELS: [&str; 7] = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"];

    fn parse(bytes: &[u8], magic: &[u8; 4], labels: &[&str]) -> Result<LinearModel, LearnedError> {
        LinearModel::parse(bytes, "names.lgm", magic, NAME_FEATURE_VERSION, labels)
    }

    #[test]
    fn committed_model_parses() {
        let m = parse(NAMES, b"LGNM", &LABELS).unwrap();
        assert_eq!(m.n_labels(), 7);
    }

    #[test]
    fn a_topic_model_is_not_read_as_a_names_model() {
        let err = parse(NAMES, b"LGTP", &LABELS).err().unwrap().to_string();
        assert!(err.contains("names.lgm") && err.contains("magic"), "{err}");
    }

    #[test]
    fn truncation_names_the_field_and_offset() {
        let err = parse(&NAMES[..NAMES.len() - 1], b"LGNM", &LABELS)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("weights") && err.contains("truncated"),
            "{err}"
        );
        let err = parse(&NAMES[..10], b"LGNM", &LABELS)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("feature version"), "{err}");
    }

    #[test]
    fn stale_feature_version_and_other_labels_are_refused() {
        let mut stale = NAMES.to_vec();
        stale[8..12].copy_from_slice(&(NAME_FEATURE_VERSION + 1).to_le_bytes());
        let err = parse(&stale, b"LGNM", &LABELS).err().unwrap().to_string();
        assert!(err.contains("feature version"), "{err}");
        let err = parse(NAMES, b"LGNM", &["O", "B-PER"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("labels") && err.contains("B-PER,I-PER"),
            "{err}"
        );
    }

    #[test]
    fn trailing_bytes_are_refused() {
        let mut long = NAMES.to_vec();
        long.push(0);
        let err = parse(&long, b"LGNM", &LABELS).err().unwrap().to_string();
        assert!(err.contains("file length"), "{err}");
    }
}
