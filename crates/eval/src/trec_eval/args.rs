//! trec_eval's command line, parsed by hand the way its getopt_long call does
//! (options may be glued to their values, clustered, long, abbreviated, or permuted
//! after the file names).

use super::TrecEvalError;

/// The options trec_eval 10.0 understands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub query_flag: bool,
    /// `-m` values in the order given.
    pub measures: Vec<String>,
    pub complete: bool,
    pub relevance_level: Option<i64>,
    pub no_summary: bool,
    pub judged_only: bool,
    pub num_docs_in_coll: Option<i64>,
    pub max_docs: Option<i64>,
    pub rel_format: Option<String>,
    pub results_format: Option<String>,
    pub zscore_file: Option<String>,
    pub positional: Vec<String>,
}

pub(crate) const USAGE: &str =
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_qrels' prints all qrels measures, '-m official' is default)
";

const LONG: &[(&str, char, bool)] = &[
    ("help", 'h', false),
    ("version", 'v', false),
    ("query_eval_wanted", 'q', false),
    ("measure", 'm', true),
    ("complete_rel_info_wanted", 'c', false),
    ("level_for_rel", 'l', true),
    ("nosummary", 'n', false),
    ("Debug_level", 'D', true),
    ("Judged_docs_only", 'J', false),
    ("Number_docs_in_coll", 'N', true),
    ("Max_retrieved_per_topic", 'M', true),
    ("Rel_info_format", 'R', true),
    ("Results_format", 'T', true),
    ("Output_old_results_format", 'o', false),
    ("Zscore", 'Z', true),
];

fn takes_value(c: char) -> Option<bool> {
    LONG.iter().find(|(_, s, _)| *s == c).map(|(_, _, v)| *v)
}

fn usage_error(message: String) -> TrecEvalError {
    TrecEvalError::new(format!("{message}{USAGE}"), 1)
}

/// C's `atol`: leading blanks, optional sign, digits; anything after is ignored.
pub(crate) fn atol(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add((b - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

/// C's `atof`: the longest prefix that reads as a number, 0 when there is none.
pub(crate) fn atof(s: &str) -> f64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let bytes = t.as_bytes();
    let mut end = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    let lower = t[end..].to_ascii_lowercase();
    for word in ["infinity", "inf", "nan"] {
        if lower.starts_with(word) {
            return t[..end + word.len()].parse().unwrap_or(0.0);
        }
    }
    let mut digits = 0;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
        digits += 1;
    }
    if end < bytes.len() && bytes[end] == b'.' {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return 0.0;
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut e = end + 1;
        if e < bytes.len() && (bytes[e] == b'+' || bytes[e] == b'-') {
            e += 1;
        }
        if e < bytes.len() && bytes[e].is_ascii_digit() {
            while e < bytes.len() && bytes[e].is_ascii_digit() {
                e += 1;
            }
            end = e;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

impl Args {
    pub fn parse(argv: &[String]) -> Result<Args, TrecEvalError> {
        let mut args = Args::default();
        let mut i = 0;
        while i < argv.len() {
            let arg = &argv[i];
            i += 1;
            if arg == "--" {
                args.positional.extend(argv[i..].iter().cloned());
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let matches: Vec<_> = LONG
                    .iter()
                    .filter(|(n, _, _)| n.starts_with(name))
                    .collect();
                let exact = LONG.iter().find(|(n, _, _)| *n == name);
                let (full, short, has_value) = match (exact, matches.as_slice()) {
                    (Some(e), _) => *e,
                    (None, [one]) => **one,
                    (None, []) => {
                        return Err(usage_error(format!(
                            "trec_eval: unrecognized option '--{name}'\n"
                        )))
                    }
                    (None, _) => {
                        return Err(usage_error(format!(
                            "trec_eval: option '--{name}' is ambiguous\n"
                        )))
                    }
                };
                let value = if has_value {
                    match inline {
                        Some(v) => Some(v),
                        None if i < argv.len() => {
                            i += 1;
                            Some(argv[i - 1].clone())
                        }
                        None => {
                            return Err(usage_error(format!(
                                "trec_eval: option '--{full}' requires an argument\n"
                            )))
                        }
                    }
                } else if inline.is_some() {
                    return Err(usage_error(format!(
                        "trec_eval: option '--{full}' doesn't allow an argument\n"
                    )));
                } else {
                    None
                };
                args.apply(short, value)?;
                continue;
            }
            if arg.len() > 1 && arg.starts_with('-') {
                let chars: Vec<char> = arg[1..].chars().collect();
                let mut j = 0;
                while j < chars.len() {
                    let c = chars[j];
                    j += 1;
                    match takes_value(c) {
                        None => {
                            return Err(usage_error(format!(
                                "trec_eval: invalid option -- '{c}'\n"
                            )))
                        }
                        Some(false) => args.apply(c, None)?,
                        Some(true) => {
                            let value = if j < chars.len() {
                                chars[j..].iter().collect::<String>()
                            } else if i < argv.len() {
                                i += 1;
                                argv[i - 1].clone()
                            } else {
                                return Err(usage_error(format!(
                                    "trec_eval: option requires an argument -- '{c}'\n"
                                )));
                            };
                            args.apply(c, Some(value))?;
                            break;
                        }
                    }
                }
                continue;
            }
            args.positional.push(arg.clone());
        }
        Ok(args)
    }

    fn apply(&mut self, c: char, value: Option<String>) -> Result<(), TrecEvalError> {
        let v = value.unwrap_or_default();
        match c {
            'h' => self.help = true,
            'v' => self.version = true,
            'q' => self.query_flag = true,
            'm' => self.measures.push(v),
            'c' => self.complete = true,
            'l' => self.relevance_level = Some(atol(&v)),
            'n' => self.no_summary = true,
            'D' | 'o' => {}
            'J' => self.judged_only = true,
            'N' => self.num_docs_in_coll = Some(atol(&v)),
            'M' => self.max_docs = Some(atol(&v)),
            'R' => self.rel_format = Some(v),
            'T' => self.results_format = Some(v),
            'Z' => self.zscore_file = Some(v),
            _ => return Err(usage_error(format!("trec_eval: invalid option -- '{c}'\n"))),
        }
        Ok(())
    }
}
