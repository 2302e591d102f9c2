//! trec_eval::run never panics, whatever the judgments format, flags and file contents.

use proptest::prelude::*;

fn line(fields: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("1".to_string()),
            Just("2".to_string()),
            Just("0".to_string()),
            Just("-1".to_string()),
            Just("2.5".to_string()),
            Just("d1".to_string()),
            Just("d2".to_string()),
            Just("d3".to_string()),
            Just("Q0".to_string()),
            Just("a".to_string()),
            Just("b".to_string()),
        ],
        fields..=fields,
    )
    .prop_map(|f| f.join(" "))
}

fn file(fields: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![line(fields), line(fields - 1), line(fields + 1)],
        0..25,
    )
    .prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn any_format_and_flags(
        format in prop_oneof![Just("qrels"), Just("qrels_jg"), Just("prefs"), Just("qrels_prefs")],
        rel in file(5),
        qrels in file(4),
        run in file(6),
        flags in proptest::sample::subsequence(vec!["-q", "-c", "-n", "-J", "-M2", "-l2", "-l0", "-mall_trec", "-mall_prefs", "-mqrels_jg", "-mP.1,2", "-mrelstring.3"], 0..5),
    ) {
        let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        args.extend(["-R".to_string(), format.to_string(), "rel".to_string(), "run".to_string()]);
        let judgments = if format == "prefs" { rel.clone() } else { qrels.clone() };
        let _ = ragscope_eval::trec_eval::run(&args, &mut |name: &str| {
            Ok(if name == "rel" { judgments.clone().into_bytes() } else { run.clone().into_bytes() })
        });
    }
}
