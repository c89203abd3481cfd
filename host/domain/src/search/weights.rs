//! Named weight tables: how a search adds up what it knows about a
//! candidate. A table lists features (each tool's own enum) with the weight
//! each adds when it holds; the score is the weighted sum, taken in table
//! order so that a table written out term by term scores the same bits.
//! A setting that tunes one weight replaces that entry ([`Weights::with`]);
//! a new signal is one more entry in each table that should use it.

/// A feature's weight in a score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weight<F> {
    pub feature: F,
    pub weight: f64,
}

/// Shorthand for a table entry.
pub const fn w<F>(feature: F, weight: f64) -> Weight<F> {
    Weight { feature, weight }
}

/// A table of `N` weighted features.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights<F, const N: usize>(pub [Weight<F>; N]);

impl<F: Copy + PartialEq, const N: usize> Weights<F, N> {
    /// The weighted sum of the features' values, in table order
    /// (`value` gives 0..1, or 0/1 for a feature that holds or not).
    pub fn score(&self, value: impl Fn(F) -> f64) -> f64 {
        self.0
            .iter()
            .fold(0.0, |sum, t| sum + t.weight * value(t.feature))
    }

    /// The table with `feature`'s weight set to `weight` (a setting).
    pub fn with(mut self, feature: F, weight: f64) -> Self {
        for t in &mut self.0 {
            if t.feature == feature {
                t.weight = weight;
            }
        }
        self
    }

    /// `feature`'s weight (0 when the table does not list it).
    pub fn weight(&self, feature: F) -> f64 {
        self.0
            .iter()
            .find(|t| t.feature == feature)
            .map_or(0.0, |t| t.weight)
    }
}

/// 1 when `b` holds, else 0: the value of a yes/no feature.
pub fn flag(b: bool) -> f64 {
    f64::from(u8::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum F {
        A,
        B,
        C,
    }

    const T: Weights<F, 3> = Weights([w(F::A, 0.5), w(F::B, 0.3), w(F::C, 0.2)]);

    #[test]
    fn a_table_scores_as_its_terms_written_out() {
        let v = |f| match f {
            F::A => 0.37,
            F::B => 0.81,
            F::C => 1.0,
        };
        let by_hand: f64 = 0.5 * 0.37 + 0.3 * 0.81 + 0.2 * 1.0;
        assert_eq!(T.score(v).to_bits(), by_hand.to_bits());
    }

    #[test]
    fn a_setting_replaces_one_weight_and_only_it() {
        let t = T.with(F::B, 0.9);
        assert_eq!(t.weight(F::B), 0.9);
        assert_eq!(t.weight(F::A), 0.5);
        assert_eq!(t.weight(F::C), 0.2);
    }

    #[test]
    fn a_feature_the_table_lacks_weighs_nothing() {
        let t = Weights([w(F::A, 1.0)]);
        assert_eq!(t.weight(F::C), 0.0);
        assert_eq!(t.score(|_| 1.0), 1.0);
    }
}
