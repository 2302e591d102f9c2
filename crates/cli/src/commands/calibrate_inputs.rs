//! What `ragscope calibrate` reads besides qrels and runs: the sampling-design marker in the
//! human qrels and the `--weights` file.

use std::collections::HashMap;

/// How the human labels were sampled, from a comment line in the human qrels:
/// `# ragscope-sample: random | stratified | disagreements-first` (no line: random).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Design {
    Random,
    /// Inclusion probabilities differ by stratum: the estimate needs `--weights`.
    Stratified,
    /// Items labelled first because judges disagreed on them: not a random sample of anything, so no
    /// interval computed from it is valid.
    DisagreementsFirst,
}

impl Design {
    pub fn name(self) -> &'static str {
        match self {
            Design::Random => "random",
            Design::Stratified => "stratified",
            Design::DisagreementsFirst => "disagreements-first",
        }
    }
}

const MARKER: &str = "ragscope-sample:";

/// Finds the design marker among the comment lines of `text` (the human qrels); `None` when
/// there is none.
pub fn design(path: &str, text: &str) -> Result<Option<Design>, String> {
    let mut found = None;
    for (i, line) in text.lines().enumerate() {
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(value) = comment.trim().strip_prefix(MARKER) else {
            continue;
        };
        let design = match value.trim() {
            "random" => Design::Random,
            "stratified" => Design::Stratified,
            "disagreements-first" => Design::DisagreementsFirst,
            other => {
                return Err(format!(
                    "{path}:{}: unknown sample design {other:?} (expected random, stratified or \
                     disagreements-first)",
                    i + 1
                ))
            }
        };
        if found.is_some_and(|d| d != design) {
            return Err(format!(
                "{path}:{}: a second, different `# {MARKER}` line",
                i + 1
            ));
        }
        found = Some(design);
    }
    Ok(found)
}

/// Inclusion weights by unit id: `qid docno weight` lines (item units) or `qid weight` lines
/// (query units); `#` comments and blank lines skipped. A weight is 1/(the unit's probability
/// of having been labelled): positive and finite.
pub fn weights(path: &str, text: &str, item: bool) -> Result<HashMap<String, f64>, String> {
    let fields_wanted = if item { 3 } else { 2 };
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != fields_wanted {
            return Err(format!(
                "{path}:{line_no}: expected {fields_wanted} fields ({}), found {}",
                if item {
                    "qid docno weight"
                } else {
                    "qid weight"
                },
                fields.len()
            ));
        }
        let (id, weight) = fields.split_at(fields_wanted - 1);
        let weight: f64 = weight[0]
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w > 0.0)
            .ok_or_else(|| {
                format!(
                    "{path}:{line_no}: weight {:?} is not a positive finite number",
                    weight[0]
                )
            })?;
        if out.insert(id.join(" "), weight).is_some() {
            return Err(format!(
                "{path}:{line_no}: a second weight for {:?}",
                id.join(" ")
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_marker() {
        assert_eq!(design("h", "1 0 d 1\n"), Ok(None));
        assert_eq!(
            design("h", "# ragscope-sample: disagreements-first\n1 0 d 1\n"),
            Ok(Some(Design::DisagreementsFirst))
        );
        let e = design("h", "#x\n# ragscope-sample: biased\n").unwrap_err();
        assert!(e.starts_with("h:2: unknown sample design"), "{e}");
    }

    #[test]
    fn weights_file() {
        let w = weights("w", "# c\nq1 d1 2.5\n\nq2 d9 4\n", true).unwrap();
        assert_eq!(w.get("q1 d1"), Some(&2.5));
        assert_eq!(w.get("q2 d9"), Some(&4.0));
        assert!(weights("w", "q1 d1 0\n", true)
            .unwrap_err()
            .starts_with("w:1: weight \"0\""));
        assert!(weights("w", "q1 2\nq1 d 3\n", false)
            .unwrap_err()
            .starts_with("w:2: expected 2 fields"));
    }
}
