//! `-Z`: per-topic means and standard deviations of a reference set of runs, used to
//! print each value as a z-score (trec_eval's get_zscores.c and convert_zscores.c).

use rustc_hash::FxHashMap;

use super::args::atof;
use super::TrecEvalError;
use crate::formats::ParseError;

/// What trec_eval prints for a value whose mean is missing from the z-score file.
pub const MISSING_ZSCORE_VALUE: f64 = -1_000_000.0;

/// (qid, measure value name) → (mean, stddev).
pub struct Zscores {
    table: FxHashMap<(String, String), (f64, f64)>,
}

impl Zscores {
    /// Parses lines of `qid measure mean stddev`.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Zscores, TrecEvalError> {
        let text = String::from_utf8_lossy(bytes);
        let mut table = FxHashMap::default();
        for (i, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split_ascii_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            if fields.len() != 4 {
                let err = ParseError {
                    file: name.to_string(),
                    line: i as u64 + 1,
                    column: 1,
                    text: line.to_string(),
                    kind: crate::formats::ParseErrorKind::WrongFieldCount {
                        expected: "4 fields (qid measure mean stddev)".to_string(),
                        found: fields.len(),
                    },
                };
                // trec_eval returns UNDEF from main here, i.e. exit status 255
                return Err(TrecEvalError::new(
                    format!("trec_eval.get_zscores: {err}\n"),
                    255,
                ));
            }
            table
                .entry((fields[0].to_string(), fields[1].to_string()))
                .or_insert((atof(fields[2]), atof(fields[3])));
        }
        Ok(Zscores { table })
    }

    /// The z-score of `value` for `qid` and the printed measure name `measure`.
    pub fn convert(&self, qid: &str, measure: &str, value: f64) -> f64 {
        match self.table.get(&(qid.to_string(), measure.to_string())) {
            None => MISSING_ZSCORE_VALUE,
            Some(&(mean, stddev)) if stddev != 0.0 => (value - mean) / stddev,
            Some(&(mean, _)) if value == mean => 0.0,
            Some(_) => MISSING_ZSCORE_VALUE,
        }
    }
}
