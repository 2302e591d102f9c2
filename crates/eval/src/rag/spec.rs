//! Measure names such as `UDCG@5`, `UDCG(gamma=0.333)@5` or `UDCG(gain=binary,compat=udcg-ref)`,
//! and the per-query kernel the trec_eval-style registry calls with a ranked list of docnos.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use super::udcg::{udcg_of_context, Convention, Gain, UdcgParams, PAPER_GAMMA, REFERENCE_GAMMA};
use super::utility::Judgment;

/// A parsed UDCG measure name: parameters plus an optional cutoff (`None` = whole list).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UdcgSpec {
    pub params: UdcgParams,
    pub k: Option<usize>,
}

/// Result of the per-query kernel; `unjudged` lets callers report docnos without a judgment
/// instead of silently scoring them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryUdcg {
    pub value: f64,
    pub unjudged: usize,
}

impl UdcgSpec {
    /// UDCG of one ranked list (docnos in rank order) against the judgments of its query.
    /// Unjudged docnos contribute utility 0 and are counted in `unjudged` (paper convention) or
    /// skipped but counted in the denominator (reference convention, like its missing scores).
    pub fn score_ranking<S: AsRef<str>>(
        &self,
        ranked_docnos: &[S],
        judgments: &HashMap<String, Judgment>,
    ) -> QueryUdcg {
        let cut = self
            .k
            .unwrap_or(ranked_docnos.len())
            .min(ranked_docnos.len());
        let mut unjudged = 0;
        // A short stack buffer keeps the common k ≤ 32 case allocation-free.
        let mut stack = [None; 32];
        let mut heap = Vec::new();
        let slots: &mut [Option<Judgment>] = if cut <= stack.len() {
            &mut stack[..cut]
        } else {
            heap.resize(cut, None);
            &mut heap
        };
        for (slot, docno) in slots.iter_mut().zip(ranked_docnos) {
            *slot = judgments.get(docno.as_ref()).copied();
            if slot.is_none() {
                unjudged += 1;
            }
        }
        let value = udcg_of_context(slots, Some(self.k.unwrap_or(cut)), &self.params);
        QueryUdcg { value, unjudged }
    }
}

/// Error of [`UdcgSpec::from_str`], with the offending part of the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad UDCG measure name: {}", self.0)
    }
}

impl std::error::Error for SpecError {}

impl FromStr for UdcgSpec {
    type Err = SpecError;

    /// Grammar: `UDCG[(key=value,...)][@k]`, keys `gamma` (in [0,1]), `gain` (`utility` |
    /// `binary`), `compat` (`udcg-ref`, which also switches the default γ to 0.333).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let rest = name
            .strip_prefix("UDCG")
            .ok_or_else(|| SpecError(format!("{name:?} does not start with UDCG")))?;
        let (args, cutoff) = match rest.split_once('@') {
            Some((a, c)) => (a, Some(c)),
            None => (rest, None),
        };
        let mut spec = UdcgSpec::default();
        let mut gamma = None;
        if !args.is_empty() {
            let inner = args
                .strip_prefix('(')
                .and_then(|a| a.strip_suffix(')'))
                .ok_or_else(|| SpecError(format!("{args:?}: parameters go in parentheses")))?;
            for pair in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (key, value) = pair
                    .split_once('=')
                    .ok_or_else(|| SpecError(format!("{pair:?} is not key=value")))?;
                match (key.trim(), value.trim()) {
                    ("gamma", v) => {
                        let g: f64 = v
                            .parse()
                            .map_err(|_| SpecError(format!("gamma {v:?} is not a number")))?;
                        if !(0.0..=1.0).contains(&g) {
                            return Err(SpecError(format!("gamma {v} is outside [0, 1]")));
                        }
                        gamma = Some(g);
                    }
                    ("gain", "utility") => spec.params.gain = Gain::Utility,
                    ("gain", "binary") => spec.params.gain = Gain::Binary,
                    ("compat", "udcg-ref") => spec.params.convention = Convention::Reference,
                    ("compat", "paper") => spec.params.convention = Convention::Paper,
                    (k, v) => return Err(SpecError(format!("unknown parameter {k}={v}"))),
                }
            }
        }
        spec.params.gamma = gamma.unwrap_or(match spec.params.convention {
            Convention::Paper => PAPER_GAMMA,
            Convention::Reference => REFERENCE_GAMMA,
        });
        if let Some(c) = cutoff {
            let k: usize = c
                .parse()
                .map_err(|_| SpecError(format!("cutoff {c:?} is not a positive integer")))?;
            if k == 0 {
                return Err(SpecError("cutoff must be at least 1".into()));
            }
            spec.k = Some(k);
        }
        Ok(spec)
    }
}

impl fmt::Display for UdcgSpec {
    /// Prints the shortest name that parses back to the same spec (defaults omitted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default_gamma = match self.params.convention {
            Convention::Paper => PAPER_GAMMA,
            Convention::Reference => REFERENCE_GAMMA,
        };
        let mut parts = Vec::new();
        if self.params.gamma != default_gamma {
            parts.push(format!("gamma={}", self.params.gamma));
        }
        if self.params.gain == Gain::Binary {
            parts.push("gain=binary".to_string());
        }
        if self.params.convention == Convention::Reference {
            parts.push("compat=udcg-ref".to_string());
        }
        write!(f, "UDCG")?;
        if !parts.is_empty() {
            write!(f, "({})", parts.join(","))?;
        }
        if let Some(k) = self.k {
            write!(f, "@{k}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "UDCG",
            "UDCG@5",
            "UDCG(gamma=0.333)@5",
            "UDCG(gamma=0)@10",
            "UDCG(gain=binary)",
            "UDCG(compat=udcg-ref)@5",
        ] {
            let spec: UdcgSpec = name.parse().unwrap();
            assert_eq!(spec.to_string(), name);
        }
        let s: UdcgSpec = "UDCG(gamma=0.333)@5".parse().unwrap();
        assert_eq!(s.params.gamma, 0.333);
        assert_eq!(s.k, Some(5));
    }

    #[test]
    fn bad_names_are_errors() {
        for name in [
            "NDCG",
            "UDCG@0",
            "UDCG@x",
            "UDCG(gamma=2)",
            "UDCG(foo=1)",
            "UDCGgamma",
        ] {
            assert!(name.parse::<UdcgSpec>().is_err(), "{name}");
        }
    }
}
