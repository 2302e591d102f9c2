//! Natively, `trec_eval` scores 64 topics or more on two threads, then sums and prints in topic
//! order. Every per-query line must equal what the topic prints when evaluated alone, and the
//! summary must be the topic-order sum (checked against the per-query lines printed).

use ragscope_eval::trec_eval;

fn texts(topics: usize) -> (String, String) {
    let (mut run, mut qrels) = (String::new(), String::new());
    for t in 0..topics {
        for d in 0..40 {
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

fn trec_eval(flags: &[&str], qrels: &str, run: &str) -> String {
    let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    args.extend(["q".to_string(), "r".to_string()]);
    let (qrels, run) = (qrels.to_string(), run.to_string());
    trec_eval::run(&args, &mut |name| {
        Ok(if name == "q" { &qrels } else { &run }.as_bytes().to_vec())
    })
    .unwrap()
}

#[test]
fn many_topics_print_as_each_topic_alone() {
    let (run, qrels) = texts(130);
    let flags = ["-q", "-m", "all_trec"];
    let all = trec_eval(&flags, &qrels, &run);
    let mut topics = 0;
    for t in 0..130 {
        let qid = format!("t{t:03}");
        let keep = |text: &str| -> String {
            text.lines()
                .filter(|l| l.starts_with(qid.as_str()))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let alone = trec_eval(&flags, &keep(&qrels), &keep(&run));
        let of_topic = |out: &str| -> Vec<String> {
            out.lines()
                .filter(|l| l.split('\t').nth(1) == Some(qid.as_str()))
                .map(str::to_string)
                .collect()
        };
        let lines = of_topic(&alone);
        assert!(lines.len() > 90, "{qid}: {} lines", lines.len());
        assert_eq!(of_topic(&all), lines, "{qid}");
        topics += 1;
    }
    assert_eq!(topics, 130);
    // num_ret sums the per-query counts.
    let num_ret: i64 = all
        .lines()
        .filter(|l| l.starts_with("num_ret") && !l.contains("\tall\t"))
        .map(|l| l.rsplit('\t').next().unwrap().parse::<i64>().unwrap())
        .sum();
    assert_eq!(num_ret, 130 * 40);
    assert!(all.contains(&format!("num_ret               \tall\t{num_ret}\n")));
    assert!(all.contains("num_q                 \tall\t130\n"));
}

#[test]
fn the_first_missing_topic_is_named_with_many_topics() {
    let (run, qrels) = texts(130);
    let run: String = run
        .lines()
        .filter(|l| !l.starts_with("t020") && !l.starts_with("t100"))
        .map(|l| format!("{l}\n"))
        .collect();
    let args: Vec<String> = ["q", "r"].iter().map(|s| s.to_string()).collect();
    let e = trec_eval::run(&args, &mut |name| {
        Ok(if name == "q" { &qrels } else { &run }.as_bytes().to_vec())
    })
    .unwrap_err();
    assert_eq!(e.exit_code, 4);
    assert!(e.message.contains("topic 't020'"), "{}", e.message);
}
