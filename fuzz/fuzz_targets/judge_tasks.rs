//! Every judge task's whole reply path — the provider's wire format read into a `Reply`, then
//! `Task::parse_item` of UMBRELA, nuggets create/score/assign, pairwise, pointwise, citations,
//! answer equivalence, answer generation and utility (echo and top-logprobs scoring), and the
//! utility probe — returns a result or an error, never panics. The first byte picks the wire
//! format (Anthropic, Gemini, OpenAI chat, OpenAI /completions, or the bytes as the reply text),
//! the nugget batch size and the utility scoring; the rest is the body.
//!
//! Contract checked where it is cheap: an error names its reason (non-empty), an UMBRELA grade is
//! 0–3, a nugget label list has the batch's length, a utility probability is in [0, 1], and a
//! vote over one result gives that result back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_judge::provider::{anthropic, gemini, openai, Finish, Reply, Usage};
use ragscope_judge::task::answer::Answer;
use ragscope_judge::task::answer_equivalence::AnswerEquivalence;
use ragscope_judge::task::citations::Citations;
use ragscope_judge::task::nuggets::{NuggetAssign, NuggetCreate, NuggetScore};
use ragscope_judge::task::pairwise::Pairwise;
use ragscope_judge::task::pointwise::Pointwise;
use ragscope_judge::task::umbrela::Umbrela;
use ragscope_judge::task::utility::{self, Scoring, Utility};
use ragscope_judge::task::{ItemKey, Task};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let reply = match which % 5 {
        0 => anthropic::parse_reply(&text).ok(),
        1 => gemini::parse_reply(&text).ok(),
        2 => openai::parse_chat_reply(&text).ok(),
        3 => openai::parse_completion_reply(&text).ok(),
        _ => None,
    }
    .unwrap_or_else(|| Reply {
        text: text.to_string(),
        finish: Finish::Stop,
        usage: Usage::default(),
        logprobs: None,
    });
    let n = usize::from(which / 5 % 4);
    let key = ItemKey(vec![
        ("qid".into(), "q".into()),
        ("n".into(), n.to_string()),
    ]);

    let grade = check(&Umbrela::new(), &key, &reply);
    if let Some(g) = grade {
        assert!(g.as_u64().is_some_and(|g| g <= 3), "{g}");
    }
    for labels in [
        check(&NuggetScore::new(Vec::new()), &key, &reply),
        check(&NuggetAssign::new(Vec::new()), &key, &reply),
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(labels.as_array().map(Vec::len), Some(n), "{labels}");
    }
    check(&NuggetCreate::default(), &key, &reply);
    check(&Pairwise::default(), &key, &reply);
    check(&Pointwise::default(), &key, &reply);
    check(&Citations::default(), &key, &reply);
    check(&AnswerEquivalence::new(), &key, &reply);
    check(&Answer::new(32), &key, &reply);

    let scoring = match which / 20 % 4 {
        0 => Scoring::Echo {
            appended: utility::NO_RESPONSE.into(),
            single_token: false,
        },
        1 => Scoring::Echo {
            appended: "NO".into(),
            single_token: true,
        },
        2 => Scoring::TopLogprobs { first_token: None },
        _ => Scoring::TopLogprobs {
            first_token: Some("NO".into()),
        },
    };
    if let Some(v) = check(&Utility::new(scoring), &key, &reply) {
        let p = v["no_res_prob"].as_f64();
        assert!(p.is_some_and(|p| (0.0..=1.0).contains(&p)), "{v}");
    }
    if let Ok((token, lp)) = utility::probe_pick(&reply) {
        let _ = utility::probe_check(&token, lp, &reply);
    }
});

/// The task's result for the item, after checking that an error says why and that a vote over
/// one result is that result.
fn check(task: &dyn Task, key: &ItemKey, reply: &Reply) -> Option<serde_json::Value> {
    match task.parse_item(key, reply) {
        Ok(v) => {
            if let Some(voted) = task.vote(std::slice::from_ref(&v)) {
                assert_eq!(voted, v, "{}", task.name());
            }
            Some(v)
        }
        Err(e) => {
            assert!(
                !e.trim().is_empty(),
                "{}: an error without a reason",
                task.name()
            );
            None
        }
    }
}
