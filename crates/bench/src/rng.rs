//! Seeded random numbers for every workload: xoshiro256++ seeded through splitmix64, and
//! Lemire's multiply-shift for bounded draws. Fast, and the same sequence for the same seed everywhere.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

pub use rand::Rng;

/// The seed of every workload and generator that is given none: one definition for the
/// command line, plans, the data generators and the drivers.
pub const DEFAULT_SEED: u64 = 1;

/// The per-worker generator.
pub type WorkerRng = Xoshiro256PlusPlus;

/// A generator for `stream` (a worker, a purpose) derived from the run's one seed.
pub fn stream(seed: u64, stream: u64) -> WorkerRng {
    WorkerRng::seed_from_u64(mix(seed ^ mix(stream.wrapping_add(0x9E37_79B9_7F4A_7C15))))
}

/// splitmix64's finaliser: a bijective mix of 64 bits.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw in `0..n` (n > 0) with one multiplication; the bias is below 2^-32 for any
/// n a device can have.
#[inline]
pub fn below(rng: &mut WorkerRng, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// A draw in `0..n` from 32 random bits (Lemire's multiply-shift), for drawing two small
/// values from one `next_u64`; the bias is below n/2^32.
#[inline]
pub fn below32(bits: u32, n: u32) -> u32 {
    ((u64::from(bits) * u64::from(n)) >> 32) as u32
}

/// A uniform draw in `lo..=hi` (DVD Store's U[lo,hi]); `lo <= hi`.
#[inline]
pub fn between(rng: &mut WorkerRng, lo: u64, hi: u64) -> u64 {
    lo + below(rng, hi - lo + 1)
}

/// A uniform draw in [0, 1).
#[inline]
pub fn unit(rng: &mut WorkerRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Draws among weighted choices so that each one's count stays within one of its share of
/// the draws so far, in a random order. fio draws each request on its own, so a share wanders
/// by about the square root of the count (3.5 % reads over 5,000 requests: 7 % either way);
/// a mix from a trace (`io --like`) or a plan must come out as asked. Each choice but the
/// last is a yes/no draw (this one, or one after it) whose running deficit is compared with
/// a uniform draw: error diffusion, bounded to one request, with a random threshold so the
/// order stays random.
#[derive(Debug, Clone)]
pub struct ExactShares {
    steps: Vec<Step>,
}

#[derive(Debug, Clone)]
struct Step {
    /// This choice's weight, and that of it and every choice after it.
    weight: i64,
    of: u64,
    /// Its share of the draws that reached it less the yes it drew, in weight units.
    deficit: i64,
}

impl ExactShares {
    /// Choices `0..weights.len()` with these weights (at least one above 0).
    pub fn new(weights: &[u64]) -> ExactShares {
        let steps = (0..weights.len().saturating_sub(1)).map(|i| Step {
            weight: weights[i] as i64,
            of: weights[i..].iter().sum(),
            deficit: 0,
        });
        ExactShares { steps: steps.collect() }
    }

    /// The next choice.
    #[inline]
    pub fn draw(&mut self, rng: &mut WorkerRng) -> usize {
        for (i, s) in self.steps.iter_mut().enumerate() {
            if s.of == 0 {
                continue;
            }
            let yes = (below(rng, s.of) as i64) < s.deficit + s.weight;
            s.deficit += s.weight - if yes { s.of as i64 } else { 0 };
            if yes {
                return i;
            }
        }
        self.steps.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_stream_give_the_same_sequence_and_streams_differ() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = stream(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = stream(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..5)
            .map({
                let mut r = stream(7, 2);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn bounded_draws_stay_in_range_and_cover_it_evenly() {
        let mut r = stream(1, 0);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[below(&mut r, 10) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)), "{counts:?}");
    }

    #[test]
    fn exact_shares_keep_every_count_within_one_of_its_share_in_a_random_order() {
        let weights = [350u64, 6650, 3000];
        let mut shares = ExactShares::new(&weights);
        let mut rng = stream(7, 0);
        let mut counts = [0i64; 3];
        let mut first = Vec::new();
        for n in 1..=20_000i64 {
            let c = shares.draw(&mut rng);
            counts[c] += 1;
            if n <= 40 {
                first.push(c);
            }
            for (k, w) in weights.iter().enumerate() {
                let due = n * *w as i64 / 10_000;
                assert!((counts[k] - due).abs() <= 2, "after {n}: {counts:?}");
            }
        }
        assert_eq!(counts, [700, 13_300, 6_000]);
        // Not a fixed cycle: another seed draws another order with the same counts.
        let mut other = ExactShares::new(&weights);
        let mut rng = stream(8, 0);
        let again: Vec<usize> = (0..40).map(|_| other.draw(&mut rng)).collect();
        assert_ne!(first, again);
        // One choice, or a weight of 0, is never drawn wrong.
        let mut one = ExactShares::new(&[5]);
        assert!((0..100).all(|_| one.draw(&mut rng) == 0));
        let mut never = ExactShares::new(&[0, 1]);
        assert!((0..100).all(|_| never.draw(&mut rng) == 1));
    }
}
