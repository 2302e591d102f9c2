//! Chat templates (`tokenizer.chat_template`, Jinja) rendered with minijinja the way transformers'
//! `apply_chat_template` renders them: `trim_blocks` and `lstrip_blocks` on, Python string methods
//! (`.strip()`, `.startswith()`, ...), `raise_exception`, `strftime_now`, and a Python-style
//! `tojson` (`json.dumps` separators, non-ASCII kept).

use crate::error::{InferError, Result};
use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind};

/// One chat message.
#[derive(Debug, Clone)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: &str, content: &str) -> Self {
        ChatMessage {
            role: role.to_string(),
            content: content.to_string(),
        }
    }
}

/// A calendar date and time for `strftime_now`.
///
/// Utilities must not depend on the day they are computed, so the default is the date Llama 3.x
/// templates fall back to themselves ("26 Jul 2024") instead of the wall clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateDate {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Default for TemplateDate {
    fn default() -> Self {
        TemplateDate {
            year: 2024,
            month: 7,
            day: 26,
            hour: 12,
            minute: 0,
            second: 0,
        }
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

impl TemplateDate {
    /// Monday = 0 (Python's `weekday()`), from days since 1970-01-01 (a Thursday).
    fn weekday(&self) -> usize {
        let days = days_from_civil(self.year, self.month, self.day);
        (days + 3).rem_euclid(7) as usize
    }

    /// The subset of C `strftime` directives chat templates use.
    pub fn strftime(&self, fmt: &str) -> std::result::Result<String, String> {
        let month = MONTHS
            .get(self.month.wrapping_sub(1) as usize)
            .ok_or_else(|| format!("month {} out of range", self.month))?;
        let weekday = WEEKDAYS[self.weekday()];
        let mut out = String::new();
        let mut chars = fmt.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('d') => out.push_str(&format!("{:02}", self.day)),
                Some('e') => out.push_str(&format!("{:2}", self.day)),
                Some('m') => out.push_str(&format!("{:02}", self.month)),
                Some('Y') => out.push_str(&self.year.to_string()),
                Some('y') => out.push_str(&format!("{:02}", self.year.rem_euclid(100))),
                Some('b') | Some('h') => out.push_str(&month[..3]),
                Some('B') => out.push_str(month),
                Some('a') => out.push_str(&weekday[..3]),
                Some('A') => out.push_str(weekday),
                Some('H') => out.push_str(&format!("{:02}", self.hour)),
                Some('M') => out.push_str(&format!("{:02}", self.minute)),
                Some('S') => out.push_str(&format!("{:02}", self.second)),
                Some('%') => out.push('%'),
                Some(other) => return Err(format!("unsupported strftime directive %{other}")),
                None => return Err("format ends with a lone %".to_string()),
            }
        }
        Ok(out)
    }
}

fn days_from_civil(y: i32, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y as i64 - 1 } else { y as i64 };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// A chat template ready to render.
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    source: String,
    date: TemplateDate,
}

impl ChatTemplate {
    pub fn new(source: &str) -> Self {
        ChatTemplate {
            source: source.to_string(),
            date: TemplateDate::default(),
        }
    }

    pub fn with_date(mut self, date: TemplateDate) -> Self {
        self.date = date;
        self
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Renders `messages`; `add_generation_prompt` appends the assistant header.
    pub fn render(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
        bos_token: &str,
        eos_token: &str,
    ) -> Result<String> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| InferError::ChatTemplate(describe(&e)))?;
        env.set_syntax(syntax);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |msg: String| -> std::result::Result<Value, Error> {
                Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("the template raised an exception: {msg}"),
                ))
            },
        );
        let date = self.date;
        env.add_function(
            "strftime_now",
            move |fmt: String| -> std::result::Result<String, Error> {
                date.strftime(&fmt)
                    .map_err(|e| Error::new(ErrorKind::InvalidOperation, e))
            },
        );
        env.add_filter("tojson", tojson);
        let tmpl = env
            .template_from_str(&self.source)
            .map_err(|e| InferError::ChatTemplate(describe(&e)))?;
        let ctx = minijinja::context! {
            messages => Value::from_iter(messages.iter().map(|m| {
                Value::from_pairs([("role", m.role.as_str()), ("content", m.content.as_str())])
            })),
            add_generation_prompt => add_generation_prompt,
            bos_token => bos_token,
            eos_token => eos_token,
        };
        tmpl.render(ctx)
            .map_err(|e| InferError::ChatTemplate(describe(&e)))
    }
}

fn describe(e: &Error) -> String {
    let mut msg = e.to_string();
    if let Some(line) = e.line() {
        if !msg.contains("line") {
            msg.push_str(&format!(" (line {line})"));
        }
    }
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(&format!(": {s}"));
        src = s.source();
    }
    format!("cannot render: {msg}")
}

/// `tojson` as transformers defines it: `json.dumps(x, ensure_ascii=False, indent=indent)`.
fn tojson(value: Value, kwargs: Kwargs) -> std::result::Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let mut out = String::new();
    write_json(&value, indent, 0, &mut out)?;
    Ok(Value::from_safe_string(out))
}

fn write_json(
    v: &Value,
    indent: Option<usize>,
    level: usize,
    out: &mut String,
) -> std::result::Result<(), Error> {
    let newline = |out: &mut String, level: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * level));
        }
    };
    let (item_sep, key_sep) = if indent.is_some() {
        (",", ": ")
    } else {
        (", ", ": ")
    };
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            if let Ok(i) = i64::try_from(v.clone()) {
                out.push_str(&i.to_string());
            } else {
                let f = f64::try_from(v.clone()).unwrap_or(f64::NAN);
                out.push_str(&serde_json::to_string(&f).unwrap_or_else(|_| "NaN".into()));
            }
        }
        ValueKind::String => {
            out.push_str(&serde_json::to_string(v.as_str().unwrap_or("")).unwrap_or_default())
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = v.try_iter()?.collect();
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write_json(item, indent, level + 1, out)?;
            }
            if !items.is_empty() {
                newline(out, level);
            }
            out.push(']');
        }
        ValueKind::Map => {
            let keys: Vec<Value> = v.try_iter()?.collect();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                let key = k
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| k.to_string());
                out.push_str(&serde_json::to_string(&key).unwrap_or_default());
                out.push_str(key_sep);
                write_json(&v.get_item(k)?, indent, level + 1, out)?;
            }
            if !keys.is_empty() {
                newline(out, level);
            }
            out.push('}');
        }
        _ => out.push_str(&serde_json::to_string(&v.to_string()).unwrap_or_default()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strftime_matches_python_for_the_llama_fallback_date() {
        // Python: datetime(2024, 7, 26).strftime("%d %b %Y") == "26 Jul 2024", a Friday.
        let d = TemplateDate::default();
        assert_eq!(d.strftime("%d %b %Y").unwrap(), "26 Jul 2024");
        assert_eq!(
            d.strftime("%A %B %m/%d/%y").unwrap(),
            "Friday July 07/26/24"
        );
        assert!(d.strftime("%Q").is_err());
    }

    #[test]
    fn raise_exception_is_a_clear_error() {
        let t = ChatTemplate::new("{{ raise_exception('roles must alternate') }}");
        let e = t.render(&[], true, "", "").unwrap_err().to_string();
        assert!(e.contains("roles must alternate"), "{e}");
    }

    #[test]
    fn syntax_errors_are_reported() {
        let t = ChatTemplate::new("{% for m in messages %}{{ m.content }");
        assert!(t.render(&[], true, "", "").is_err());
    }

    #[test]
    fn tojson_uses_python_separators() {
        let t = ChatTemplate::new("{{ messages[0] | tojson }}|{{ [1, 'é'] | tojson }}");
        let out = t
            .render(&[ChatMessage::new("user", "hi")], false, "", "")
            .unwrap();
        assert_eq!(out, r#"{"role": "user", "content": "hi"}|[1, "é"]"#);
    }
}
