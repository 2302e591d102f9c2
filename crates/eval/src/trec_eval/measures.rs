//! Selecting measures with `-m` and turning their parameters into values and names,
//! as trec_eval's mark_measure and meas_init.c do.

use super::args::{atof, atol};
use super::TrecEvalError;
use crate::measures::{family, nickname, registry, Family, ParamKind, Params};

/// A requested family with its parameters and the names of the values it prints.
#[derive(Debug, Clone)]
pub struct Selected {
    pub family: &'static Family,
    pub params: Params,
    pub names: Vec<String>,
}

/// Families marked by `-m`, and `(family or nickname, parameter string)` pairs.
pub type Marked = (Vec<&'static str>, Vec<(String, String)>);

/// Marks families from `-m` arguments (nicknames expand) and returns, per family name,
/// the first parameter string given for it. Unknown names fail like trec_eval (exit 1).
pub fn mark(requests: &[String]) -> Result<Marked, TrecEvalError> {
    let mut marked: Vec<&'static str> = Vec::new();
    let mut params: Vec<(String, String)> = Vec::new();
    let requests: Vec<String> = if requests.is_empty() {
        vec!["official".to_string()]
    } else {
        requests.to_vec()
    };
    for request in &requests {
        let (name, param) = match request.split_once('.') {
            Some((n, p)) => (n, Some(p)),
            None => (request.as_str(), None),
        };
        if let Some(p) = param {
            if p.is_empty() {
                return Err(TrecEvalError::new(
                    format!(
                        "trec_eval: improper measure in parameter '{name}'\ntrec_eval: illegal measure '{name}'\n"
                    ),
                    1,
                ));
            }
            params.push((name.to_string(), p.to_string()));
        }
        let names: Vec<&str> = match nickname(name) {
            Some(list) => list.to_vec(),
            None => vec![name],
        };
        for n in names {
            match family(n) {
                Some(f) => {
                    if !marked.contains(&f.name) {
                        marked.push(f.name);
                    }
                }
                None => {
                    return Err(TrecEvalError::new(
                        format!("trec_eval: illegal measure '{name}'\n"),
                        1,
                    ))
                }
            }
        }
    }
    Ok((marked, params))
}

/// Builds the selected families in trec_eval's table order with parsed parameters.
pub fn init(
    marked: &[&'static str],
    params: &[(String, String)],
) -> Result<Vec<Selected>, TrecEvalError> {
    let mut out = Vec::new();
    for family in registry().iter().filter(|f| marked.contains(&f.name)) {
        let given = params
            .iter()
            .find(|(n, _)| n == family.name)
            .map(|(_, p)| p.as_str());
        let cannot = |why: &str| {
            TrecEvalError::new(
                format!(
                    "{why}trec_eval: Cannot initialize measure '{}'\n",
                    family.name
                ),
                2,
            )
        };
        let params = match given {
            None => family.default_params(),
            Some(text) => parse_params(family.params, text).map_err(|why| cannot(&why))?,
        };
        let names = value_names(family, &params, given);
        out.push(Selected {
            family,
            params,
            names,
        });
    }
    Ok(out)
}

fn parse_params(kind: ParamKind, text: &str) -> Result<Params, String> {
    let parts: Vec<&str> = text.split(',').collect();
    Ok(match kind {
        ParamKind::None => Params::None,
        ParamKind::Cutoffs(_) => {
            let mut c: Vec<i64> = parts.iter().map(|p| atol(p)).collect();
            c.sort_unstable();
            if c[0] <= 0 {
                return Err("trec_eval: Negative cutoff detected\n".to_string());
            }
            if c.windows(2).any(|w| w[0] == w[1]) {
                return Err("trec_eval: duplicate cutoffs detected\n".to_string());
            }
            Params::Cutoffs(c)
        }
        ParamKind::Fractions(_) => {
            let mut c: Vec<f64> = parts.iter().map(|p| atof(p)).collect();
            c.sort_by(|a, b| a.total_cmp(b));
            if c.windows(2).any(|w| w[0] == w[1]) {
                return Err("trec_eval: duplicate cutoffs detected\n".to_string());
            }
            Params::Fractions(c)
        }
        ParamKind::Values(_) => Params::Values(parts.iter().map(|p| atof(p)).collect()),
        ParamKind::Pairs => {
            let mut pairs = Vec::new();
            for part in &parts {
                match part.split_once('=') {
                    Some((name, value)) if !value.contains('=') => {
                        pairs.push((name.to_string(), atof(value)))
                    }
                    _ => {
                        return Err(format!(
                            "trec_eval: malformed pair parameters in '{text}'\n"
                        ))
                    }
                }
            }
            Params::Pairs(pairs)
        }
    })
}

fn value_names(family: &Family, params: &Params, given: Option<&str>) -> Vec<String> {
    match params {
        Params::Cutoffs(c) => c.iter().map(|k| format!("{}_{k}", family.name)).collect(),
        Params::Fractions(c) => c
            .iter()
            .map(|f| format!("{}_{:3.2}", family.name, f))
            .collect(),
        _ => vec![match given {
            Some(p) => format!("{}_{p}", family.name),
            None => family.name.to_string(),
        }],
    }
}
