//! Stage 3 of a search: a late scorer's scores for the best candidates
//! blended into their first score.

/// A candidate a late scorer can rescore.
pub trait Blend {
    /// Its first-stage score, before any late scorer.
    fn base(&self) -> f64;
    /// Set its score; `scored` says whether the late scorer saw it.
    fn rescore(&mut self, score: f64, scored: bool);
}

/// Give the first `scores.len()` candidates `base + weight × score` (each
/// score clamped to 0..1) and every other one its base again, so that a
/// second blend replaces the first instead of adding to it.
pub fn blend<C: Blend>(cands: &mut [C], scores: &[f64], weight: f64) {
    for (i, c) in cands.iter_mut().enumerate() {
        match scores.get(i) {
            Some(s) => c.rescore(c.base() + weight * s.clamp(0.0, 1.0), true),
            None => c.rescore(c.base(), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct C {
        base: f64,
        score: f64,
        scored: bool,
    }

    impl Blend for C {
        fn base(&self) -> f64 {
            self.base
        }
        fn rescore(&mut self, score: f64, scored: bool) {
            (self.score, self.scored) = (score, scored);
        }
    }

    fn c(base: f64) -> C {
        C {
            base,
            score: base,
            scored: false,
        }
    }

    #[test]
    fn a_second_blend_replaces_the_first() {
        let mut cands = vec![c(1.0), c(0.5), c(0.2)];
        blend(&mut cands, &[0.4, 0.9, 0.1], 1.0);
        blend(&mut cands, &[0.3], 1.0);
        assert_eq!(cands[0].score, 1.3);
        assert!(cands[0].scored);
        assert_eq!(cands[1].score, 0.5);
        assert!(!cands[1].scored);
    }

    #[test]
    fn scores_out_of_range_are_clamped() {
        let mut cands = vec![c(0.0), c(0.0)];
        blend(&mut cands, &[7.0, -3.0], 0.5);
        assert_eq!(cands[0].score, 0.5);
        assert_eq!(cands[1].score, 0.0);
    }
}
