//! Block sizes: one size, or a weighted mix (`4k/60:64k/40`, fio's bssplit spelling).

use crate::rng::{ExactShares, WorkerRng};

/// Weighted block sizes; weights are relative and need not add up to 100.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSizeMix {
    entries: Vec<(u32, u32)>,
    total_weight: u64,
}

impl BlockSizeMix {
    /// One block size.
    pub fn single(bytes: u32) -> Self {
        BlockSizeMix { entries: vec![(bytes, 1)], total_weight: 1 }
    }

    /// `(bytes, weight)` pairs; the caller has checked sizes and weights are non-zero.
    pub fn weighted(entries: Vec<(u32, u32)>) -> Self {
        let total_weight = entries.iter().map(|(_, w)| *w as u64).sum();
        BlockSizeMix { entries, total_weight }
    }

    pub fn entries(&self) -> &[(u32, u32)] {
        &self.entries
    }

    pub fn max(&self) -> u32 {
        self.entries.iter().map(|(b, _)| *b).max().unwrap_or(0)
    }

    pub fn min(&self) -> u32 {
        self.entries.iter().map(|(b, _)| *b).min().unwrap_or(0)
    }

    pub fn is_single(&self) -> bool {
        self.entries.len() == 1
    }

    /// Mean block size, weighted: converts a bandwidth cap to an I/O rate.
    pub fn mean(&self) -> f64 {
        let sum: f64 = self.entries.iter().map(|(b, w)| *b as f64 * *w as f64).sum();
        sum / self.total_weight as f64
    }
}

/// One worker's draws from a mix: each size's share of its requests exact to a request or
/// two, in a random order (`rng::ExactShares`).
#[derive(Debug, Clone)]
pub struct SizeDraws {
    sizes: Vec<u32>,
    shares: ExactShares,
}

impl SizeDraws {
    pub fn new(mix: &BlockSizeMix) -> SizeDraws {
        let weights: Vec<u64> = mix.entries.iter().map(|(_, w)| u64::from(*w)).collect();
        SizeDraws { sizes: mix.entries.iter().map(|(b, _)| *b).collect(), shares: ExactShares::new(&weights) }
    }

    #[inline]
    pub fn next(&mut self, rng: &mut WorkerRng) -> u32 {
        match self.sizes.as_slice() {
            [only] => *only,
            sizes => sizes[self.shares.draw(rng)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn a_mix_is_drawn_in_proportion_to_its_weights() {
        let mix = BlockSizeMix::weighted(vec![(4096, 60), (65536, 30), (8192, 10)]);
        let mut draws = SizeDraws::new(&mix);
        let mut rng = stream(42, 0);
        let mut n = [0u32; 3];
        for _ in 0..100_000 {
            match draws.next(&mut rng) {
                4096 => n[0] += 1,
                65536 => n[1] += 1,
                8192 => n[2] += 1,
                other => panic!("unexpected size {other}"),
            }
        }
        // Exactly the weights' shares, not only about them.
        assert_eq!(n, [60_000, 30_000, 10_000]);
        assert_eq!(mix.max(), 65536);
        assert_eq!(mix.min(), 4096);
        assert!((mix.mean() - (0.6 * 4096.0 + 0.3 * 65536.0 + 0.1 * 8192.0)).abs() < 1e-6);
    }

    #[test]
    fn a_single_size_is_always_that_size() {
        let mut draws = SizeDraws::new(&BlockSizeMix::single(8192));
        let mut rng = stream(1, 0);
        assert!((0..1000).all(|_| draws.next(&mut rng) == 8192));
    }
}
