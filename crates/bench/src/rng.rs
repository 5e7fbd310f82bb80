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
}
