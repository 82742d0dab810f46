//! Coverage, the L1 outcome: the share of G among the rows the harness accepted. It is blind
//! to duplicates and totals by construction (they are deduplicated and filtered before it).

use benchaudit_comtrade::Generator;

/// |distinct canonical ids among accepted rows| / |G|. `accepted` are canonical indices;
/// out-of-range indices are ignored.
pub fn coverage(generator: &Generator, accepted: impl IntoIterator<Item = u32>) -> f64 {
    let total = generator.task().total_rows;
    let mut seen = vec![false; total as usize];
    let mut unique = 0u32;
    for i in accepted {
        if let Some(slot) = seen.get_mut(i as usize)
            && !std::mem::replace(slot, true)
        {
            unique += 1;
        }
    }
    f64::from(unique) / f64::from(total.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchaudit_comtrade::task;

    #[test]
    fn counts_distinct_canonical_rows() {
        let g = Generator::new(task("T3_duplicates").expect("registry"), 0);
        assert_eq!(coverage(&g, [0, 0, 1, 99]), 2.0 / 25.0);
        assert_eq!(coverage(&g, 0..25), 1.0);
        assert_eq!(coverage(&g, []), 0.0);
    }
}
