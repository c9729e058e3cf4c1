//! Launch shapes of the decode kernels whose best value depends on the machine and on the
//! other kernels of the step, so it is found by measuring rather than derived: the defaults
//! below are the best of sweeps around them on the H200 (docs/PERFORMANCE.md's history and
//! docs/TRIED.md, "launch shapes", say which sweep set which key and by how much).
//! The kernel sources take them as `-D` constants (with
//! the model's dimensions, [`crate::dims::Dims::defines`]) and the launchers size their grids
//! from the same values, so a sweep needs no rebuild:
//! `LILY_SHAPES=gemv_out_warps=4,moe_down_rows=2 lily bench --synthetic` (the GPU tests read it
//! too, so the same shapes can be checked against the CPU first).

use std::sync::OnceLock;

use crate::error::{CudaError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shapes {
    /// Warps per block of the row products (gemv.cu), by product: the streamed ones with the
    /// norm fused (GDN in_proj, attention q|k|v), the output projections (GDN out_proj, o_proj),
    /// lm_head (its norm fused, short blocks), and the MoE router (one row per warp).
    pub gemv_normed_warps: usize,
    /// Rows in flight per warp of the streamed products: in registers (0 or 1) and in the
    /// warp's ring in shared memory; and their blocks per SM.
    pub gemv_normed_reg_rows: usize,
    pub gemv_normed_stages: usize,
    pub gemv_normed_blocks: usize,
    /// Ring rows asked for before the PDL wait (at most the ring's; the others right after the
    /// norm's reads of the residual): the norm's residual reads queue behind whatever the
    /// block has already asked for, so asking for every row first delays the norm.
    pub gemv_normed_early: usize,
    pub gemv_out_warps: usize,
    pub lm_head_warps: usize,
    pub router_warps: usize,
    /// 16-byte loads each lane of a row product keeps in flight (rows per warp follow).
    pub gemv_loads: usize,
    /// Warps (intermediate rows) per block of moe_gate_up, and tokens per block of the
    /// prefill routing.
    pub moe_warps: usize,
    /// moe_down: groups of hidden rows per block (a warp per routed expert each) and rows per
    /// warp in a group.
    pub moe_down_rows: usize,
    pub moe_down_warp_rows: usize,
    /// Fewest cached keys per split of the attention decode (attention.cu: active_splits): a
    /// context uses ceil(len / this) splits, at most ATTN_SPLITS.
    pub attn_split_keys: usize,
    /// L2 policy of the decode (common.cuh): rows of each group of `gemv_normed_warps` of the
    /// next layer's input product that the router asks into L2 (0: none), with evict_last
    /// rather than evict_normal, and the mask of weight streams read with evict_first.
    pub l2_ahead_rows: usize,
    pub l2_ahead_last: usize,
    pub l2_evict_first: usize,
}

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            gemv_normed_warps: 16,
            gemv_normed_reg_rows: 1,
            gemv_normed_stages: 2,
            gemv_normed_blocks: 1,
            gemv_normed_early: 1,
            gemv_out_warps: 16,
            lm_head_warps: 8,
            router_warps: 16,
            gemv_loads: 16,
            moe_warps: 8,
            moe_down_rows: 1,
            moe_down_warp_rows: 8,
            attn_split_keys: 64,
            l2_ahead_rows: 3,
            l2_ahead_last: 1,
            l2_evict_first: 14,
        }
    }
}

/// Every shape once: its `LILY_SHAPES` key, its `-D` macro, its least value (1 but for a
/// choice that may be off), the largest value a block of at most 1,024 threads (or a lane's
/// registers) allows, and its field. moe_down_rows is also checked against the routed expert
/// count by the MoE launcher, the streamed products' rings against shared memory by theirs.
struct Field {
    key: &'static str,
    define: &'static str,
    least: usize,
    limit: usize,
    field: fn(&mut Shapes) -> &mut usize,
}

const FIELDS: [Field; 16] = [
    Field {
        key: "gemv_normed_warps",
        define: "GEMV_NORMED_WARPS",
        least: 1,
        limit: 32,
        field: |s| &mut s.gemv_normed_warps,
    },
    Field {
        key: "gemv_normed_reg_rows",
        define: "GEMV_NORMED_REG_ROWS",
        least: 0,
        limit: 1,
        field: |s| &mut s.gemv_normed_reg_rows,
    },
    Field {
        key: "gemv_normed_stages",
        define: "GEMV_NORMED_STAGES",
        least: 1,
        limit: 16,
        field: |s| &mut s.gemv_normed_stages,
    },
    Field {
        key: "gemv_normed_blocks",
        define: "GEMV_NORMED_BLOCKS",
        least: 1,
        limit: 32,
        field: |s| &mut s.gemv_normed_blocks,
    },
    Field {
        key: "gemv_out_warps",
        define: "GEMV_OUT_WARPS",
        least: 1,
        limit: 32,
        field: |s| &mut s.gemv_out_warps,
    },
    Field {
        key: "lm_head_warps",
        define: "LM_HEAD_WARPS",
        least: 1,
        limit: 32,
        field: |s| &mut s.lm_head_warps,
    },
    Field {
        key: "router_warps",
        define: "ROUTER_WARPS",
        least: 1,
        limit: 32,
        field: |s| &mut s.router_warps,
    },
    Field {
        key: "gemv_loads",
        define: "GEMV_LOADS",
        least: 1,
        limit: 32,
        field: |s| &mut s.gemv_loads,
    },
    Field {
        key: "moe_warps",
        define: "MOE_WARPS",
        least: 1,
        limit: 32,
        field: |s| &mut s.moe_warps,
    },
    Field {
        key: "moe_down_rows",
        define: "DOWN_ROWS",
        least: 1,
        limit: 4,
        field: |s| &mut s.moe_down_rows,
    },
    Field {
        key: "moe_down_warp_rows",
        define: "DOWN_WARP_ROWS",
        least: 1,
        limit: 16,
        field: |s| &mut s.moe_down_warp_rows,
    },
    Field {
        key: "attn_split_keys",
        define: "ATTN_SPLIT_KEYS",
        least: 1,
        limit: 1 << 18,
        field: |s| &mut s.attn_split_keys,
    },
    Field {
        key: "l2_ahead_rows",
        define: "L2_AHEAD_ROWS",
        least: 0,
        limit: 32,
        field: |s| &mut s.l2_ahead_rows,
    },
    Field {
        key: "l2_ahead_last",
        define: "L2_AHEAD_LAST",
        least: 0,
        limit: 1,
        field: |s| &mut s.l2_ahead_last,
    },
    Field {
        key: "l2_evict_first",
        define: "L2_EVICT_FIRST",
        least: 0,
        limit: 15,
        field: |s| &mut s.l2_evict_first,
    },
    Field {
        key: "gemv_normed_early",
        define: "GEMV_NORMED_EARLY",
        least: 0,
        limit: 16,
        field: |s| &mut s.gemv_normed_early,
    },
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
                .map_err(|_| format!("{key}: `{}` is not a whole number", value.trim()))?;
            let Some(f) = FIELDS.iter().find(|f| f.key == key) else {
                let known: Vec<&str> = FIELDS.iter().map(|f| f.key).collect();
                return Err(format!(
                    "unknown shape `{key}` (known: {})",
                    known.join(", ")
                ));
            };
            if value < f.least {
                return Err(format!("{key} = {value} is less than {}", f.least));
            }
            if value > f.limit {
                return Err(format!("{key} = {value} is more than {}", f.limit));
            }
            *(f.field)(&mut s) = value;
        }
        Ok(s)
    }

    /// The `-D` macros of these shapes.
    pub fn defines(&self) -> Vec<(&'static str, i64)> {
        let mut s = *self;
        FIELDS
            .iter()
            .map(|f| (f.define, *(f.field)(&mut s) as i64))
            .collect()
    }
}

/// `KEY=VALUE,...`, as `parse` and `LILY_SHAPES` take it.
impl std::fmt::Display for Shapes {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = *self;
        for (i, f) in FIELDS.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(out, "{sep}{}={}", f.key, *(f.field)(&mut s))?;
        }
        Ok(())
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
        // A choice that may be off takes 0; the others start at 1 (names_what_is_wrong).
        assert_eq!(
            Shapes::parse("gemv_normed_reg_rows=0")
                .unwrap()
                .gemv_normed_reg_rows,
            0
        );
        // Every ring row after the wait.
        assert_eq!(
            Shapes::parse("gemv_normed_early=0")
                .unwrap()
                .gemv_normed_early,
            0
        );
        let off = Shapes::parse("l2_ahead_rows=0,l2_evict_first=0").unwrap();
        assert_eq!((off.l2_ahead_rows, off.l2_evict_first), (0, 0));
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
            ("moe_warps=0", "less than 1"),
            ("moe_warps=x", "not a whole number"),
            ("gemv_normed_reg_rows=2", "more than 1"),
            ("gemv_out_warps=64", "more than 32"),
            // The evict_first mask has four streams.
            ("l2_evict_first=16", "more than 15"),
            ("gemv_normed_early=17", "more than 16"),
        ] {
            let e = Shapes::parse(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }
}
