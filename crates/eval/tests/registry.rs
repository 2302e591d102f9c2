//! The measure registry the app shows as tooltips, and the library API around it.

use ragscope_eval::measures::{family, nickname, registry};
use ragscope_eval::{evaluate, parse_qrels, parse_run, Measure, DEFAULT_MEASURES};

#[test]
fn every_family_documents_formula_source_and_explanation() {
    let families = registry();
    assert_eq!(families.len(), 56);
    for f in families {
        assert!(
            !f.formula.is_empty() && !f.source.is_empty() && !f.explanation.is_empty(),
            "{}",
            f.name
        );
        assert!(f.source.contains("trec_eval"), "{}", f.name);
        let json = serde_json::to_value(f).expect("serialize");
        assert_eq!(json["name"], f.name);
    }
    let mut names: Vec<&str> = families.iter().map(|f| f.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), families.len(), "family names are unique");
}

#[test]
fn nicknames_name_only_registered_families() {
    for nick in [
        "official",
        "all_trec",
        "set",
        "qrels_jg",
        "all_prefs",
        "prefs",
    ] {
        for name in nickname(nick).expect("nickname") {
            assert!(family(name).is_some(), "{nick}: {name}");
        }
    }
    // all_trec is every family except dcg, ideal_dcg, 3 judgment-group and 14 prefs ones
    assert_eq!(
        nickname("all_trec").map(|l| l.len()),
        Some(registry().len() - 19)
    );
}

#[test]
fn default_measures_parse_and_evaluate() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval/"
    );
    let qrels = parse_qrels(
        "q",
        &std::fs::read(format!("{dir}qrels.test")).expect("qrels"),
    )
    .expect("qrels");
    let run = parse_run(
        "r",
        &std::fs::read(format!("{dir}results.test")).expect("run"),
    )
    .expect("run");
    let measures: Vec<Measure> = DEFAULT_MEASURES
        .iter()
        .map(|m| m.parse().expect("measure"))
        .collect();
    let results = evaluate(&qrels, &run, &measures);
    assert_eq!(results.topics, ["301", "302", "303"]);
    // out.test: map 0.1785, recip_rank 0.4064, bpref 0.1981, Rprec 0.2174
    let shown = |m: &str| {
        format!(
            "{:.4}",
            results.mean(&m.parse().expect("measure")).expect("mean")
        )
    };
    assert_eq!(shown("MAP"), "0.1785");
    assert_eq!(shown("MRR"), "0.4064");
    assert_eq!(shown("bpref"), "0.1981");
    assert_eq!(shown("Rprec"), "0.2174");
    let json = serde_json::to_string(&results).expect("results serialize");
    assert!(json.contains("\"topics\":[\"301\",\"302\",\"303\"]"));
}
