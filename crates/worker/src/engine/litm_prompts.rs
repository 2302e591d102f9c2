//! The answer prompts of the lost-in-the-middle page, for local and remote models alike:
//!
//! * the UDCG paper's (Trappolini et al. 2025, Figure 3; the one `ragscope answer` uses): its
//!   system prompt, and one `Document: …` line per passage before the question;
//! * the lost-in-the-middle paper's multi-document QA prompt (Liu et al., TACL 2024;
//!   nelson-liu/lost-in-the-middle, MIT, `src/lost_in_the_middle/prompts/qa.prompt`), with its
//!   documents formatted as its `get_qa_prompt` does: `Document [i](Title: t) text`;
//! * its key–value retrieval prompt (`prompts/kv_retrieval.prompt`), the records formatted as its
//!   `get_kv_retrieval_prompt` does: one JSON object, one `"key": "value"` per line.
//!
//! The two paper prompts are the user message alone (no system message), as the paper's code
//! sends them. The templates below are the files' text, quoted exactly (the files end in a
//! newline that the paper's code strips).

use ragscope_infer::utility::PromptTemplate;
use ragscope_protocol::litm::LitmPrompt;

/// nelson-liu/lost-in-the-middle `src/lost_in_the_middle/prompts/qa.prompt`.
pub const PAPER_QA_TEMPLATE: &str = "Write a high-quality answer for the given question using only the provided search results (some of which might be irrelevant).\n\n{search_results}\n\nQuestion: {question}\nAnswer:";

/// nelson-liu/lost-in-the-middle `src/lost_in_the_middle/prompts/kv_retrieval.prompt` (its final
/// newline stripped, as `get_kv_retrieval_prompt` does).
pub const PAPER_KV_TEMPLATE: &str = "Extract the value corresponding to the specified key in the JSON object below.\n\nJSON data:\n{formatted_kv_records}\n\nKey: \"{key}\"\nCorresponding value:";

/// A passage as the paper's `Document`: the bundled and lost-in-the-middle data write a titled
/// passage as `(Title: t) text`, which is kept; an untitled one gets an empty title.
fn document(index: usize, passage: &str) -> String {
    if passage.starts_with("(Title: ") {
        format!("Document [{index}]{passage}")
    } else {
        format!("Document [{index}](Title: ) {passage}")
    }
}

/// A key–value record `"key": "value"` (the form of the page's generated records): its key.
fn record_key(passage: &str) -> Option<&str> {
    let rest = passage.strip_prefix('"')?;
    let (key, after) = rest.split_once('"')?;
    after.trim_start().starts_with(':').then_some(key)
}

/// The (system, user) messages of one context: `passages` in context order, `gold` the index
/// of the relevant one among them.
pub fn render(
    prompt: LitmPrompt,
    question: &str,
    passages: &[&str],
    gold: usize,
) -> Result<(Option<String>, String), String> {
    match prompt {
        LitmPrompt::Udcg => {
            let t = PromptTemplate::default();
            Ok((
                Some(t.system.clone()),
                t.user_message_docs(question, passages),
            ))
        }
        LitmPrompt::PaperQa => {
            let docs: Vec<String> = passages
                .iter()
                .enumerate()
                .map(|(i, p)| document(i + 1, p))
                .collect();
            // One pass over the template, so a question holding "{search_results}" stays as is.
            let user = PAPER_QA_TEMPLATE
                .replacen("{search_results}", "\u{0}", 1)
                .replacen("{question}", question, 1)
                .replacen('\u{0}', &docs.join("\n"), 1);
            Ok((None, user))
        }
        LitmPrompt::PaperKv => {
            let mut records = String::new();
            for (i, p) in passages.iter().enumerate() {
                if record_key(p).is_none() {
                    return Err(format!(
                        "the key–value prompt needs key–value records (\"key\": \"value\"); passage {} is not one",
                        i + 1
                    ));
                }
                records.push_str(if i == 0 { "{" } else { " " });
                records.push_str(p.trim());
                records.push_str(if i + 1 == passages.len() { "}" } else { ",\n" });
            }
            let key = passages
                .get(gold)
                .and_then(|p| record_key(p))
                .ok_or("the relevant passage is not a key–value record")?;
            let user = PAPER_KV_TEMPLATE
                .replacen("{formatted_kv_records}", "\u{0}", 1)
                .replacen("{key}", key, 1)
                .replacen('\u{0}', &records, 1);
            Ok((None, user))
        }
    }
}

#[cfg(test)]
mod tests {
    //! Against the lost-in-the-middle repository's own tests (tests/test_prompting.py:
    //! `test_get_qa_prompt`, `test_get_kv_retrieval_prompt`): the prompts they expect, written
    //! out here as they build them.
    use super::*;

    #[test]
    fn the_qa_prompt_is_the_papers() {
        let (system, user) = render(
            LitmPrompt::PaperQa,
            "test question",
            &[
                "(Title: first doc) first doc text",
                "(Title: second doc) second doc text",
            ],
            1,
        )
        .unwrap();
        let gold_instruction = "Write a high-quality answer for the given question using only the provided search results (some of which might be irrelevant).";
        let expected = format!(
            "{gold_instruction}\n\nDocument [1](Title: first doc) first doc text\nDocument [2](Title: second doc) second doc text\n\nQuestion: test question\nAnswer:"
        );
        assert_eq!((system, user), (None, expected));
        // Untitled passages: the paper's Document with an empty title.
        let (_, user) = render(LitmPrompt::PaperQa, "q {search_results}", &["a", "b"], 0).unwrap();
        assert!(user.contains(
            "Document [1](Title: ) a\nDocument [2](Title: ) b\n\nQuestion: q {search_results}\n"
        ));
    }

    #[test]
    fn the_kv_prompt_is_the_papers() {
        // test_get_kv_retrieval_prompt's records and key.
        let (system, user) = render(
            LitmPrompt::PaperKv,
            "ignored",
            &[
                "\"test key1\": \"test value1\"",
                "\"test key2\": \"test value2\"",
                "\"test key3\": \"test value3\"",
            ],
            1,
        )
        .unwrap();
        let expected = [
            "Extract the value corresponding to the specified key in the JSON object below.",
            "",
            "JSON data:",
            "{\"test key1\": \"test value1\",",
            " \"test key2\": \"test value2\",",
            " \"test key3\": \"test value3\"}",
            "",
            "Key: \"test key2\"",
            "Corresponding value:",
        ]
        .join("\n");
        assert_eq!((system, user), (None, expected));
        assert!(render(LitmPrompt::PaperKv, "q", &["plain text", "x"], 0).is_err());
    }

    #[test]
    fn the_pages_key_value_records_take_the_kv_prompt() {
        let data = ragscope_web::ui::components::learn::litm_state::key_value(3, 1, 5);
        let q = &data.questions[0];
        let passages: Vec<&str> = q.passages.iter().map(String::as_str).collect();
        let (_, user) = render(LitmPrompt::PaperKv, &q.question, &passages, q.gold_index).unwrap();
        let key = q.passages[q.gold_index].split('"').nth(1).unwrap();
        assert!(user.ends_with(&format!("Key: \"{key}\"\nCorresponding value:")));
        assert!(user.contains(&format!(
            "JSON data:\n{{{},\n {},\n {}}}",
            passages[0], passages[1], passages[2]
        )));
    }

    #[test]
    fn the_udcg_prompt_is_the_local_engines() {
        let (system, user) = render(LitmPrompt::Udcg, "q?", &["a", "b"], 0).unwrap();
        assert_eq!(
            system.as_deref(),
            Some(ragscope_infer::utility::PAPER_SYSTEM_PROMPT)
        );
        assert_eq!(user, "Document: a\nDocument: b\nQuestion: q?\nAnswer:");
    }
}
