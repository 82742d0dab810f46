//! Two-factor variance decomposition (η²), e.g. scaffold level × model.
//!
//! Exists to say how much of the spread in scores is explained by each factor and by their
//! interaction: the paper's claim that "the scaffolding level travels with every number" is a
//! statement about η² of the scaffold factor.
//!
//! Sums of squares are **sequential (Type I), in the order A, then B given A, then A×B**:
//!
//! * `SS_A = Σₐ nₐ (ȳₐ − ȳ)²`
//! * `SS_B|A` = reduction in residual SS from adding B to a model with A (additive fit,
//!   solved exactly from the reduced normal equations)
//! * `SS_AB = Σ_cells n_ab (ȳ_ab − ȳ)² − SS_A − SS_B|A`
//! * `SS_res = Σ (y − ȳ_ab)²`, `SS_total = Σ (y − ȳ)²`
//!
//! For a balanced layout (every a×b cell present with the same count) these are the standard
//! two-way ANOVA sums of squares, `SS_B|A = Σ_b n_b (ȳ_b − ȳ)²`, and the order does not
//! matter. For unbalanced data the A/B split depends on the order: put the factor you want
//! credited first as A. Empty cells are allowed (the interaction then has fewer degrees of
//! freedom). Each η² is `SS_effect / SS_total`, and the four sum to 1.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Result, StatsError};
use crate::numeric::sequential_mean;

/// Relative size below which an elimination pivot is treated as zero (rank deficiency).
const PIVOT_TOLERANCE: f64 = 1e-12;

/// η² decomposition of a two-factor layout, with the sums of squares behind it.
///
/// Exists so a report shows both the shares and the raw sums of squares they come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EtaSquared {
    /// Number of observations.
    pub n: usize,
    /// Distinct levels of factor A.
    pub levels_a: usize,
    /// Distinct levels of factor B.
    pub levels_b: usize,
    /// Non-empty a×b cells.
    pub cells: usize,
    /// Whether every a×b cell is present with the same count.
    pub balanced: bool,
    /// Sum of squares of A.
    pub ss_a: f64,
    /// Sum of squares of B given A.
    pub ss_b: f64,
    /// Sum of squares of the A×B interaction.
    pub ss_interaction: f64,
    /// Residual (within-cell) sum of squares.
    pub ss_residual: f64,
    /// Total sum of squares about the grand mean.
    pub ss_total: f64,
    /// η² of A.
    pub eta_a: f64,
    /// η² of B (given A).
    pub eta_b: f64,
    /// η² of the interaction.
    pub eta_interaction: f64,
    /// Residual share.
    pub eta_residual: f64,
}

/// Two-factor η² of `(level of A, level of B, value)` observations (see module docs).
///
/// Exists as the variance decomposition behind "scaffold × model" tables. Levels are any
/// ordered keys (strings, enums, integers); their order does not affect the result.
///
/// # Errors
/// [`StatsError::Empty`]; `NonFinite` for a NaN/∞ value; `Overflow` if squared deviations
/// could overflow; [`StatsError::NoVariation`] if all values are equal.
pub fn two_way_eta_squared<A: Ord, B: Ord>(observations: &[(A, B, f64)]) -> Result<EtaSquared> {
    let values: Vec<f64> = observations.iter().map(|o| o.2).collect();
    crate::error::check_values(&values, "two-way layout")?;
    let max_abs = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if !((2.0 * max_abs) * (2.0 * max_abs) * values.len() as f64).is_finite() {
        return Err(StatsError::Overflow {
            what: "two-way layout",
        });
    }
    let grand = sequential_mean(&values);
    let centered: Vec<f64> = values.iter().map(|v| v - grand).collect();
    let ss_total: f64 = centered.iter().map(|d| d * d).sum();
    if ss_total <= 0.0 {
        return Err(StatsError::NoVariation {
            what: "two-way layout",
        });
    }

    let index_a = level_index(observations.iter().map(|o| &o.0));
    let index_b = level_index(observations.iter().map(|o| &o.1));
    let (na, nb) = (index_a.len(), index_b.len());
    // Counts and centred totals per a, per b and per cell.
    let mut count = vec![vec![0usize; nb]; na];
    let mut total = vec![vec![0.0_f64; nb]; na];
    for (o, &y) in observations.iter().zip(&centered) {
        let (Some(&i), Some(&j)) = (index_a.get(&o.0), index_b.get(&o.1)) else {
            continue;
        };
        count[i][j] += 1;
        total[i][j] += y;
    }
    let count_a: Vec<f64> = count
        .iter()
        .map(|row| row.iter().sum::<usize>() as f64)
        .collect();
    let total_a: Vec<f64> = total.iter().map(|row| row.iter().sum()).collect();
    let count_b: Vec<f64> = (0..nb)
        .map(|j| count.iter().map(|row| row[j]).sum::<usize>() as f64)
        .collect();
    let total_b: Vec<f64> = (0..nb)
        .map(|j| total.iter().map(|row| row[j]).sum())
        .collect();

    // Σ n (ȳ − ȳ_grand)² = Σ T² / n on centred totals.
    let ss_of = |t: &[f64], c: &[f64]| -> f64 {
        t.iter()
            .zip(c)
            .filter(|(_, c)| **c > 0.0)
            .map(|(t, c)| t * t / c)
            .sum()
    };
    let ss_a = ss_of(&total_a, &count_a);
    let cell_totals: Vec<f64> = total.iter().flatten().copied().collect();
    let cell_counts: Vec<f64> = count.iter().flatten().map(|&c| c as f64).collect();
    let ss_cells = ss_of(&cell_totals, &cell_counts);
    let ss_residual = observations
        .iter()
        .zip(&centered)
        .map(|(o, &y)| match (index_a.get(&o.0), index_b.get(&o.1)) {
            (Some(&i), Some(&j)) => {
                let d = y - total[i][j] / count[i][j] as f64;
                d * d
            }
            _ => 0.0,
        })
        .sum::<f64>();

    let first = count
        .first()
        .and_then(|row| row.first())
        .copied()
        .unwrap_or(0);
    let balanced = count.iter().flatten().all(|&c| c == first && c > 0);
    let ss_b = if balanced {
        ss_of(&total_b, &count_b)
    } else {
        ss_b_given_a(&count, &count_a, &total_a, &count_b, &total_b)
    }
    .clamp(0.0, (ss_cells - ss_a).max(0.0));
    let ss_interaction = (ss_cells - ss_a - ss_b).max(0.0);

    Ok(EtaSquared {
        n: values.len(),
        levels_a: na,
        levels_b: nb,
        cells: cell_counts.iter().filter(|&&c| c > 0.0).count(),
        balanced,
        ss_a,
        ss_b,
        ss_interaction,
        ss_residual,
        ss_total,
        eta_a: ss_a / ss_total,
        eta_b: ss_b / ss_total,
        eta_interaction: ss_interaction / ss_total,
        eta_residual: ss_residual / ss_total,
    })
}

/// Maps each distinct level to a dense index in key order.
fn level_index<'k, K: Ord + 'k>(keys: impl Iterator<Item = &'k K>) -> BTreeMap<&'k K, usize> {
    let mut map: BTreeMap<&K, usize> = keys.map(|k| (k, 0)).collect();
    for (i, v) in map.values_mut().enumerate() {
        *v = i;
    }
    map
}

/// `SS(B | A)` of the additive model, from the reduced normal equations `C β = q` with
/// `C_jk = δ_jk n_·j − Σₐ n_aj n_ak / n_a·` and `q_j = T_·j − Σₐ n_aj T_a· / n_a·`:
/// `SS(B | A) = βᵀ q`. `C` is symmetric positive semi-definite and the system is
/// consistent, so elimination that skips (near-)zero pivots yields a valid solution even
/// for disconnected designs.
// Rows `i` and `k` of the same matrix are read and written together; index loops are clearer.
#[allow(clippy::needless_range_loop)]
fn ss_b_given_a(
    count: &[Vec<usize>],
    count_a: &[f64],
    total_a: &[f64],
    count_b: &[f64],
    total_b: &[f64],
) -> f64 {
    let nb = count_b.len();
    let mut c = vec![vec![0.0_f64; nb]; nb];
    let mut q = total_b.to_vec();
    for (j, row) in c.iter_mut().enumerate() {
        row[j] = count_b[j];
    }
    for ((row, &na), &ta) in count.iter().zip(count_a).zip(total_a) {
        if na <= 0.0 {
            continue;
        }
        for j in 0..nb {
            let nj = row[j] as f64;
            if nj == 0.0 {
                continue;
            }
            q[j] -= nj * ta / na;
            for k in 0..nb {
                c[j][k] -= nj * row[k] as f64 / na;
            }
        }
    }
    let rhs = q.clone();
    let scale = count_b.iter().fold(0.0_f64, |m, &x| m.max(x));
    let tol = PIVOT_TOLERANCE * scale.max(1.0);
    let mut free = vec![false; nb];
    for k in 0..nb {
        let pivot = c[k][k];
        if pivot <= tol {
            free[k] = true;
            continue;
        }
        for i in (k + 1)..nb {
            let f = c[i][k] / pivot;
            if f == 0.0 {
                continue;
            }
            for j in k..nb {
                c[i][j] -= f * c[k][j];
            }
            q[i] -= f * q[k];
        }
    }
    let mut beta = vec![0.0_f64; nb];
    for k in (0..nb).rev() {
        if free[k] {
            continue;
        }
        let tail: f64 = ((k + 1)..nb).map(|j| c[k][j] * beta[j]).sum();
        beta[k] = (q[k] - tail) / c[k][k];
    }
    beta.iter().zip(&rhs).map(|(b, r)| b * r).sum()
}
