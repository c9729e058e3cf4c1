//! Byte-pair merging of one pre-tokenized piece.
//!
//! Both reference semantics reduce to one rule: start from one token per byte, then repeatedly
//! merge the adjacent pair with the lowest priority, the leftmost on ties. Only the priorities
//! differ: tiktoken merges any pair whose concatenation is a token, at that token's rank; a
//! tokenizer.json lists its merges, at their index in the list. [`MergeTable`] holds either.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

/// What a pair of adjacent tokens merges into, and how early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    pub priority: u32,
    pub merged: u32,
}

pub struct MergeTable {
    pairs: FxHashMap<u64, Merge>,
    byte_tokens: [u32; 256],
}

impl MergeTable {
    pub fn new(byte_tokens: [u32; 256]) -> Self {
        MergeTable { pairs: FxHashMap::default(), byte_tokens }
    }

    /// Records a merge; when a pair is listed twice the first (earliest) entry wins, as in
    /// HF tokenizers.
    pub fn insert(&mut self, left: u32, right: u32, merge: Merge) {
        self.pairs.entry(key(left, right)).or_insert(merge);
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<Merge> {
        self.pairs.get(&key(left, right)).copied()
    }

    /// Appends the tokens of `piece` to `out`.
    ///
    /// Long pieces use a binary heap of candidate merges over a linked list of symbols:
    /// O(n log n) in the piece length, which matters because a run of spaces, a long word or a
    /// line of CJK text is one piece.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        if n == 1 {
            out.push(self.byte_tokens[piece[0] as usize]);
            return;
        }
        if n <= SHORT_PIECE {
            self.encode_short_piece(piece, out)
        } else {
            self.encode_long_piece(piece, out)
        }
    }

    fn encode_long_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        const NONE: u32 = u32::MAX;
        let mut ids: Vec<u32> = piece.iter().map(|&b| self.byte_tokens[b as usize]).collect();
        let mut next: Vec<u32> = (1..=n as u32).collect();
        next[n - 1] = NONE;
        let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
        prev[0] = NONE;
        let mut alive = vec![true; n];

        // Entries are (priority, left position); a popped entry is acted on only if the pair
        // now at that position still has that priority, which discards stale entries.
        let mut heap: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some(m) = self.get(ids[i], ids[i + 1]) {
                heap.push(Reverse((m.priority, i as u32)));
            }
        }
        while let Some(Reverse((priority, left))) = heap.pop() {
            let l = left as usize;
            if !alive[l] || next[l] == NONE {
                continue;
            }
            let r = next[l] as usize;
            let Some(m) = self.get(ids[l], ids[r]).filter(|m| m.priority == priority) else {
                continue;
            };
            ids[l] = m.merged;
            alive[r] = false;
            next[l] = next[r];
            if next[r] != NONE {
                prev[next[r] as usize] = left;
            }
            if prev[l] != NONE {
                let p = prev[l] as usize;
                if let Some(pm) = self.get(ids[p], ids[l]) {
                    heap.push(Reverse((pm.priority, prev[l])));
                }
            }
            if next[l] != NONE {
                if let Some(nm) = self.get(ids[l], ids[next[l] as usize]) {
                    heap.push(Reverse((nm.priority, left)));
                }
            }
        }
        let mut i = 0u32;
        while i != NONE {
            out.push(ids[i as usize]);
            i = next[i as usize];
        }
    }

    /// The same merges by rescanning all pairs after each merge: O(n^2) lookups, but no heap
    /// or list to build, which is faster for the short pieces that most text consists of.
    fn encode_short_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        let mut ids = [0u32; SHORT_PIECE];
        let mut n = piece.len();
        for (id, &b) in ids.iter_mut().zip(piece) {
            *id = self.byte_tokens[b as usize];
        }
        loop {
            let mut best: Option<(Merge, usize)> = None;
            for i in 0..n - 1 {
                if let Some(m) = self.get(ids[i], ids[i + 1]) {
                    if best.is_none_or(|(b, _)| m.priority < b.priority) {
                        best = Some((m, i));
                    }
                }
            }
            let Some((m, i)) = best else { break };
            ids[i] = m.merged;
            ids.copy_within(i + 2..n, i + 1);
            n -= 1;
        }
        out.extend_from_slice(&ids[..n]);
    }
}

/// Pieces up to this many bytes are merged by rescanning (see `encode_short_piece`).
const SHORT_PIECE: usize = 16;

#[inline]
fn key(left: u32, right: u32) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes a=0, b=1, c=2; merges ab=3 (priority 0), bc=4 (1), abc via ab+c=5 (2).
    fn table() -> MergeTable {
        let mut bytes = [u32::MAX; 256];
        bytes[b'a' as usize] = 0;
        bytes[b'b' as usize] = 1;
        bytes[b'c' as usize] = 2;
        let mut t = MergeTable::new(bytes);
        t.insert(0, 1, Merge { priority: 0, merged: 3 });
        t.insert(1, 2, Merge { priority: 1, merged: 4 });
        t.insert(3, 2, Merge { priority: 2, merged: 5 });
        t
    }

    fn encode(t: &MergeTable, s: &str) -> Vec<u32> {
        let mut out = Vec::new();
        t.encode_piece(s.as_bytes(), &mut out);
        out
    }

    #[test]
    fn merges_lowest_priority_first_leftmost_on_ties() {
        let t = table();
        assert_eq!(encode(&t, "abc"), [5]); // ab before bc, then ab+c
        assert_eq!(encode(&t, "bc"), [4]);
        assert_eq!(encode(&t, "abab"), [3, 3]);
        assert_eq!(encode(&t, "cbc"), [2, 4]);
        assert_eq!(encode(&t, "abcbc"), [5, 4]);
        assert_eq!(encode(&t, "c"), [2]);
        assert_eq!(encode(&t, &"abc".repeat(10)), [5; 10]); // the heap path
    }

    #[test]
    fn short_and_long_paths_agree() {
        let t = table();
        let mut state = 0x2545_f491_u32;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let len = 2 + (state as usize) % (SHORT_PIECE - 1); // 2..=SHORT_PIECE
            let piece: Vec<u8> = (0..len).map(|i| b"abc"[((state >> (i % 16 * 2)) % 3) as usize]).collect();
            let (mut short, mut long) = (Vec::new(), Vec::new());
            t.encode_short_piece(&piece, &mut short);
            t.encode_long_piece(&piece, &mut long);
            assert_eq!(short, long, "{}", String::from_utf8_lossy(&piece));
        }
    }
}
