//! A linear pairwise ranking SVM (the SVMrank objective, Joachims 2002/2006) solved by dual
//! coordinate descent (Hsieh, Chang, Lin, Keerthi, Sundararajan, ICML 2008, Algorithm 1 — the
//! L1-loss solver of liblinear, hence of scikit-learn's `LinearSVC(loss="hinge", dual=True)`).
//!
//! Primal: `min_w ½‖w‖² + C Σᵢ max(0, 1 − w·xᵢ)` where each xᵢ is the difference "better minus
//! worse" of two contexts of the same question; no bias (it cancels in differences).
//!
//! Why this solver: the primal is strictly convex, so the optimum w is unique and an exact
//! solver can be checked against liblinear weight by weight; dual CD converges linearly on
//! this problem, needs no step size, and is deterministic given the seeded coordinate order.

use super::super::stats::rng::SeededRng;

/// Pair difference vectors, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct PairwiseData {
    dim: usize,
    values: Vec<f64>,
}

impl PairwiseData {
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            values: Vec::new(),
        }
    }

    /// Adds one difference vector (must yield exactly `dim` values; extra are dropped, missing
    /// are zero).
    pub fn push(&mut self, row: impl IntoIterator<Item = f64>) {
        let start = self.values.len();
        self.values.extend(row.into_iter().take(self.dim));
        self.values.resize(start + self.dim, 0.0);
    }

    pub fn len(&self) -> usize {
        self.values.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.dim..(i + 1) * self.dim]
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SvmOptions {
    /// Regularisation trade-off C (> 0): weight of the hinge losses.
    pub c: f64,
    /// Stop when the projected-gradient spread (max − min over an epoch) falls below this.
    pub tolerance: f64,
    pub max_epochs: usize,
    /// Seeds the coordinate order of each epoch.
    pub seed: u64,
}

impl Default for SvmOptions {
    fn default() -> Self {
        Self {
            c: 1.0,
            tolerance: 1e-6,
            max_epochs: 10_000,
            seed: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SvmSolution {
    pub weights: Vec<f64>,
    /// Primal objective at `weights`.
    pub objective: f64,
    pub epochs: usize,
    pub converged: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Primal objective ½‖w‖² + C Σ max(0, 1 − w·xᵢ).
pub fn objective(data: &PairwiseData, weights: &[f64], c: f64) -> f64 {
    let hinge: f64 = (0..data.len())
        .map(|i| (1.0 - dot(weights, data.row(i))).max(0.0))
        .sum();
    0.5 * dot(weights, weights) + c * hinge
}

/// Solves the primal above by dual coordinate descent (see the module documentation).
pub fn train_pairwise(data: &PairwiseData, options: &SvmOptions) -> SvmSolution {
    let n = data.len();
    let c = options.c;
    let mut w = vec![0.0; data.dim()];
    let mut alpha = vec![0.0; n];
    let diagonal: Vec<f64> = (0..n).map(|i| dot(data.row(i), data.row(i))).collect();
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = SeededRng::new(options.seed);
    let mut converged = false;
    let mut epochs = 0;
    while epochs < options.max_epochs {
        epochs += 1;
        rng.shuffle(&mut order);
        let (mut max_pg, mut min_pg) = (f64::NEG_INFINITY, f64::INFINITY);
        for &i in &order {
            // A zero difference (two contexts with identical features) cannot be ordered; its
            // hinge loss is the constant C·1 whatever w is.
            if diagonal[i] == 0.0 {
                continue;
            }
            let x = data.row(i);
            let g = dot(&w, x) - 1.0;
            let pg = if alpha[i] == 0.0 {
                g.min(0.0)
            } else if alpha[i] == c {
                g.max(0.0)
            } else {
                g
            };
            max_pg = max_pg.max(pg);
            min_pg = min_pg.min(pg);
            if pg != 0.0 {
                let old = alpha[i];
                alpha[i] = (old - g / diagonal[i]).clamp(0.0, c);
                let step = alpha[i] - old;
                for (wj, xj) in w.iter_mut().zip(x) {
                    *wj += step * xj;
                }
            }
        }
        if max_pg - min_pg < options.tolerance || max_pg == f64::NEG_INFINITY {
            converged = true;
            break;
        }
    }
    SvmSolution {
        objective: objective(data, &w, c),
        weights: w,
        epochs,
        converged,
    }
}
