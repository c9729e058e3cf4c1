//! Prefix cache: snapshots of sequence state keyed by the tokens that produced them. A new
//! prompt restores the longest cached prefix and prefills only the rest. Bounded in bytes,
//! least recently used entries go first.

/// What a lookup found: how many prompt tokens the snapshot covers, and the snapshot.
pub struct CacheHit<'a, S> {
    pub tokens: usize,
    pub snapshot: &'a S,
}

struct Entry<S> {
    tokens: Vec<u32>,
    snapshot: S,
    bytes: usize,
    last_used: u64,
}

pub struct PrefixCache<S> {
    entries: Vec<Entry<S>>,
    budget_bytes: usize,
    used_bytes: usize,
    clock: u64,
}

impl<S> PrefixCache<S> {
    pub fn new(budget_bytes: usize) -> Self {
        Self { entries: Vec::new(), budget_bytes, used_bytes: 0, clock: 0 }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    /// The longest cached prefix of `prompt` that leaves at least one prompt token to
    /// prefill (the prefill of that token yields the logits generation starts from).
    pub fn lookup(&mut self, prompt: &[u32]) -> Option<CacheHit<'_, S>> {
        self.clock += 1;
        let best = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.tokens.len() < prompt.len() && prompt.starts_with(&e.tokens))
            .max_by_key(|(_, e)| e.tokens.len())
            .map(|(i, _)| i)?;
        let entry = &mut self.entries[best];
        entry.last_used = self.clock;
        Some(CacheHit { tokens: entry.tokens.len(), snapshot: &entry.snapshot })
    }

    /// Whether `tokens` are already cached exactly (so a new snapshot would be a waste).
    pub fn contains(&self, tokens: &[u32]) -> bool {
        self.entries.iter().any(|e| e.tokens == tokens)
    }

    /// Stores a snapshot of the state after `tokens`, evicting least recently used entries
    /// until it fits. A snapshot larger than the whole budget is not stored.
    pub fn insert(&mut self, tokens: Vec<u32>, snapshot: S, bytes: usize) {
        if bytes > self.budget_bytes || tokens.is_empty() {
            return;
        }
        self.clock += 1;
        if let Some(i) = self.entries.iter().position(|e| e.tokens == tokens) {
            let old = self.entries.swap_remove(i);
            self.used_bytes -= old.bytes;
        }
        while self.used_bytes + bytes > self.budget_bytes {
            let Some(lru) = self.entries.iter().enumerate().min_by_key(|(_, e)| e.last_used).map(|(i, _)| i) else {
                break;
            };
            let old = self.entries.swap_remove(lru);
            self.used_bytes -= old.bytes;
        }
        self.used_bytes += bytes;
        self.entries.push(Entry { tokens, snapshot, bytes, last_used: self.clock });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_longest_prefix_that_leaves_a_token_to_prefill() {
        let mut c = PrefixCache::new(1000);
        c.insert(vec![1, 2], "ab", 10);
        c.insert(vec![1, 2, 3, 4], "abcd", 10);
        c.insert(vec![9], "z", 10);
        let hit = c.lookup(&[1, 2, 3, 4, 5]).unwrap();
        assert_eq!((hit.tokens, *hit.snapshot), (4, "abcd"));
        // The exact prompt is cached, but one token must remain to prefill.
        let hit = c.lookup(&[1, 2, 3, 4]).unwrap();
        assert_eq!((hit.tokens, *hit.snapshot), (2, "ab"));
        assert!(c.lookup(&[2, 1]).is_none());
    }

    #[test]
    fn evicts_least_recently_used_within_the_byte_budget() {
        let mut c = PrefixCache::new(25);
        c.insert(vec![1], 'a', 10);
        c.insert(vec![2], 'b', 10);
        assert!(c.lookup(&[1, 0]).is_some()); // 'a' is now more recent than 'b'
        c.insert(vec![3], 'c', 10);
        assert_eq!(c.len(), 2);
        assert!(c.lookup(&[2, 0]).is_none(), "b was least recently used");
        assert!(c.lookup(&[1, 0]).is_some());
        assert_eq!(c.used_bytes(), 20);
        c.insert(vec![4], 'd', 26);
        assert_eq!(c.len(), 2, "an entry larger than the budget is not stored");
        c.insert(vec![1], 'A', 5);
        assert_eq!((c.len(), c.used_bytes()), (2, 15), "re-inserting replaces");
    }
}
