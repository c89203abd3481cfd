//! How much of a harness's space one run covers. A sweep whose
//! thoroughness grows with its case count (the fault kind injected at each
//! write step, the interleavings of the race loops, the crash schedules)
//! draws that part from a seed: a test run takes the seeds of
//! `KURA_SOAK_SEEDS` and, without it, the one fixed seed that is CI's
//! budget; `just soak SEEDS=…` runs many. What a sweep must cover every
//! time (each step of each write) does not depend on the seed. A failure
//! names its seed, and `KURA_SOAK_SEEDS=<seed>` runs exactly it again.

/// CI's budget: this one seed, so that every run covers the same cases.
pub const CI_SEED: u64 = 1;

/// The seeds this run sweeps: `KURA_SOAK_SEEDS` as seeds separated by
/// commas or spaces, or ranges `A..B` (B left out) and `A..=B`.
pub fn seeds() -> Vec<u64> {
    match std::env::var("KURA_SOAK_SEEDS") {
        Ok(s) if !s.trim().is_empty() => parse(&s).unwrap_or_else(|e| {
            panic!("KURA_SOAK_SEEDS={s:?}: {e} (say e.g. `7`, `1,5,9` or `1..100`)")
        }),
        _ => vec![CI_SEED],
    }
}

fn parse(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
        let num = |n: &str| {
            n.trim()
                .parse::<u64>()
                .map_err(|_| format!("{n:?} is not a seed"))
        };
        if let Some((a, b)) = part.split_once("..=") {
            out.extend(num(a)?..=num(b)?);
        } else if let Some((a, b)) = part.split_once("..") {
            out.extend(num(a)?..num(b)?);
        } else {
            out.push(num(part)?);
        }
    }
    if out.is_empty() {
        return Err("no seed".into());
    }
    Ok(out)
}

/// One seed's draws, and how to name it in a failure.
pub struct Seed {
    pub seed: u64,
    pub rng: fastrand::Rng,
}

impl Seed {
    pub fn new(seed: u64) -> Seed {
        Seed {
            seed,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// Appended to a failure's message: how to run this very case again.
    pub fn again(&self) -> String {
        format!("seed {} (again: KURA_SOAK_SEEDS={})", self.seed, self.seed)
    }
}

/// [`seeds`], each with its generator.
pub fn each() -> impl Iterator<Item = Seed> {
    seeds().into_iter().map(Seed::new)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn seeds_are_lists_and_ranges() {
        assert_eq!(parse("7").unwrap(), [7]);
        assert_eq!(parse("1,5 9").unwrap(), [1, 5, 9]);
        assert_eq!(parse("3..6").unwrap(), [3, 4, 5]);
        assert_eq!(parse("3..=4,10").unwrap(), [3, 4, 10]);
        assert!(parse("x").is_err());
        assert!(parse(" , ").is_err());
    }
}
