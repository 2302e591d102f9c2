//! The worker's logic on trec_eval's own files, natively.

use super::engine::{detect_kind, Workspace};
use crate::protocol::{FileKind, Request, Response};

fn data(name: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/trec_eval/");
    std::fs::read(format!("{path}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn summary(name: &str) -> Vec<(String, String)> {
    String::from_utf8(data(name))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 3 && f[1] == "all").then(|| (f[0].trim().to_string(), f[2].to_string()))
        })
        .collect()
}

#[test]
fn kinds_are_detected_from_content() {
    assert_eq!(detect_kind(&data("qrels.test")), Some(FileKind::Qrels));
    assert_eq!(
        detect_kind(&data("qrels.test.with-comments")),
        Some(FileKind::Qrels)
    );
    assert_eq!(detect_kind(&data("results.test")), Some(FileKind::Run));
    assert_eq!(detect_kind(b"just some text\n"), None);
    assert_eq!(detect_kind(b""), None);
}

#[test]
fn the_report_shows_what_trec_eval_prints() {
    let mut ws = Workspace::default();
    for (id, f) in ["qrels.test", "results.test"].into_iter().enumerate() {
        let r = ws.handle(Request::Load {
            id: id as u32,
            name: f.into(),
            bytes: data(f),
        });
        assert!(matches!(r, Some(Response::Loaded { .. })), "{r:?}");
    }
    let measures = ["MAP", "MRR", "nDCG@10", "P@10", "R@100", "bpref", "Rprec"];
    let Some(Response::Report(report)) = ws.handle(Request::Evaluate {
        measures: measures.iter().map(|s| s.to_string()).collect(),
    }) else {
        panic!("no report")
    };
    let expected = summary("out.test.a");
    let mut compared = 0;
    for (m, v) in report.measures.iter().zip(&report.runs[0].means) {
        let trec = m
            .trec_name
            .as_deref()
            .expect("every default measure has a trec_eval name");
        let (_, want) = expected.iter().find(|(n, _)| n == trec).expect(trec);
        assert_eq!(&format!("{v:.4}"), want, "{} ({trec})", m.name);
        assert!(!m.explanation.is_empty(), "{} has no explanation", m.name);
        compared += 1;
    }
    assert_eq!(compared, measures.len());
    assert_eq!(report.runs[0].num_queries, 3);
}

#[test]
fn a_bad_file_is_refused_and_nothing_loaded_is_lost() {
    let mut ws = Workspace::default();
    ws.handle(Request::Load {
        id: 0,
        name: "qrels.test".into(),
        bytes: data("qrels.test"),
    });
    ws.handle(Request::Load {
        id: 1,
        name: "results.test".into(),
        bytes: data("results.test"),
    });
    let bad = b"301 Q0 d1 1 0.5 t\n301 Q0 d2 2 oops t\n".to_vec();
    match ws.handle(Request::Load {
        id: 2,
        name: "bad.run".into(),
        bytes: bad,
    }) {
        Some(Response::LoadFailed { error, .. }) => {
            assert!(
                error.contains("bad.run") && error.contains("oops"),
                "{error}"
            );
        }
        other => panic!("expected a load failure, got {other:?}"),
    }
    let r = ws.handle(Request::Evaluate {
        measures: vec!["MAP".into()],
    });
    assert!(
        matches!(r, Some(Response::Report(ref rep)) if rep.runs.len() == 1),
        "{r:?}"
    );
}
