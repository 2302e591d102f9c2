//! Reply parsing shared by the part-2 tasks: code fences, Python-style or JSON lists of strings,
//! a JSON object somewhere in the reply, and the reply's finish (a cut or refused reply is a
//! failure, never a partial result).

use crate::provider::{Call, Finish, Reply};
use serde_json::Value;

/// A truncated or refused reply is not an answer.
pub fn check_finish(reply: &Reply) -> Result<(), String> {
    match reply.finish {
        Finish::Length => Err("reply cut at max_tokens (truncated)".into()),
        Finish::Refusal => Err("the model refused to answer".into()),
        _ => Ok(()),
    }
}

/// The call again at a temperature of at least `t` (a re-ask after a reply that did not parse:
/// at the same temperature a model mostly repeats itself). Each re-ask is cached on its own.
pub fn warmer(call: &Call, t: f32) -> Option<Call> {
    let mut c = call.clone();
    match &mut c {
        Call::Chat(ch) => {
            ch.params.temperature = Some(ch.params.temperature.unwrap_or(0.0).max(t));
        }
        Call::Completion(_) => return None,
    }
    Some(c)
}

/// The text between the first code fence (```` ``` ```` with an optional language) and the next,
/// or the whole text when it has no fence.
pub fn strip_fences(text: &str) -> &str {
    let Some(start) = text.find("```") else {
        return text.trim();
    };
    let after = &text[start + 3..];
    // Skip the language tag (`json`, `python`) up to the end of its line.
    let body = match after.find('\n') {
        Some(nl)
            if after[..nl]
                .trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric()) =>
        {
            &after[nl + 1..]
        }
        _ => after,
    };
    match body.find("```") {
        Some(end) => body[..end].trim(),
        None => body.trim(),
    }
}

/// A list of strings: JSON (`["a", "b"]`) or Python (`['a', "b's"]`), fenced or not, with text
/// around the outermost brackets allowed. Errors say what was wrong and where.
pub fn parse_string_list(text: &str) -> Result<Vec<String>, String> {
    let body = strip_fences(text);
    let start = body
        .find('[')
        .ok_or_else(|| "no list ([...]) in the reply".to_string())?;
    let end = body
        .rfind(']')
        .filter(|&e| e > start)
        .ok_or_else(|| "the list in the reply is not closed (no `]`)".to_string())?;
    let slice = &body[start..=end];
    if let Ok(v) = serde_json::from_str::<Vec<String>>(slice) {
        return Ok(v);
    }
    parse_python_list(slice)
}

/// A Python list literal of string literals. Hand-written: no crate parses Python literals, and
/// the grammar needed (quoted strings with backslash escapes, commas) is tiny.
fn parse_python_list(s: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 1; // after '['
    let mut out = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        match chars.get(i) {
            Some(']') => return Ok(out),
            Some(&q) if q == '\'' || q == '"' => {
                i += 1;
                let mut item = String::new();
                loop {
                    match chars.get(i) {
                        None => return Err(format!("unterminated string in the list at {i}")),
                        Some('\\') => {
                            let c = chars.get(i + 1).copied().unwrap_or('\\');
                            item.push(match c {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                            i += 2;
                        }
                        Some(&c) if c == q => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            item.push(c);
                            i += 1;
                        }
                    }
                }
                out.push(item);
                skip_ws(&mut i);
                match chars.get(i) {
                    Some(',') => i += 1,
                    Some(']') => return Ok(out),
                    Some(c) => {
                        return Err(format!(
                            "expected `,` or `]` after a list item at {i}, found {c:?}"
                        ))
                    }
                    None => return Err("the list is not closed".into()),
                }
            }
            Some(c) => return Err(format!("expected a quoted string at {i}, found {c:?}")),
            None => return Err("the list is not closed".into()),
        }
    }
}

/// The JSON object that is the reply (fences and text around the outermost braces allowed).
pub fn json_object(text: &str) -> Option<serde_json::Map<String, Value>> {
    let body = strip_fences(text);
    let start = body.find('{')?;
    let end = body.rfind('}')?;
    if end < start {
        return None;
    }
    match serde_json::from_str::<Value>(&body[start..=end]).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// A list of labels from `allowed` (case-insensitive; spaces and hyphens read as `_`) with
/// exactly `n` entries.
pub fn parse_labels(text: &str, n: usize, allowed: &[&str]) -> Result<Vec<String>, String> {
    let list = parse_string_list(text)?;
    if list.len() != n {
        return Err(format!(
            "wrong length: {} labels for {n} nuggets",
            list.len()
        ));
    }
    list.iter()
        .map(|l| {
            let norm = l.trim().to_ascii_lowercase().replace([' ', '-'], "_");
            allowed
                .iter()
                .find(|a| **a == norm)
                .map(|a| a.to_string())
                .ok_or_else(|| format!("label {l:?} is not one of {}", allowed.join(", ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(
            parse_string_list("```python\n['a', \"b's\", 'c\\'d',]\n```").unwrap(),
            vec!["a", "b's", "c'd"]
        );
        assert_eq!(parse_string_list("Here: [\"x\"]").unwrap(), vec!["x"]);
        assert!(parse_string_list("['a' 'b']").is_err());
        assert!(parse_string_list("['a', ").is_err());
        assert!(parse_string_list("none").is_err());
        assert_eq!(
            parse_labels("['Vital', 'okay']", 2, &["vital", "okay"]).unwrap(),
            vec!["vital", "okay"]
        );
        assert!(parse_labels("['vital']", 2, &["vital", "okay"]).is_err());
        assert_eq!(
            parse_labels("[\"partial support\"]", 1, &["partial_support"]).unwrap(),
            vec!["partial_support"]
        );
    }
}
