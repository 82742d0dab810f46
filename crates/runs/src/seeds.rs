//! Seed sets as people write them (`0..19`, `0+20`, `0..<20`, `3`, `1,4,7`), parsed and written
//! back.
//!
//! One implementation for the command line, pre-registrations and the messages that quote a
//! seed set, so "0..19" and "0..<20" are the same set everywhere.

/// A seed set parsed from a flag (`"0..9".parse::<SeedSet>()`), sorted and without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSet(pub Vec<u64>);

impl std::str::FromStr for SeedSet {
    type Err = String;
    fn from_str(spec: &str) -> Result<SeedSet, String> {
        parse_seeds(spec)
            .map(SeedSet)
            .map_err(|why| format!("{why} (write e.g. 0..9, 0+10, '0..<10', 3 or 1,4,7)"))
    }
}

/// Most seeds one range may hold.
pub const MAX_RANGE: u64 = 1_000_000;

/// Parses a seed set: `A..B` (inclusive, as in "seeds 0..999"), `A..=B`, `A..<B` (exclusive),
/// `A+N` (the N seeds from A: `0+10` is `0..<10`, and needs no quoting in a shell, where an
/// unquoted `<` is a redirect), `N`, or a comma-separated mix. The result is sorted and without
/// repeats.
///
/// # Errors
/// A message saying what is wrong (the caller adds where the set came from).
pub fn parse_seeds(spec: &str) -> Result<Vec<u64>, String> {
    let mut out = std::collections::BTreeSet::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = parse_seed;
        if let Some((a, n)) = part.split_once('+') {
            let (a, n) = (num(a)?, num(n)?);
            if n == 0 {
                return Err("empty range".into());
            }
            if n > MAX_RANGE {
                return Err("more than a million seeds".into());
            }
            let end = a
                .checked_add(n - 1)
                .ok_or_else(|| format!("`{part}` runs past the largest seed"))?;
            out.extend(a..=end);
        } else if let Some((a, b)) = part.split_once("..") {
            let (b, inclusive) = match (b.strip_prefix('='), b.strip_prefix('<')) {
                (Some(b), _) => (b, true),
                (_, Some(b)) => (b, false),
                _ => (b, true),
            };
            let (a, b) = (num(a)?, num(b)?);
            let end = if inclusive {
                b
            } else {
                b.checked_sub(1).ok_or("empty range")?
            };
            if end < a {
                return Err("empty range".into());
            }
            if end - a >= MAX_RANGE {
                return Err("more than a million seeds".into());
            }
            out.extend(a..=end);
        } else {
            out.insert(num(part)?);
        }
    }
    if out.is_empty() {
        return Err("no seeds".into());
    }
    Ok(out.into_iter().collect())
}

/// Parses one seed: a whole number from 0 to 2⁶⁴ − 1 (`--seed`, and each bound of a seed set).
///
/// # Errors
/// What the text is instead, a negative number named as such.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    t.parse::<u64>().map_err(|_| {
        if t.strip_prefix('-')
            .is_some_and(|n| n.parse::<u64>().is_ok())
        {
            format!(
                "`{t}` is negative: a seed is a whole number from 0 to {}",
                u64::MAX
            )
        } else {
            format!(
                "`{t}` is not a seed: a seed is a whole number from 0 to {}",
                u64::MAX
            )
        }
    })
}

/// Writes a seed set back compactly: runs of consecutive seeds as inclusive ranges
/// (`0..19,25`); the empty set as `none`.
pub fn format_seeds(seeds: &[u64]) -> String {
    let mut sorted = seeds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if end == start {
            start.to_string()
        } else {
            format!("{start}..{end}")
        });
        i += 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_set_flag_says_how_to_write_one() {
        assert_eq!("0..<3".parse(), Ok(SeedSet(vec![0, 1, 2])));
        let e = "3..1".parse::<SeedSet>().unwrap_err();
        assert!(e.contains("0+10"), "{e}");
    }

    #[test]
    fn seed_sets_parse_and_print_back() {
        assert_eq!(parse_seeds("0..3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_seeds("0..<3"), Ok(vec![0, 1, 2]));
        assert_eq!(parse_seeds("5, 1..=2,5"), Ok(vec![1, 2, 5]));
        for bad in ["3..1", "x", "", "0..<0", "0..99999999"] {
            assert!(parse_seeds(bad).is_err(), "{bad}");
        }
        assert_eq!(format_seeds(&[3, 0, 1, 2, 7, 9, 10]), "0..3,7,9..10");
        assert_eq!(format_seeds(&[]), "none");
        let set = parse_seeds("0..19,25").unwrap_or_default();
        assert_eq!(parse_seeds(&format_seeds(&set)), Ok(set));
        assert_eq!(parse_seeds("0..<20"), parse_seeds("0..19"));
        // The shell-safe exclusive form: N seeds from A.
        assert_eq!(parse_seeds("0+20"), parse_seeds("0..19"));
        assert_eq!(parse_seeds("5+3,1"), Ok(vec![1, 5, 6, 7]));
        for bad in ["0+0", "x+2", "2+", "18446744073709551615+2", "0+1000001"] {
            assert!(parse_seeds(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_seeds("18446744073709551615+1"), Ok(vec![u64::MAX]));
    }
}
