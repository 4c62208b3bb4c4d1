//! Medians and per-round ratios.

/// Median, minimum and maximum of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

/// The summary of `xs`, or `None` when it is empty. NaNs are left out.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Summary {
        median,
        min: v[0],
        max: v[n - 1],
        count: n,
    })
}

/// Median of the samples that exist (`None` rounds are skipped).
pub fn median_of(samples: &[Option<f64>]) -> Option<f64> {
    let present: Vec<f64> = samples.iter().flatten().copied().collect();
    summarize(&present).map(|s| s.median)
}

/// `a[i] / b[i]` for every round where both sides have a sample: the two
/// samples of a round ran back to back, so drift cancels out.
pub fn round_ratios(a: &[Option<f64>], b: &[Option<f64>]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter_map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) if *y > 0.0 => Some(x / y),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_and_empty() {
        assert_eq!(summarize(&[3.0, 1.0, 2.0]).map(|s| s.median), Some(2.0));
        assert_eq!(
            summarize(&[4.0, 1.0, 2.0, 3.0]).map(|s| s.median),
            Some(2.5)
        );
        assert_eq!(summarize(&[]), None);
        assert_eq!(median_of(&[None, Some(5.0), None]), Some(5.0));
    }

    #[test]
    fn ratios_skip_missing_rounds() {
        let r = round_ratios(
            &[Some(2.0), None, Some(9.0)],
            &[Some(1.0), Some(1.0), Some(3.0)],
        );
        assert_eq!(r, vec![2.0, 3.0]);
    }
}
