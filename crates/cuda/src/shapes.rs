//! Launch shapes of the decode kernels whose best value was found by measuring (PERFORMANCE.md
//! v10: moe_down's shape alone moved decode by 2.5%). The kernel sources take them as `-D`
//! constants (with the model's dimensions, [`crate::dims::Dims::defines`]) and the launchers
//! size their grids from the same values, so a sweep needs no rebuild:
//! `LILY_SHAPES=gemv_out_warps=4,moe_down_rows=2 lily bench --synthetic` (the GPU tests read it
//! too, so the same shapes can be checked against the CPU first).

use std::sync::OnceLock;

use crate::error::{CudaError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shapes {
    /// Warps per block of the row products (gemv.cu), by product: the ones with the layer
    /// norm fused (GDN in_proj, attention q|k|v), the output projections (GDN out_proj,
    /// o_proj), lm_head, and the MoE router (one row per warp).
    pub gemv_normed_warps: usize,
    pub gemv_out_warps: usize,
    pub gemv_hidden_warps: usize,
    pub router_warps: usize,
    /// 16-byte loads each lane of a row product keeps in flight (rows per warp follow).
    pub gemv_loads: usize,
    /// Warps (intermediate rows) per block of moe_gate_up, and tokens per block of the
    /// prefill routing.
    pub moe_warps: usize,
    /// Hidden rows per block of moe_down (a warp per expert slot each).
    pub moe_down_rows: usize,
}

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            gemv_normed_warps: 8,
            gemv_out_warps: 8,
            gemv_hidden_warps: 8,
            router_warps: 8,
            gemv_loads: 16,
            moe_warps: 4,
            moe_down_rows: 1,
        }
    }
}

/// Each shape's name and the largest value a block of at most 1,024 threads (or a lane's
/// registers) allows; moe_down_rows is checked against the slot count by the MoE launcher.
const LIMITS: [(&str, usize); 7] = [
    ("gemv_normed_warps", 32),
    ("gemv_out_warps", 32),
    ("gemv_hidden_warps", 32),
    ("router_warps", 32),
    ("gemv_loads", 32),
    ("moe_warps", 32),
    ("moe_down_rows", 3),
];

impl Shapes {
    /// `KEY=VALUE,...` over the defaults; an unknown key, a value that is not a positive
    /// integer or one past its limit is an error naming it.
    pub fn parse(spec: &str) -> std::result::Result<Shapes, String> {
        let mut s = Shapes::default();
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not KEY=VALUE"))?;
            let key = key.trim();
            let value: usize = value
                .trim()
                .parse()
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| format!("{key}: `{}` is not a positive integer", value.trim()))?;
            let Some(&(_, limit)) = LIMITS.iter().find(|(k, _)| *k == key) else {
                let known: Vec<&str> = LIMITS.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "unknown shape `{key}` (known: {})",
                    known.join(", ")
                ));
            };
            if value > limit {
                return Err(format!("{key} = {value} is more than {limit}"));
            }
            *match key {
                "gemv_normed_warps" => &mut s.gemv_normed_warps,
                "gemv_out_warps" => &mut s.gemv_out_warps,
                "gemv_hidden_warps" => &mut s.gemv_hidden_warps,
                "router_warps" => &mut s.router_warps,
                "gemv_loads" => &mut s.gemv_loads,
                "moe_warps" => &mut s.moe_warps,
                _ => &mut s.moe_down_rows,
            } = value;
        }
        Ok(s)
    }

    /// The `-D` macros of these shapes.
    pub fn defines(&self) -> Vec<(&'static str, i64)> {
        vec![
            ("GEMV_NORMED_WARPS", self.gemv_normed_warps as i64),
            ("GEMV_OUT_WARPS", self.gemv_out_warps as i64),
            ("GEMV_HIDDEN_WARPS", self.gemv_hidden_warps as i64),
            ("ROUTER_WARPS", self.router_warps as i64),
            ("GEMV_LOADS", self.gemv_loads as i64),
            ("MOE_WARPS", self.moe_warps as i64),
            ("DOWN_ROWS", self.moe_down_rows as i64),
        ]
    }
}

/// `KEY=VALUE,...`, as `parse` and `LILY_SHAPES` take it.
impl std::fmt::Display for Shapes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "gemv_normed_warps={},gemv_out_warps={},gemv_hidden_warps={},router_warps={},\
             gemv_loads={},moe_warps={},moe_down_rows={}",
            self.gemv_normed_warps,
            self.gemv_out_warps,
            self.gemv_hidden_warps,
            self.router_warps,
            self.gemv_loads,
            self.moe_warps,
            self.moe_down_rows
        )
    }
}

/// The shapes of this process: `LILY_SHAPES` over the defaults, read once.
pub fn current() -> Result<Shapes> {
    static SHAPES: OnceLock<std::result::Result<Shapes, String>> = OnceLock::new();
    SHAPES
        .get_or_init(|| match std::env::var("LILY_SHAPES") {
            Ok(spec) => Shapes::parse(&spec).map_err(|e| format!("LILY_SHAPES: {e}")),
            Err(_) => Ok(Shapes::default()),
        })
        .clone()
        .map_err(CudaError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_overrides_over_the_defaults() {
        let s = Shapes::parse(" gemv_out_warps=4, moe_down_rows=2 ,").unwrap();
        assert_eq!(
            s,
            Shapes {
                gemv_out_warps: 4,
                moe_down_rows: 2,
                ..Shapes::default()
            }
        );
        assert_eq!(Shapes::parse("").unwrap(), Shapes::default());
        assert_eq!(
            Shapes::parse(&s.to_string()).unwrap(),
            s,
            "Display is what parse takes"
        );
    }

    #[test]
    fn names_what_is_wrong() {
        for (spec, says) in [
            ("gemv_warps=4", "unknown shape `gemv_warps`"),
            ("router_warps", "not KEY=VALUE"),
            ("moe_warps=0", "not a positive integer"),
            ("moe_warps=x", "not a positive integer"),
            ("gemv_out_warps=64", "more than 32"),
        ] {
            let e = Shapes::parse(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }
}
