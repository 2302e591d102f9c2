//! Passage judgments as whitespace-separated text, one row per judged passage (and model):
//!
//! ```text
//! qid docno relevant no_res_prob [model]     # relevant: 1/0 or true/false
//! qid docno utility                          # derived form, u = R·(1 − p) ∈ [−1, 1]
//! ```
//!
//! The optional 5th column names the reader LLM whose p(NO-RESPONSE) the row holds; rows
//! without it apply to every model. A first line starting with `qid` is a header. A file uses
//! one form throughout. In the derived form R = +1 when u > 0 (u = 0 reads as non-relevant with
//! p = 1: both labels give utility 0, only binary metrics can tell them apart).

use std::collections::HashMap;
use std::fmt::Write as _;

use indexmap::IndexMap;

use super::error::{excerpt, InputError};
use super::utility::{check_probability, Judgment};

/// What is known about one passage of one question (for one model).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassageInfo {
    pub judgment: Judgment,
    /// eRAG's downstream score of the answer generated from this passage alone, in [0, 1].
    pub erag: Option<f64>,
}

/// Judgments keyed by (model, qid) then docno; model "" holds rows without a model column.
#[derive(Debug, Clone, Default)]
pub struct Utilities {
    pub entries: HashMap<(String, String), IndexMap<String, PassageInfo>>,
}

impl Utilities {
    /// Judgments of one question for one model, falling back to model-less rows.
    pub fn question(&self, model: &str, qid: &str) -> Option<&IndexMap<String, PassageInfo>> {
        self.entries
            .get(&(model.to_string(), qid.to_string()))
            .or_else(|| self.entries.get(&(String::new(), qid.to_string())))
    }
}

/// Reads either form of the utilities file.
pub fn parse(file: &str, text: &str) -> Result<Utilities, InputError> {
    let mut utilities = Utilities::default();
    let mut columns_seen: Option<(usize, usize)> = None;
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || (index == 0 && fields[0] == "qid") {
            continue;
        }
        let err = |field: &str, message: String| InputError::new(file, line_no, 0, field, message);
        let width = fields.len();
        if !(3..=5).contains(&width) {
            return Err(err(
                "",
                format!(
                    "expected 3, 4 or 5 columns (qid docno utility | qid docno relevant \
                     no_res_prob [model]), found {width} in {:?}",
                    excerpt(line)
                ),
            ));
        }
        match columns_seen {
            None => columns_seen = Some((width.min(4), line_no)),
            Some((w, first)) if (w == 3) != (width == 3) => {
                return Err(err(
                    "",
                    format!("mixes the 3-column form with the 4/5-column form of line {first}"),
                ))
            }
            _ => {}
        }
        let (qid, docno) = (fields[0], fields[1]);
        let (judgment, model) = if width == 3 {
            let u = parse_number(fields[2]).map_err(|m| err("utility", m))?;
            if !(-1.0..=1.0).contains(&u) {
                return Err(err(
                    "utility",
                    format!("utility must be in [-1, 1], got {u}"),
                ));
            }
            let judgment = Judgment {
                relevant: u > 0.0,
                p_no_response: 1.0 - u.abs(),
            };
            (judgment, "")
        } else {
            let relevant = match fields[2] {
                "1" | "true" | "True" => true,
                "0" | "false" | "False" => false,
                other => {
                    return Err(err(
                        "relevant",
                        format!("expected 1/0 or true/false, got {:?}", excerpt(other)),
                    ))
                }
            };
            let p = parse_number(fields[3])
                .and_then(check_probability)
                .map_err(|m| err("no_res_prob", m))?;
            let judgment = Judgment {
                relevant,
                p_no_response: p,
            };
            (judgment, fields.get(4).copied().unwrap_or(""))
        };
        let question = utilities
            .entries
            .entry((model.to_string(), qid.to_string()))
            .or_default();
        let info = PassageInfo {
            judgment,
            erag: None,
        };
        if question.insert(docno.to_string(), info).is_some() {
            return Err(err(
                "docno",
                format!(
                    "duplicate row for qid {:?} docno {:?}{}",
                    excerpt(qid),
                    excerpt(docno),
                    if model.is_empty() {
                        String::new()
                    } else {
                        format!(" model {:?}", excerpt(model))
                    }
                ),
            ));
        }
    }
    Ok(utilities)
}

fn parse_number(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("{:?} is not a number", excerpt(text)))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{v} is not a finite number"))
    }
}

/// One row of the 4/5-column form.
#[derive(Debug, Clone, PartialEq)]
pub struct UtilityRow {
    pub qid: String,
    pub docno: String,
    pub model: String,
    pub judgment: Judgment,
}

/// Writes the 4/5-column form (the model column only when some row has a model), with header.
pub fn write(rows: &[UtilityRow]) -> String {
    let with_model = rows.iter().any(|r| !r.model.is_empty());
    let mut out = String::from(if with_model {
        "qid\tdocno\trelevant\tno_res_prob\tmodel\n"
    } else {
        "qid\tdocno\trelevant\tno_res_prob\n"
    });
    for r in rows {
        let _ = write!(
            out,
            "{}\t{}\t{}\t{}",
            r.qid,
            r.docno,
            u8::from(r.judgment.relevant),
            r.judgment.p_no_response
        );
        if with_model {
            let _ = write!(out, "\t{}", r.model);
        }
        out.push('\n');
    }
    out
}

/// Writes the derived `qid docno utility` form (one model's rows), with header.
pub fn write_derived(rows: &[UtilityRow]) -> String {
    let mut out = String::from("qid\tdocno\tutility\n");
    for r in rows {
        let _ = writeln!(out, "{}\t{}\t{}", r.qid, r.docno, r.judgment.utility());
    }
    out
}

/// Which reader model's probabilities to use: `model` when given (it must occur in the file),
/// else the only model the file names, else the model-less rows (`""`). `path` names the file
/// in the error.
pub fn choose_model(
    path: &str,
    utilities: &Utilities,
    model: Option<&str>,
) -> Result<String, String> {
    let mut models: Vec<&str> = utilities
        .entries
        .keys()
        .map(|(m, _)| m.as_str())
        .filter(|m| !m.is_empty())
        .collect();
    models.sort_unstable();
    models.dedup();
    match model {
        Some(m) if models.contains(&m) => Ok(m.to_string()),
        Some(m) => Err(format!(
            "{path}: no row names the model {m:?} (models in the file: {})",
            if models.is_empty() {
                "none".to_string()
            } else {
                models.join(", ")
            }
        )),
        None if models.len() > 1 => Err(format!(
            "{path}: the utilities name several models ({}); pick one with --model",
            models.join(", ")
        )),
        None => Ok(models.first().map(|m| m.to_string()).unwrap_or_default()),
    }
}
