//! Natively, `evaluate` scores large topic sets on two threads; every value and the topic
//! order must equal the serial computation (a topic evaluated alone takes the serial path).

use ragscope_eval::{evaluate, parse_qrels, parse_run, Measure};

fn texts(topics: usize) -> (String, String) {
    let (mut run, mut qrels) = (String::new(), String::new());
    for t in 0..topics {
        for d in 0..60 {
            let score = ((t * 31 + d * 17) % 23) as f64 / 3.0; // many ties
            run.push_str(&format!("t{t:03} Q0 d{d} {d} {score} r\n"));
            if (t + d) % 3 == 0 {
                qrels.push_str(&format!("t{t:03} 0 d{d} {}\n", (t + d) % 4));
            }
        }
        qrels.push_str(&format!("t{t:03} 0 unretrieved 2\n"));
    }
    (run, qrels)
}

#[test]
fn many_topics_score_as_each_topic_alone() {
    let measures: Vec<Measure> = [
        "MAP",
        "MRR",
        "nDCG@10",
        "P(rel=2)@5",
        "R@50",
        "bpref",
        "Rprec",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect();
    let (run_text, qrels_text) = texts(200);
    let all = evaluate(
        &parse_qrels("q", qrels_text.as_bytes()).unwrap(),
        &parse_run("r", run_text.as_bytes()).unwrap(),
        &measures,
    );
    assert_eq!(all.topics.len(), 200);
    for (i, qid) in all.topics.iter().enumerate() {
        let keep = |text: &str| -> String {
            text.lines()
                .filter(|l| l.starts_with(qid.as_str()))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let alone = evaluate(
            &parse_qrels("q", keep(&qrels_text).as_bytes()).unwrap(),
            &parse_run("r", keep(&run_text).as_bytes()).unwrap(),
            &measures,
        );
        assert_eq!(alone.topics, vec![qid.clone()]);
        for (m, values) in all.values.iter().enumerate() {
            assert_eq!(
                values[i].to_bits(),
                alone.values[m][0].to_bits(),
                "{qid} {}",
                measures[m]
            );
        }
    }
}
