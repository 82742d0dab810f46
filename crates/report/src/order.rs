//! The order labels are shown in: task ids and policy names compare digit runs as numbers, so
//! T2 comes before T10 in every table and figure (issue 13), while the maps that hold them keep
//! their plain string keys.

use std::cmp::Ordering;

/// Compares `a` and `b` with runs of ASCII digits read as numbers (`T9_x` < `T10_y`); ties in
/// value (`T01` vs `T1`) and everything else fall back to plain string order.
pub fn natural(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let n = x.iter().take_while(|b| b.is_ascii_digit()).count();
                let m = y.iter().take_while(|b| b.is_ascii_digit()).count();
                let (p, q) = (trim_zeros(&x[..n]), trim_zeros(&y[..m]));
                let by_value = p.len().cmp(&q.len()).then_with(|| p.cmp(q));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                x = &x[n..];
                y = &y[m..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&b| b == b'0').count();
    &digits[zeros..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_sort_by_number() {
        let mut ids = vec![
            "T10_constrained_budget",
            "T2_multi_page",
            "T1_single_page",
            "T9_clean_ab",
            "T9_adaptive_adversary",
            "T3_duplicates",
        ];
        ids.sort_by(|a, b| natural(a, b));
        assert_eq!(
            ids,
            [
                "T1_single_page",
                "T2_multi_page",
                "T3_duplicates",
                "T9_adaptive_adversary",
                "T9_clean_ab",
                "T10_constrained_budget"
            ]
        );
        assert_eq!(natural("a", "a"), Ordering::Equal);
        assert_eq!(natural("T01", "T1"), "T01".cmp("T1"));
        assert_eq!(natural("x99999999999999999999999", "x2"), Ordering::Greater);
        assert_eq!(natural("", "a"), Ordering::Less);
    }
}
