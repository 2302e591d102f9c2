//! Measures by their common names: parsing, printing, and agreement with trec_eval on
//! trec_eval's own test data.

use std::collections::HashMap;

use proptest::prelude::*;
use ragscope_eval::measures::{Gain, MeasureKind};
use ragscope_eval::{evaluate, parse_qrels, parse_run, Measure};

fn data(name: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval/"
    );
    std::fs::read(format!("{path}{name}")).expect("oracle data (../shared/data) must exist")
}

#[test]
fn common_names_parse_and_print() {
    for (text, shown) in [
        ("nDCG@10", "nDCG@10"),
        ("ndcg@10", "nDCG@10"),
        ("P@5", "P@5"),
        ("R@100", "R@100"),
        ("MAP", "MAP"),
        ("AP", "MAP"),
        ("MAP@100", "MAP@100"),
        ("MRR", "MRR"),
        ("RR@10", "RR@10"),
        ("MRR@10", "RR@10"),
        ("Success@1", "Success@1"),
        ("Rprec", "Rprec"),
        ("bpref", "bpref"),
        ("NumRet", "NumRet"),
        ("NumRel", "NumRel"),
        ("NumRelRet", "NumRelRet"),
        ("P(rel=2)@5", "P(rel=2)@5"),
        ("nDCG(gain=exp)@10", "nDCG(gain=exp)@10"),
        ("nDCG(gain=linear)@10", "nDCG@10"),
        (" Judged@10 ", "Judged@10"),
    ] {
        let m: Measure = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(m.to_string(), shown, "{text}");
    }
    for bad in [
        "P",
        "bpref@10",
        "foo",
        "nDCG@0",
        "nDCG@x",
        "P(rel=x)@5",
        "MAP(gain=exp)",
        "P(rel=2@5",
    ] {
        assert!(bad.parse::<Measure>().is_err(), "{bad} should not parse");
    }
}

fn any_measure() -> impl Strategy<Value = Measure> {
    let kinds = prop_oneof![
        Just((MeasureKind::AP, 1u8)),
        Just((MeasureKind::RR, 1)),
        Just((MeasureKind::NDCG, 1)),
        Just((MeasureKind::P, 2)),
        Just((MeasureKind::R, 2)),
        Just((MeasureKind::Success, 2)),
        Just((MeasureKind::Judged, 2)),
        Just((MeasureKind::Rprec, 0)),
        Just((MeasureKind::Bpref, 0)),
        Just((MeasureKind::NumRel, 0)),
        Just((MeasureKind::SetF, 0)),
    ];
    (
        kinds,
        1u32..2000,
        any::<bool>(),
        proptest::option::of(-3i32..5),
        any::<bool>(),
    )
        .prop_map(|((kind, rule), k, with_k, rel, exp)| {
            let cutoff = match rule {
                2 => Some(k),
                1 if with_k => Some(k),
                _ => None,
            };
            let rel = if matches!(kind, MeasureKind::NDCG | MeasureKind::Judged) {
                None
            } else {
                rel
            };
            let gain = if kind == MeasureKind::NDCG && exp {
                Gain::Exp
            } else {
                Gain::Linear
            };
            Measure {
                kind,
                cutoff,
                rel,
                gain,
            }
        })
}

proptest! {
    #[test]
    fn display_round_trips(m in any_measure()) {
        let text = m.to_string();
        let back: Measure = text.parse().map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back, m);
    }
}

/// `(measure name, qid) -> printed value` from trec_eval's `-q` output.
fn trec_eval_table(args: &[&str]) -> HashMap<(String, String), String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out =
        ragscope_eval::trec_eval::run(&args, &mut |name: &str| Ok(data(name))).expect("trec_eval");
    out.lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                (f[0].trim_end().to_string(), f[1].to_string()),
                f[2].to_string(),
            )
        })
        .collect()
}

fn agree(qrels: &str, run: &str, level: i32) {
    let measures: Vec<Measure> = [
        "MAP",
        "MAP@100",
        "MRR",
        "nDCG",
        "nDCG@10",
        "nDCG@20",
        "P@5",
        "P@10",
        "R@100",
        "R@1000",
        "Success@1",
        "Success@10",
        "Rprec",
        "bpref",
        "infAP",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "SetP",
        "SetR",
        "SetF",
    ]
    .iter()
    .map(|t| {
        let mut m: Measure = t.parse().expect("measure");
        if level != 1 && !matches!(m.kind, MeasureKind::NDCG | MeasureKind::NumRet) {
            m.rel = Some(level);
        }
        m
    })
    .collect();
    let l = format!("-l{level}");
    let table = trec_eval_table(&[
        "-q",
        &l,
        "-m",
        "map",
        "-m",
        "map_cut.100",
        "-m",
        "recip_rank",
        "-m",
        "ndcg",
        "-m",
        "ndcg_cut.10,20",
        "-m",
        "P.5,10",
        "-m",
        "recall.100,1000",
        "-m",
        "success.1,10",
        "-m",
        "Rprec",
        "-m",
        "bpref",
        "-m",
        "infAP",
        "-m",
        "num_ret",
        "-m",
        "num_rel",
        "-m",
        "num_rel_ret",
        "-m",
        "set_P",
        "-m",
        "set_recall",
        "-m",
        "set_F",
        qrels,
        run,
    ]);
    let q = parse_qrels(qrels, &data(qrels)).expect("qrels");
    let r = parse_run(run, &data(run)).expect("run");
    let results = evaluate(&q, &r, &measures);
    assert!(!results.topics.is_empty());
    for m in &measures {
        let (name, te_level) = m
            .trec_eval_equivalent()
            .expect("has a trec_eval equivalent");
        assert!(te_level == level || matches!(m.kind, MeasureKind::NDCG | MeasureKind::NumRet));
        let show = |v: f64| {
            if m.is_count() {
                format!("{}", v as i64)
            } else {
                format!("{v:6.4}")
            }
        };
        for (qid, v) in results.per_query(m) {
            let expected = table
                .get(&(name.clone(), qid.to_string()))
                .unwrap_or_else(|| panic!("{name} {qid}"));
            assert_eq!(
                &show(v),
                expected,
                "{m} vs {name} on topic {qid} ({qrels} {run} -l{level})"
            );
        }
        let summary = results.summary(m).expect("summary");
        assert_eq!(
            &show(summary),
            &table[&(name.clone(), "all".to_string())],
            "{m} summary"
        );
    }
}

#[test]
fn agrees_with_trec_eval_on_binary_qrels() {
    agree("qrels.test", "results.test", 1);
}

#[test]
fn agrees_with_trec_eval_on_graded_qrels_and_level_2() {
    agree("qrels.rel_level", "results.test", 1);
    agree("qrels.rel_level", "results.test", 2);
}

#[test]
fn agrees_with_trec_eval_on_ties_and_hash_docnos() {
    agree("qrels.comment.test", "results.comment.test", 1);
    agree("qrels.comment.test", "results.comment.test", 3);
}

#[test]
fn exp_gain_equals_trec_eval_ndcg_with_matching_gains() {
    // nDCG(gain=exp) over the whole ranking is trec_eval's ndcg with gains 2^rel - 1
    let q = parse_qrels("q", &data("qrels.rel_level")).expect("qrels");
    let r = parse_run("r", &data("results.test")).expect("run");
    let m: Measure = "nDCG(gain=exp)".parse().expect("measure");
    let results = evaluate(&q, &r, &[m]);
    let table = trec_eval_table(&[
        "-q",
        "-m",
        "ndcg.1=1,2=3,3=7,4=15",
        "qrels.rel_level",
        "results.test",
    ]);
    for (qid, v) in results.per_query(&m) {
        assert_eq!(
            format!("{v:6.4}"),
            table[&("ndcg_1=1,2=3,3=7,4=15".to_string(), qid.to_string())]
        );
    }
}
