//! Flags the trec_eval regression suite does not cover, checked against equivalent inputs.

fn data(name: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval/"
    );
    std::fs::read(format!("{path}{name}")).expect("oracle data (../shared/data) must exist")
}

fn run_with(args: &[&str], files: &[(&str, Vec<u8>)]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    ragscope_eval::trec_eval::run(&args, &mut |name: &str| {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b.clone())
            .ok_or_else(|| format!("no file {name}"))
    })
    .expect("trec_eval")
}

#[test]
fn judged_only_equals_dropping_unjudged_lines_from_the_run() {
    let qrels = data("qrels.test");
    let judged: std::collections::HashSet<(String, String)> = String::from_utf8_lossy(&qrels)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| (f[0].to_string(), f[2].to_string()))
        })
        .collect();
    let run = data("results.test");
    let filtered: String = String::from_utf8_lossy(&run)
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            judged.contains(&(f[0].to_string(), f[2].to_string()))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let files = [("q", qrels), ("r", run), ("f", filtered.into_bytes())];
    let with_flag = run_with(&["-J", "-q", "-m", "all_trec", "q", "r"], &files);
    let filtered_run = run_with(&["-q", "-m", "all_trec", "q", "f"], &files);
    assert_eq!(with_flag, filtered_run);
}

#[test]
fn collection_size_feeds_utility_fourth_coefficient() {
    let files = [("q", data("qrels.test")), ("r", data("results.test"))];
    let base = run_with(&["-q", "-m", "utility.1,-1,0,0", "q", "r"], &files);
    let with_n = run_with(
        &["-q", "-N", "100000", "-m", "utility.1,-1,0,1", "q", "r"],
        &files,
    );
    // out.test.aq: num_ret 500, num_rel 474, num_rel_ret 71 for topic 301, so the
    // non-relevant unretrieved documents are 100000 + 71 - 500 - 474 = 99097
    let value = |out: &str| -> f64 {
        out.lines()
            .find(|l| l.contains("\t301\t"))
            .and_then(|l| l.rsplit('\t').next())
            .and_then(|v| v.parse().ok())
            .expect("301 line")
    };
    assert_eq!(value(&with_n) - value(&base), 99097.0);
}
