//! Properties of the tournament code and the RAGElo parsers: the default Elo update is zero-sum
//! per game, Bradley–Terry ratings do not depend on game order, parsers never panic; RFC 4180
//! details of the CSV reader on RAGElo's own files.

use proptest::prelude::*;
use ragscope_eval::answers::bradley_terry::bradley_terry;
use ragscope_eval::answers::elo::{elo, update, EloParams};
use ragscope_eval::answers::games::{position_flips, Games, Verdict};
use ragscope_eval::answers::{ragelo_csv, ragelo_jsonl, topic_scores};

fn verdict(i: u8) -> Verdict {
    [Verdict::A, Verdict::B, Verdict::Tie][usize::from(i % 3)]
}

fn games_strategy() -> impl Strategy<Value = Vec<(u8, u8, u8, u8)>> {
    prop::collection::vec((0u8..4, 0u8..5, 0u8..5, 0u8..3), 1..60)
        .prop_map(|v| v.into_iter().filter(|g| g.1 != g.2).collect())
}

fn build(rows: &[(u8, u8, u8, u8)]) -> Games {
    let names: Vec<(String, String, String, Verdict)> = rows
        .iter()
        .map(|&(q, a, b, v)| {
            (
                format!("q{q}"),
                format!("agent{a}"),
                format!("agent{b}"),
                verdict(v),
            )
        })
        .collect();
    Games::from_triples(
        names
            .iter()
            .map(|(q, a, b, v)| (q.as_str(), a.as_str(), b.as_str(), *v)),
    )
}

proptest! {
    #[test]
    fn default_elo_update_is_zero_sum(ra in 0.0f64..3000.0, rb in 0.0f64..3000.0, v in 0u8..3, k in 1.0f64..64.0) {
        let (a, b) = update(ra, rb, verdict(v).score_a(), k, false);
        prop_assert!(((a + b) - (ra + rb)).abs() < 1e-9);
    }

    #[test]
    fn default_elo_keeps_the_mean_rating(rows in games_strategy(), seed in 0u64..1000) {
        prop_assume!(!rows.is_empty());
        let games = build(&rows);
        let ratings = elo(&games, &EloParams { seed, ..EloParams::default() });
        let mean = ratings.iter().map(|r| r.rating).sum::<f64>() / ratings.len() as f64;
        prop_assert!((mean - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn bradley_terry_does_not_depend_on_game_order(rows in games_strategy(), rotate in 0usize..60) {
        prop_assume!(!rows.is_empty());
        let games = build(&rows);
        let mut reordered = rows.clone();
        reordered.reverse();
        let k = rotate % reordered.len();
        reordered.rotate_left(k);
        let other = build(&reordered);
        match (bradley_terry(&games, 1000.0, 0, 0), bradley_terry(&other, 1000.0, 0, 0)) {
            (Ok(x), Ok(y)) => {
                for r in &x.ratings {
                    let s = y.ratings.iter().find(|s| s.agent == r.agent).unwrap();
                    prop_assert!((r.rating - s.rating).abs() < 1e-7, "{} vs {}", r.rating, s.rating);
                }
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string().is_empty(), b.to_string().is_empty()),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
        }
    }

    #[test]
    fn parsers_never_panic(text in "(qid,agent_a,agent_b,answer\n)?[ -~\"\n\r,{}:\\[\\]]{0,200}") {
        let _ = ragelo_csv::parse("x.csv", &text);
        let _ = ragelo_jsonl::parse("x.jsonl", &text);
        let _ = topic_scores::parse("x", &text, None);
    }
}

#[test]
fn csv_quoting_crlf_metadata_and_leading_spaces() {
    let text = "\u{feff}qid,agent_a,agent_b,raw_answer,answer,relevance,judge\r\n\
                q1, x, y,\"line one\r\nline two, \"\"quoted\"\"\", [[A]],2,gpt\r\n\
                \r\n\
                q1,y,x,plain,C,,gpt\r\n";
    let games = ragelo_csv::parse_pairwise("g.csv", text).unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].agent_a, "x");
    assert_eq!(games[0].agent_b, "y");
    assert_eq!(games[0].raw_answer, "line one\r\nline two, \"quoted\"");
    assert_eq!(games[0].verdict, Verdict::A);
    assert_eq!(games[0].relevance, "2");
    assert_eq!(
        games[0].metadata,
        vec![("judge".to_string(), "gpt".to_string())]
    );
    assert_eq!(games[1].line, 5);
    assert_eq!(games[1].verdict, Verdict::Tie);
    let flips = position_flips(&Games::from_evaluations(&games));
    assert_eq!((flips.both_orders, flips.flips), (1, 1));
}

#[test]
fn ragelo_files_are_recognised_and_read() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/ragelo/");
    let read = |p: &str| std::fs::read_to_string(format!("{dir}{p}")).unwrap();
    use ragelo_csv::RageloFile;
    match ragelo_csv::parse("queries.csv", &read("tests_data/queries.csv")).unwrap() {
        RageloFile::Queries(q) => {
            assert_eq!(q.len(), 2);
            assert_eq!(q[0].query, "What is the capital of Brazil?");
        }
        other => panic!("{other:?}"),
    }
    match ragelo_csv::parse("answers.csv", &read("tests_data/answers.csv")).unwrap() {
        RageloFile::Answers(a) => {
            assert_eq!(a.len(), 4);
            assert_eq!(a[1].agent, "agent2");
        }
        other => panic!("{other:?}"),
    }
    // The notebook's documents.csv puts qid third and adds an `agent` column (metadata).
    match ragelo_csv::parse("documents.csv", &read("notebooks/documents.csv")).unwrap() {
        RageloFile::Documents(d) => {
            assert_eq!(d.len(), 200);
            assert_eq!(d[0].did, "doc_0");
            assert_eq!(d[0].metadata[0].0, "agent");
        }
        other => panic!("{other:?}"),
    }
    match ragelo_csv::parse("p.csv", &read("notebooks/pairwise_answers_evaluations.csv")).unwrap() {
        RageloFile::PairwiseEvaluations(p) => {
            assert_eq!(p.len(), 200);
            let counts = |v| p.iter().filter(|e| e.verdict == v).count();
            // Python's csv module on the same file: A 80, B 94, C 26.
            assert_eq!(
                (counts(Verdict::A), counts(Verdict::B), counts(Verdict::Tie)),
                (80, 94, 26)
            );
        }
        other => panic!("{other:?}"),
    }
    let jsonl = ragelo_jsonl::parse("a.jsonl", &read("tests_data/answers_eval.jsonl")).unwrap();
    assert_eq!(jsonl.len(), 4);
    assert_eq!(
        (jsonl[1].agent_a.as_str(), jsonl[1].verdict),
        ("agent2", Verdict::A)
    );
}

#[test]
fn errors_name_file_line_column() {
    let e =
        ragelo_csv::parse_pairwise("g.csv", "qid,agent_a,agent_b,answer\nq,x,x,A\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "g.csv:2:5: field `agent_b`: agent 'x' plays against itself"
    );
    let e = ragelo_csv::parse_pairwise("g.csv", "qid,agent_a,answer\nq,x,A\n").unwrap_err();
    assert!(e.to_string().contains("needs a 'agent_b' column"), "{e}");
    let e = ragelo_csv::parse_pairwise("g.csv", "qid,agent_a,agent_b,answer\nq,x,y\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "g.csv:2:1: 3 field(s) where the header has 4"
    );
    let e = ragelo_jsonl::parse(
        "a.jsonl",
        "{\"query_id\":\"1\",\"agent_a\":\"x\",\"agent_b\":\"y\",\"relevant\":\"Q\"}\n",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "a.jsonl:1:45: field `relevant`: verdict 'Q' is not A, B or C (tie)"
    );
}

#[test]
fn bradley_terry_two_agents_closed_form() {
    // Two agents, i took 3.5 points of 5 (3 wins, 1 tie, 1 loss): π_i/π_j = 3.5/1.5, so the
    // ratings differ by 400·log10(7/3) and average to `initial`.
    let v = |s| Verdict::parse(s).unwrap();
    let games = Games::from_triples([
        ("q1", "i", "j", v("A")),
        ("q2", "j", "i", v("B")),
        ("q3", "i", "j", v("A")),
        ("q4", "i", "j", v("C")),
        ("q5", "j", "i", v("A")),
    ]);
    let r = bradley_terry(&games, 1500.0, 0, 0).unwrap().ratings;
    let diff = 400.0 * (7.0f64 / 3.0).log10();
    assert!((r[0].rating - (1500.0 + diff / 2.0)).abs() < 1e-9, "{r:?}");
    assert!((r[1].rating - (1500.0 - diff / 2.0)).abs() < 1e-9, "{r:?}");
}

#[test]
fn trec_eval_q_output_of_several_runs_is_split_at_runid_lines() {
    let text = "map\tq1\t0.5\nP_5\tq1\t0.2\nmap\tq2\t0.25\nrunid\tall\tA\nmap\tall\t0.375\n\
                map\tq1\t0.1\nmap\tq2\t0.9\nrunid\tall\tB\n";
    let t = topic_scores::parse("scores.txt", text, Some("map")).unwrap();
    assert_eq!(t.runs.len(), 2);
    assert_eq!(t.runs["A"]["q2"], 0.25);
    assert_eq!(t.runs["B"]["q1"], 0.1);
    let e = topic_scores::parse("scores.txt", text, None).unwrap_err();
    assert!(
        e.to_string().contains("2 measures in the file (P_5, map)"),
        "{e}"
    );
    let e = topic_scores::parse("s.txt", "map\tq1\tx\n", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.txt:1:8: field `map`: value 'x' is not a number"
    );
}
