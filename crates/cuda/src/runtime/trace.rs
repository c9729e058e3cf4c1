//! A per-block timeline of one decode step (`lily bench --trace FILE`): when each block of each
//! launch started and when its PDL wait returned, on which SM. The per-launch tools (`--profile`,
//! eager; `--leave-out`, marginal costs) cannot show what happens inside the captured step:
//! which kernel's blocks are resident while another runs, how early they start, how long a
//! wait holds them. That is what a persistent decode kernel would change, so it is measured
//! first.
//!
//! How: [`enable`] allocates a buffer before the kernels are compiled and its address becomes
//! the `LILY_TRACE_BUF` define (common.cuh), so a traced build differs from the normal one only
//! in that run; without it the kernels are unchanged. In each block, thread 0 stores to the slot
//! (grid id mod [`LAUNCHES`], block): its grid id, the global timer at `pdl_launch_next` (the
//! block's start) and after `pdl_wait`, and its SM. Plain stores, no atomics, so that the marks
//! do not lengthen the chains they time. A launch's blocks are told apart from the next
//! launch's by the grid id; the launches are put in order by their first start and named by the
//! eager step's labels (the same sequence of launches as the graph's).

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use crate::runtime::driver::{DevicePtr, Gpu};
use crate::error::{CudaError, Result};

/// Launch slots: grid ids are taken modulo this many (a step has ~300 launches).
pub const LAUNCHES: usize = 512;
/// Blocks per launch slot (lm_head's 15,520 is the largest grid of a step); larger grids record
/// their first this many blocks.
pub const BLOCKS: usize = 16384;
const SLOT_WORDS: usize = 4;
const BYTES: usize = LAUNCHES * BLOCKS * SLOT_WORDS * 8;

/// The trace buffer, allocated once per process by [`enable`] and never freed (a diagnostic
/// run's 256 MiB, held until the process ends).
static BUFFER: OnceLock<DevicePtr> = OnceLock::new();

/// Turns tracing on for every kernel family compiled after this call.
pub fn enable(gpu: &Arc<Gpu>) -> Result<()> {
    if BUFFER.get().is_some() {
        return Ok(());
    }
    let buf = gpu.alloc(BYTES)?;
    let ptr = buf.ptr();
    std::mem::forget(buf);
    let _ = BUFFER.set(ptr);
    clear(gpu)
}

/// The `-D` define a traced kernel family is compiled with (None: tracing off).
pub(crate) fn define() -> Option<(&'static str, i64)> {
    BUFFER.get().map(|&p| ("LILY_TRACE_BUF", p as i64))
}

fn buffer() -> Result<DevicePtr> {
    BUFFER
        .get()
        .copied()
        .ok_or_else(|| CudaError::Invalid("tracing is off: call trace::enable first".into()))
}

/// Forgets every mark so far (waits for the stream first).
pub fn clear(gpu: &Gpu) -> Result<()> {
    gpu.synchronize()?;
    gpu.memset_u32(buffer()?, 0, BYTES / 4)?;
    gpu.synchronize()
}

/// One block's marks, times in nanoseconds of the GPU's global timer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockMark {
    pub grid_id: u64,
    pub block: usize,
    pub sm: u32,
    pub start_ns: u64,
    /// None where the block returned before its wait (or has none).
    pub wait_ns: Option<u64>,
}

/// Every mark since the last [`clear`] (waits for the stream first).
pub fn collect(gpu: &Gpu) -> Result<Vec<BlockMark>> {
    gpu.synchronize()?;
    let mut bytes = vec![0u8; BYTES];
    gpu.download(&mut bytes, buffer()?)?;
    Ok(parse(&bytes))
}

fn parse(bytes: &[u8]) -> Vec<BlockMark> {
    let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
    (0..bytes.len() / (8 * SLOT_WORDS))
        .filter(|&s| word(SLOT_WORDS * s) != 0)
        .map(|s| BlockMark {
            grid_id: word(SLOT_WORDS * s),
            block: s % BLOCKS,
            sm: word(SLOT_WORDS * s + 3) as u32,
            start_ns: word(SLOT_WORDS * s + 1),
            wait_ns: Some(word(SLOT_WORDS * s + 2)).filter(|&t| t != 0),
        })
        .collect()
}

/// One launch of the traced step: its label (`name grid XxYxZ`, as `--profile` prints it) and
/// its blocks' marks.
#[derive(Debug)]
pub struct LaunchTrace {
    pub label: String,
    pub blocks: Vec<BlockMark>,
}

/// The marks of each launch (one grid id), blocks in order, launches in the order of their
/// first start.
fn by_launch(marks: &[BlockMark]) -> Vec<Vec<BlockMark>> {
    let mut by_grid: std::collections::BTreeMap<u64, Vec<BlockMark>> = Default::default();
    for m in marks {
        by_grid.entry(m.grid_id).or_default().push(*m);
    }
    let mut groups: Vec<Vec<BlockMark>> = by_grid.into_values().collect();
    for g in &mut groups {
        g.sort_by_key(|m| m.block);
    }
    groups.sort_by_key(|g| g.iter().map(|m| m.start_ns).min());
    groups
}

/// Groups marks by launch, orders the launches by their first start and names them with
/// `labels` (the step's launches in order). Fails where the count of launches differs, or a
/// launch recorded other than its grid's block count (up to [`BLOCKS`]): two launches then
/// shared a slot, or the labels are not this step's ([`unnamed`] still shows the marks).
pub fn launches(marks: &[BlockMark], labels: &[String]) -> Result<Vec<LaunchTrace>> {
    let groups = by_launch(marks);
    if groups.len() != labels.len() {
        return Err(CudaError::Invalid(format!(
            "trace: {} launches marked, the step has {}",
            groups.len(),
            labels.len()
        )));
    }
    let mut out = Vec::with_capacity(groups.len());
    for (blocks, label) in groups.into_iter().zip(labels) {
        let expected = grid_blocks(label)?.min(BLOCKS);
        if blocks.len() != expected {
            return Err(CudaError::Invalid(format!(
                "trace: {label} marked {} blocks, its grid has {expected}",
                blocks.len()
            )));
        }
        out.push(LaunchTrace {
            label: label.clone(),
            blocks,
        });
    }
    Ok(out)
}

/// The launches as [`launches`] groups them, labelled by grid id alone: for marks that do not
/// match the step's launches.
pub fn unnamed(marks: &[BlockMark]) -> Vec<LaunchTrace> {
    by_launch(marks)
        .into_iter()
        .map(|blocks| LaunchTrace {
            label: format!("grid id {}", blocks[0].grid_id),
            blocks,
        })
        .collect()
}

fn grid_blocks(label: &str) -> Result<usize> {
    let bad = || CudaError::Invalid(format!("trace: no grid in the launch label {label:?}"));
    let dims = label.rsplit(" grid ").next().ok_or_else(bad)?;
    dims.split('x')
        .map(|d| d.trim().parse::<usize>().map_err(|_| bad()))
        .product()
}

/// CSV, one row per block: launch index, label, block, SM, start and wait-return times in
/// nanoseconds from the step's first start (wait empty where the block had none).
pub fn csv(launches: &[LaunchTrace]) -> String {
    let t0 = launches
        .iter()
        .flat_map(|l| l.blocks.iter().map(|m| m.start_ns))
        .min()
        .unwrap_or(0);
    let mut s = String::from("launch,label,block,sm,start_ns,wait_ns\n");
    for (i, l) in launches.iter().enumerate() {
        for m in &l.blocks {
            let wait = m.wait_ns.map(|w| (w - t0).to_string()).unwrap_or_default();
            let _ = writeln!(
                s,
                "{i},{},{},{},{},{wait}",
                l.label,
                m.block,
                m.sm,
                m.start_ns - t0
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot_bytes(slots: &[(usize, [u64; 4])]) -> Vec<u8> {
        let mut bytes = vec![0u8; 8 * SLOT_WORDS * 2 * BLOCKS];
        for &(slot, words) in slots {
            for (k, w) in words.iter().enumerate() {
                let at = 8 * (SLOT_WORDS * slot + k);
                bytes[at..at + 8].copy_from_slice(&w.to_le_bytes());
            }
        }
        bytes
    }

    #[test]
    fn marks_are_read_from_their_slots_and_named_in_start_order() {
        // Grid 9 started first although its id is larger; grid 8's block 1 never waited.
        let bytes = slot_bytes(&[
            (0, [8, 300, 350, 5]),
            (1, [8, 310, 0, 6]),
            (BLOCKS, [9, 100, 120, 7]),
        ]);
        let marks = parse(&bytes);
        assert_eq!(marks.len(), 3);
        assert_eq!(marks[1].wait_ns, None);
        let labels = vec!["a grid 1x1x1".to_string(), "b grid 2x1x1".to_string()];
        let l = launches(&marks, &labels).unwrap();
        assert_eq!(l[0].label, "a grid 1x1x1");
        assert_eq!(l[0].blocks[0].grid_id, 9);
        assert_eq!(l[1].blocks.len(), 2);
        assert_eq!(
            csv(&l),
            "launch,label,block,sm,start_ns,wait_ns\n\
             0,a grid 1x1x1,0,7,0,20\n\
             1,b grid 2x1x1,0,5,200,250\n\
             1,b grid 2x1x1,1,6,210,\n"
        );
    }

    #[test]
    fn a_launch_with_missing_blocks_or_a_wrong_count_of_launches_is_an_error() {
        let marks = parse(&slot_bytes(&[(0, [8, 300, 350, 5])]));
        let err = launches(&marks, &["b grid 2x1x1".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("marked 1 blocks, its grid has 2"), "{err}");
        let err = launches(&marks, &[]).unwrap_err().to_string();
        assert!(err.contains("1 launches marked, the step has 0"), "{err}");
        let err = launches(&marks, &["no grid here".to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no grid"), "{err}");
        assert_eq!(
            csv(&unnamed(&marks)),
            "launch,label,block,sm,start_ns,wait_ns\n0,grid id 8,0,5,0,50\n"
        );
    }
}
