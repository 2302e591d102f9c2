//! Reply parsers of the part-2 tasks against the anchors' own data: RAGElo's raw pairwise judge
//! outputs (shared/data/ragelo, 200 games of a 6-agent experiment and its unit-test CSV) must
//! give the verdict RAGElo recorded for each.

use ragscope_judge::task::citations::parse_support;
use ragscope_judge::task::pairwise::{parse_verdict, read_csv};
use ragscope_judge::task::pointwise::parse_grade;
use ragscope_judge::task::reply::{parse_labels, parse_string_list};

fn ragelo(name: &str) -> String {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/ragelo/");
    std::fs::read_to_string(format!("{p}{name}")).unwrap()
}

#[test]
fn ragelo_raw_verdicts_parse_to_ragelos_answers() {
    for f in [
        "notebooks/pairwise_answers_evaluations.csv",
        "tests_data/pairwise_answers_evaluations.csv",
    ] {
        let rows = read_csv(&ragelo(f), f, &["raw_answer", "answer"]).unwrap();
        assert!(rows.len() >= 2, "{f}");
        for (i, r) in rows.iter().enumerate() {
            let v = parse_verdict(&r[0]).unwrap_or_else(|e| panic!("{f} row {i}: {e}"));
            assert_eq!(v.to_string(), r[1].trim(), "{f} row {i}");
        }
        if f.starts_with("notebooks") {
            assert_eq!(rows.len(), 200);
        }
    }
}

#[test]
fn verdict_formats() {
    assert_eq!(
        parse_verdict("```json\n{\"winner\": \"B\"}\n```").unwrap(),
        'B'
    );
    assert_eq!(
        parse_verdict("{\"comparison_reasoning\": \"[[A]] is tempting\", \"winner\": \"C\"}")
            .unwrap(),
        'C'
    );
    assert_eq!(parse_verdict("first [[B]] then final [[A]]").unwrap(), 'A');
    assert!(parse_verdict("[[D]]").is_err());
    assert!(parse_verdict("{\"winner\": \"both\"}").is_err());
    assert!(parse_verdict("no verdict").is_err());
}

#[test]
fn lists_labels_grades_support() {
    assert_eq!(
        parse_string_list("```python\n[\"a b\", 'it\\'s']\n```").unwrap(),
        vec!["a b", "it's"]
    );
    let err = parse_labels("['vital', 'okay']", 3, &["vital", "okay"]).unwrap_err();
    assert!(err.contains("wrong length"), "{err}");
    assert!(parse_labels("['vital', 'maybe']", 2, &["vital", "okay"]).is_err());
    assert_eq!(
        parse_grade("```json\n{\"reasoning\": \"ok\", \"score\": 2}\n```").unwrap(),
        (2, "ok".to_string())
    );
    assert!(parse_grade("{\"reasoning\": \"x\", \"score\": 3}").is_err());
    assert!(parse_grade("{\"reasoning\": \"x\", \"score\": 1.5}").is_err());
    assert!(parse_grade("score: 2").is_err());
    assert_eq!(
        parse_support("{\"support\": \"partial\"}").unwrap(),
        "partial"
    );
    assert_eq!(parse_support("Full support.").unwrap(), "full");
    assert_eq!(parse_support("none").unwrap(), "none");
    assert!(parse_support("maybe").is_err());
}

fn record(key: &[(&str, &str)], result: Option<serde_json::Value>) -> ragscope_judge::ItemRecord {
    ragscope_judge::ItemRecord {
        index: 0,
        key: ragscope_judge::ItemKey(
            key.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        status: if result.is_some() {
            ragscope_judge::Status::Ok
        } else {
            ragscope_judge::Status::Failed
        },
        result,
        error: None,
        attempts: 1,
        cached: false,
        input_tokens: 0,
        output_tokens: 0,
        raw: None,
    }
}

#[test]
fn a_topic_with_an_unjudged_last_window_is_incomplete() {
    use ragscope_judge::task::nuggets::{NuggetCreate, PoolTopic};
    let t = PoolTopic {
        qid: "t".into(),
        query: "q".into(),
        passages: (0..11).map(|i| format!("p{i}")).collect(),
    };
    let w0 = record(
        &[("qid", "t"), ("window", "0")],
        Some(serde_json::json!(["a"])),
    );
    assert!(!NuggetCreate::complete(&t, std::slice::from_ref(&w0)));
    let w1 = record(
        &[("qid", "t"), ("window", "1")],
        Some(serde_json::json!(["a"])),
    );
    assert!(NuggetCreate::complete(&t, &[w0.clone(), w1]));
    let w1_failed = record(&[("qid", "t"), ("window", "1")], None);
    assert!(!NuggetCreate::complete(&t, &[w0, w1_failed]));
}

#[test]
fn games_map_the_swapped_order_back_and_samples_vote() {
    use ragscope_judge::task::pairwise::{flips, games, Pairwise};
    use ragscope_judge::Task;
    let k = |o: &'static str| {
        [
            ("qid", "1"),
            ("agent_a", "x"),
            ("agent_b", "y"),
            ("order", o),
        ]
    };
    let v = |w: &str| Some(serde_json::json!({"winner": w, "raw": format!("raw {w}")}));
    // x wins when shown first (A) and when shown second (B): consistent, x wins.
    let g = games(&[record(&k("ab"), v("A")), record(&k("ba"), v("B"))]);
    assert_eq!((g[0].answer, g[0].flipped()), ('A', false));
    // "A" both times: the position won, a tie and a flip.
    let recs = [record(&k("ab"), v("A")), record(&k("ba"), v("A"))];
    assert_eq!(games(&recs)[0].answer, 'C');
    assert_eq!(flips(&recs), (1, 1));
    // A failed order: no game.
    assert!(games(&[record(&k("ab"), v("A")), record(&k("ba"), None)]).is_empty());
    let p = Pairwise::default();
    let w = |r: Option<serde_json::Value>| r.unwrap()["winner"].as_str().unwrap().to_string();
    assert_eq!(
        w(p.vote(&[v("A").unwrap(), v("B").unwrap(), v("A").unwrap()])),
        "A"
    );
    assert_eq!(w(p.vote(&[v("A").unwrap(), v("B").unwrap()])), "C");
}
