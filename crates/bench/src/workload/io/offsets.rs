//! Where each I/O goes: sequential, or random with a uniform, zipf, hot-spot or zoned
//! distribution, inside a worker's region and aligned to the smallest block size.

use crate::rng::{WorkerRng, below, unit};
use rand_distr::{Distribution as _, Zipf};

/// How random offsets are spread over the region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Rank-frequency zipf with exponent `theta` (> 0); hot blocks are scattered over the region.
    Zipf {
        theta: f64,
    },
    /// `io_pct` % of I/Os go to the first `space_pct` % of the region, the rest to the remainder.
    HotSpot {
        io_pct: u8,
        space_pct: u8,
    },
    /// fio's zoned: consecutive zones from the region's start, each taking its share of the
    /// I/Os over its share of the space; both in hundredths of a percent, each summing to
    /// 10000 over the zones. Inside a zone each unit is taken once, in a seeded random order,
    /// before any is taken again (fio's random map): a trace's blocks written once each stay
    /// once each, rather than a uniform draw's repeats and misses.
    Zoned(Zones),
}

/// The most zones a zoned distribution has.
pub const MAX_ZONES: usize = 8;

/// The zones of a zoned distribution: (I/O share, space share) each, hundredths of a percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zones {
    zones: [(u16, u16); MAX_ZONES],
    len: u8,
}

impl Zones {
    /// Zones from (I/O, space) shares in hundredths of a percent; why not: more than
    /// [`MAX_ZONES`], a zone with no I/O or no space, or shares that do not sum to 100 %.
    pub fn new(zones: &[(u16, u16)]) -> Result<Zones, String> {
        if zones.is_empty() || zones.len() > MAX_ZONES {
            return Err(format!("give 1 to {MAX_ZONES} zones"));
        }
        if zones.iter().any(|&(io, space)| io == 0 || space == 0) {
            return Err("each zone needs a share of the I/O and of the space above 0".into());
        }
        let sum = |f: fn(&(u16, u16)) -> u16| zones.iter().map(|z| u32::from(f(z))).sum::<u32>();
        if sum(|z| z.0) != 10_000 || sum(|z| z.1) != 10_000 {
            return Err("the zones' I/O shares and their space shares must each add up to 100".into());
        }
        let mut z = Zones { zones: [(0, 0); MAX_ZONES], len: zones.len() as u8 };
        z.zones[..zones.len()].copy_from_slice(zones);
        Ok(z)
    }

    pub fn zones(&self) -> &[(u16, u16)] {
        &self.zones[..self.len as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    Sequential,
    Random(Distribution),
}

/// A byte range of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
}

impl Region {
    /// One past its last byte.
    pub fn end(self) -> u64 {
        self.start + self.len
    }
}

enum Kind {
    Sequential { cursor: u64 },
    Uniform,
    Zipf { dist: Zipf<f64>, multiplier: u64 },
    HotSpot { hot_units: u64, hot_prob: f64 },
    Zoned { zones: Vec<Zone> },
}

/// Draws offsets for one worker.
pub struct OffsetGen {
    region: Region,
    align: u64,
    units: u64,
    kind: Kind,
}

impl OffsetGen {
    /// `align` is the smallest block size; the region holds at least one largest block (the
    /// caller validated that).
    pub fn new(pattern: Pattern, region: Region, align: u32) -> Self {
        let align = align as u64;
        let units = (region.len / align).max(1);
        let kind = match pattern {
            Pattern::Sequential => Kind::Sequential { cursor: 0 },
            Pattern::Random(Distribution::Uniform) => Kind::Uniform,
            Pattern::Random(Distribution::Zipf { theta }) => Kind::Zipf {
                dist: Zipf::new(units as f64, theta).expect("theta validated > 0"),
                multiplier: coprime_multiplier(units),
            },
            Pattern::Random(Distribution::HotSpot { io_pct, space_pct }) => Kind::HotSpot {
                hot_units: (units * space_pct as u64 / 100).max(1),
                hot_prob: io_pct as f64 / 100.0,
            },
            Pattern::Random(Distribution::Zoned(z)) => Kind::Zoned {
                zones: z
                    .zones()
                    .iter()
                    .scan((0u64, 0u64), |(io, space), &(i, s)| {
                        let first = units * *space / 10_000;
                        (*io, *space) = (*io + u64::from(i), *space + u64::from(s));
                        let end = units * *space / 10_000;
                        Some(Zone { io_upto: *io, first, walk: Walk::over(end.saturating_sub(first).max(1)) })
                    })
                    .collect(),
            },
        };
        OffsetGen { region, align, units, kind }
    }

    /// The next offset for an I/O of `len` bytes.
    #[inline]
    pub fn next(&mut self, rng: &mut WorkerRng, len: u32) -> u64 {
        let last_unit = (self.region.len - len as u64) / self.align;
        let unit = match &mut self.kind {
            Kind::Sequential { cursor } => next_sequential(cursor, len as u64, self.align, last_unit),
            Kind::Uniform => below(rng, last_unit + 1),
            Kind::Zipf { dist, multiplier } => {
                let rank = dist.sample(rng) as u64 - 1;
                (rank.wrapping_mul(*multiplier).wrapping_add(self.units / 3) % self.units) % (last_unit + 1)
            }
            Kind::HotSpot { hot_units, hot_prob } => hot_spot(rng, *hot_units, *hot_prob, last_unit),
            Kind::Zoned { zones } => zoned(rng, zones, last_unit),
        };
        self.region.start + unit * self.align
    }
}

fn next_sequential(cursor: &mut u64, len: u64, align: u64, last_unit: u64) -> u64 {
    if *cursor > last_unit {
        *cursor = 0;
    }
    let unit = *cursor;
    *cursor += len.div_ceil(align);
    unit
}

fn hot_spot(rng: &mut WorkerRng, hot_units: u64, hot_prob: f64, last_unit: u64) -> u64 {
    let hot = hot_units.min(last_unit + 1);
    if unit(rng) < hot_prob || hot > last_unit {
        below(rng, hot)
    } else {
        hot + below(rng, last_unit + 1 - hot)
    }
}

/// One zone of a zoned distribution: the I/O share up to and including it (of 10000), its
/// first unit and the walk over its units.
struct Zone {
    io_upto: u64,
    first: u64,
    walk: Walk,
}

/// Every number below `n` once, in a seeded random order, then again in the same order: a
/// full-period linear congruential sequence modulo the power of two at or above `n` (Hull and
/// Dobell: an odd increment and a multiplier one above a multiple of four), the numbers at or
/// above `n` passed over. Its constants come from the worker's generator at the first step.
struct Walk {
    n: u64,
    mask: u64,
    at: u64,
    steps: Option<(u64, u64)>,
}

impl Walk {
    fn over(n: u64) -> Walk {
        Walk { n, mask: n.next_power_of_two() - 1, at: 0, steps: None }
    }

    fn next(&mut self, rng: &mut WorkerRng) -> u64 {
        let (a, c) = *self.steps.get_or_insert_with(|| {
            self.at = below(rng, self.mask + 1);
            ((below(rng, self.mask + 1) << 2) | 1, below(rng, self.mask + 1) | 1)
        });
        loop {
            self.at = self.at.wrapping_mul(a).wrapping_add(c) & self.mask;
            if self.at < self.n {
                return self.at;
            }
        }
    }
}

fn zoned(rng: &mut WorkerRng, zones: &mut [Zone], last_unit: u64) -> u64 {
    let draw = below(rng, 10_000);
    let at = zones.iter().position(|z| draw < z.io_upto).unwrap_or(zones.len() - 1);
    let zone = &mut zones[at];
    (zone.first + zone.walk.next(rng)).min(last_unit)
}

/// A multiplier coprime to `n`, so that rank * m mod n visits every unit once: hot zipf ranks
/// land all over the region instead of at its start (the hottest one a third of the way in).
fn coprime_multiplier(n: u64) -> u64 {
    let mut m = (n / 2 + n / 7 + 1) | 1;
    while gcd(m, n) != 1 {
        m += 2;
    }
    m % n.max(1)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    const MIB: u64 = 1 << 20;

    #[test]
    fn sequential_offsets_follow_each_other_and_wrap_at_the_end_of_the_region() {
        let mut g = OffsetGen::new(Pattern::Sequential, Region { start: MIB, len: 64 * 1024 }, 4096);
        let mut rng = stream(1, 0);
        let offs: Vec<u64> = (0..18).map(|_| g.next(&mut rng, 4096)).collect();
        assert_eq!(offs[0], MIB);
        assert_eq!(offs[1], MIB + 4096);
        assert_eq!(offs[15], MIB + 15 * 4096);
        assert_eq!(offs[16], MIB, "wraps after 16 blocks");
    }

    #[test]
    fn uniform_offsets_are_aligned_in_range_and_repeatable_from_the_seed() {
        let region = Region { start: 0, len: 100 * MIB };
        let draw = |seed| {
            let mut g = OffsetGen::new(Pattern::Random(Distribution::Uniform), region, 4096);
            let mut rng = stream(seed, 3);
            (0..10_000).map(|_| g.next(&mut rng, 65536)).collect::<Vec<_>>()
        };
        let a = draw(9);
        assert_eq!(a, draw(9));
        assert_ne!(a, draw(10));
        assert!(a.iter().all(|o| o % 4096 == 0 && o + 65536 <= region.len));
        let upper_half = a.iter().filter(|&&o| o >= region.len / 2).count();
        assert!((4_800..5_200).contains(&upper_half), "{upper_half}");
    }

    #[test]
    fn a_hot_spot_gets_its_share_of_the_io() {
        let region = Region { start: 0, len: 1000 * 4096 };
        let pattern = Pattern::Random(Distribution::HotSpot { io_pct: 90, space_pct: 10 });
        let mut g = OffsetGen::new(pattern, region, 4096);
        let mut rng = stream(5, 0);
        let hot = (0..100_000).filter(|_| g.next(&mut rng, 4096) < 100 * 4096).count();
        assert!((89_000..91_000).contains(&hot), "{hot}");
    }

    #[test]
    fn each_zone_gets_its_share_of_the_io_over_its_share_of_the_space() {
        let region = Region { start: 0, len: 1000 * 4096 };
        let zones = Zones::new(&[(5000, 1000), (4000, 3000), (1000, 6000)]).unwrap();
        let mut g = OffsetGen::new(Pattern::Random(Distribution::Zoned(zones)), region, 4096);
        let mut rng = stream(5, 0);
        let mut per_zone = [0u32; 3];
        for _ in 0..100_000 {
            let unit = g.next(&mut rng, 4096) / 4096;
            per_zone[usize::from(unit >= 100) + usize::from(unit >= 400)] += 1;
        }
        for (got, want) in per_zone.iter().zip([50_000, 40_000, 10_000]) {
            assert!(got.abs_diff(want) < 1_000, "{per_zone:?}");
        }
        // Inside a zone, every unit once before any twice.
        let mut walk = Walk::over(1000);
        let mut once: Vec<u64> = (0..1000).map(|_| walk.next(&mut rng)).collect();
        let again: Vec<u64> = (0..1000).map(|_| walk.next(&mut rng)).collect();
        assert_eq!(once, again, "the same order again");
        assert_ne!(once[..10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        once.sort_unstable();
        assert_eq!(once, (0..1000).collect::<Vec<_>>());
        assert!(Zones::new(&[(5000, 5000), (4000, 5000)]).unwrap_err().contains("add up to 100"));
        assert!(Zones::new(&[(10_000, 0), (0, 10_000)]).unwrap_err().contains("above 0"));
    }

    #[test]
    fn zipf_concentrates_on_few_blocks_as_theta_predicts() {
        let units = 1000u64;
        let theta = 1.2;
        let region = Region { start: 0, len: units * 4096 };
        let mut g = OffsetGen::new(Pattern::Random(Distribution::Zipf { theta }), region, 4096);
        let mut rng = stream(11, 0);
        let mut counts = vec![0u32; units as usize];
        let n = 200_000;
        for _ in 0..n {
            counts[(g.next(&mut rng, 4096) / 4096) as usize] += 1;
        }
        let harmonic: f64 = (1..=units).map(|k| (k as f64).powf(-theta)).sum();
        let expected_top = n as f64 / harmonic;
        let top = *counts.iter().max().unwrap() as f64;
        assert!((top - expected_top).abs() / expected_top < 0.03, "top {top}, expected {expected_top}");
        assert_ne!(counts.iter().position(|&c| c as f64 == top), Some(0), "hot block is scattered");
    }

    #[test]
    fn the_coprime_multiplier_permutes_every_unit() {
        for n in [1u64, 2, 10, 1000, 4096, 999_983] {
            let m = coprime_multiplier(n);
            assert_eq!(gcd(m.max(1), n), 1, "n={n} m={m}");
        }
    }
}
