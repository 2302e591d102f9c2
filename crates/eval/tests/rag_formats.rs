//! Utilities TSV and context-set JSONL: values, joins, and positioned errors on bad input.

use ragscope_eval::rag::contexts::{self, Outcome};
use ragscope_eval::rag::spec::UdcgSpec;
use ragscope_eval::rag::utilities_tsv::{self, UtilityRow};
use ragscope_eval::rag::Judgment;
use std::collections::HashMap;

#[test]
fn utilities_tsv_round_trips_and_feeds_contexts() {
    let text = "qid\tdocno\trelevant\tno_res_prob\tmodel\n\
                q1\td1\t1\t0.25\tllama\n\
                q1\td2\t0\t0.5\tllama\n\
                q1\td1\t1\t0.75\tqwen\n\
                q1\td2\tfalse\t0.125\tqwen\n";
    let u = utilities_tsv::parse("u.tsv", text).unwrap();
    let llama = u.question("llama", "q1").unwrap();
    assert_eq!(llama["d1"].judgment.utility(), 0.75);
    assert_eq!(llama["d2"].judgment.utility(), -0.5);
    let rows: Vec<UtilityRow> = llama
        .iter()
        .map(|(d, i)| UtilityRow {
            qid: "q1".into(),
            docno: d.clone(),
            model: "llama".into(),
            judgment: i.judgment,
        })
        .collect();
    let again = utilities_tsv::parse("again.tsv", &utilities_tsv::write(&rows)).unwrap();
    assert_eq!(again.question("llama", "q1"), Some(llama));
    let derived = utilities_tsv::parse("d.tsv", &utilities_tsv::write_derived(&rows)).unwrap();
    assert_eq!(
        derived.question("x", "q1").unwrap()["d2"]
            .judgment
            .utility(),
        -0.5
    );

    let jsonl =
        r#"{"qid":"q1","model":"qwen","contexts":[{"passages":["d1","d2"],"outcome":"abstain"}]}"#;
    let sets = contexts::parse("c.jsonl", jsonl, Some(&u)).unwrap();
    assert_eq!(sets[0].contexts[0].outcome, Outcome::Abstain);
    let judged: Vec<f64> = sets[0].contexts[0]
        .passages
        .iter()
        .map(|&i| sets[0].pool[i as usize].info.judgment.utility())
        .collect();
    assert_eq!(judged, vec![0.25, -0.875]);
}

#[test]
fn utilities_tsv_errors_name_line_and_field() {
    let cases = [
        ("q1 d1 1 1.5\n", 1, "no_res_prob"),
        ("q1 d1 1 0.5\nq1 d2 yes 0.5\n", 2, "relevant"),
        ("q1 d1 1 0.5\nq1 d1 0 0.5\n", 2, "docno"),
        ("q1 d1 1 NaN\n", 1, "no_res_prob"),
        ("q1 d1 0.5\nq1 d2 1 0.5\n", 2, ""),
        ("q1 d1 1.5\n", 1, "utility"),
        ("q1\n", 1, ""),
    ];
    for (text, line, field) in cases {
        let e = utilities_tsv::parse("u.tsv", text).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (line, field), "{e}");
        assert!(e.to_string().starts_with(&format!("u.tsv:{line}")), "{e}");
    }
}

#[test]
fn context_errors_name_line_and_field() {
    let ok = r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":0.1},"d2":{"is_relevant":false,"utility":-0.3}},"contexts":[{"passages":["d1","d2"],"outcome":"correct"}]}"#;
    assert!(contexts::parse("c.jsonl", ok, None).is_ok());
    let cases = [
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":2}},"contexts":[]}"#,
            "passages.d1.no_res_prob",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":0.1}},"contexts":[{"passages":["d9"],"outcome":"correct"}]}"#,
            "contexts[0].passages[0]",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":0.1}},"contexts":[{"passages":["d1"],"outcome":"maybe"}]}"#,
            "contexts[0].outcome",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":0.1},"d1":{"is_relevant":true,"no_res_prob":0.2}},"contexts":[]}"#,
            "passages",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":0.1}},"contexts":[{"passages":["d1","d1"],"outcome":"wrong"}]}"#,
            "contexts[0].passages[1]",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true}},"contexts":[]}"#,
            "passages.d1",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"utility":-0.5}},"contexts":[]}"#,
            "passages.d1.utility",
        ),
        (
            r#"{"qid":"q1","passages":{"d1":{"is_relevant":true,"no_res_prob":0.1,"erag":1.2}},"contexts":[]}"#,
            "passages.d1.erag",
        ),
        (
            r#"{"qid":"q1","passages":{},"contexts":[{"passages":[],"outcome":"wrong"}]}"#,
            "contexts[0].passages",
        ),
    ];
    for (line, field) in cases {
        let text = format!("{ok}\n\n{line}\n");
        let e = contexts::parse("c.jsonl", &text, None).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert_eq!(e.field, field, "{e}");
        assert!(e.to_string().starts_with("c.jsonl:3"), "{e}");
    }
    let dup = format!("{ok}\n{ok}\n");
    let e = contexts::parse("c.jsonl", &dup, None).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "qid"), "{e}");
    let e = contexts::parse("c.jsonl", "{not json\n", None).unwrap_err();
    assert_eq!(e.line, 1);
    assert!(e.column > 0);
}

#[test]
fn per_query_kernel_scores_a_ranking() {
    let mut judgments = HashMap::new();
    judgments.insert(
        "a".to_string(),
        Judgment {
            relevant: true,
            p_no_response: 0.2,
        },
    );
    judgments.insert(
        "b".to_string(),
        Judgment {
            relevant: false,
            p_no_response: 0.4,
        },
    );
    let spec: UdcgSpec = "UDCG(gamma=0.5)@3".parse().unwrap();
    let r = spec.score_ranking(&["b", "x", "a", "c"], &judgments);
    // Paper Eq. 4 at k = 3 over b, x (unjudged → 0), a: σ((0.8 − 0.5·0.6)/3).
    let want = 1.0 / (1.0 + (-(0.8 - 0.3) / 3.0f64).exp());
    assert!((r.value - want).abs() < 1e-15);
    assert_eq!(r.unjudged, 1);
}

#[test]
fn context_sets_round_trip_through_jsonl() {
    let sets = ragscope_eval::rag::synth::context_sets(30, 10, 5, 8);
    let text = contexts::write_jsonl(&sets);
    let mut again = contexts::parse("s.jsonl", &text, None).unwrap();
    for (a, b) in again.iter_mut().zip(&sets) {
        a.line = b.line;
    }
    assert_eq!(again, sets);
}

#[test]
fn erag_per_query_kernel() {
    use ragscope_eval::rag::erag::erag_at_k;
    let scores: HashMap<String, f64> = [("a".to_string(), 1.0), ("b".to_string(), 0.5)].into();
    // Salemi & Zamani's aggregates: precision = mean over the cutoff, success = max.
    let r = erag_at_k(&["b", "z", "a"], &scores, 2);
    assert_eq!((r.precision, r.success, r.unscored), (0.25, 0.5, 1));
    let r = erag_at_k(&["b", "z", "a"], &scores, 3);
    assert_eq!((r.precision, r.success), (0.5, 1.0));
}
