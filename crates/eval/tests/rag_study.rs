//! The correlation study against an independent Python/scipy computation
//! (tests/oracle/stats/generate_study.py → fixtures/rag/study_*.json*).

use ragscope_eval::rag::contexts;
use ragscope_eval::rag::correlation::{
    resolve_k, sensitivity, study, Coefficient, Metric, StudyConfig, StudyError,
};
use ragscope_eval::rag::report::{self, Format};
use ragscope_eval::rag::svm_rank::SvmOptions;
use ragscope_eval::rag::{synth, theta};
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/rag/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn mean_correlations_match_scipy_to_1e12() {
    let sets = contexts::parse(
        "study_contexts.jsonl",
        &fixture("study_contexts.jsonl"),
        None,
    )
    .unwrap();
    let expected: Value = serde_json::from_str(&fixture("study_expected.json")).unwrap();
    // The file mixes context sizes on purpose: without --k the study refuses.
    let err = resolve_k(&sets, None).unwrap_err();
    assert!(matches!(err, StudyError::UnequalK { .. }), "{err}");
    let config = StudyConfig {
        k: Some(4),
        resamples: 200,
        ..StudyConfig::default()
    };
    let result = study(&sets, &config).unwrap();
    assert_eq!(
        result,
        study(&sets, &config).unwrap(),
        "seeded and deterministic"
    );
    let groups = expected["groups"].as_array().unwrap();
    assert_eq!(result.groups.len(), groups.len());
    let mut compared = 0;
    for (ours, theirs) in result.groups.iter().zip(groups) {
        assert_eq!(ours.dataset, theirs["dataset"].as_str().unwrap());
        assert_eq!(ours.questions as u64, theirs["questions"].as_u64().unwrap());
        assert_eq!(
            ours.skipped_constant_outcome as u64,
            theirs["skipped_constant_outcome"].as_u64().unwrap()
        );
        for (name, coefficients) in theirs["means"].as_object().unwrap() {
            let row = ours
                .metrics
                .iter()
                .find(|r| r.metric.name() == name)
                .unwrap_or_else(|| panic!("{name} missing"));
            for (c, key) in [
                (Coefficient::Spearman, "spearman"),
                (Coefficient::KendallTauB, "kendall-tau-b"),
                (Coefficient::Pearson, "pearson"),
            ] {
                let want = coefficients[key].as_f64().unwrap();
                let got = row.get(c).mean;
                assert!((got - want).abs() < 1e-12, "{name} {key}: {got} vs {want}");
                let s = row.get(c);
                assert!(s.ci_low <= got + 1e-12 && got <= s.ci_high + 1e-12);
                compared += 1;
            }
        }
        // UDCGθ needs a model: reported, not silently zero.
        assert!(ours
            .unavailable
            .iter()
            .any(|(m, _)| *m == Metric::UdcgTheta));
        assert_eq!(ours.skipped_contexts, 1, "one 3-passage context per group");
    }
    assert_eq!(compared, 2 * 10 * 3);
}

#[test]
fn reports_render_in_every_format() {
    let sets = contexts::parse("s.jsonl", &fixture("study_contexts.jsonl"), None).unwrap();
    let config = StudyConfig {
        k: Some(4),
        resamples: 100,
        ..StudyConfig::default()
    };
    let result = study(&sets, &config).unwrap();
    let text = report::table3(&result, Format::Text, Coefficient::Spearman);
    assert!(text.contains("nq/llama") && text.contains("popqa/qwen") && text.contains("MRR"));
    let csv = report::table3(&result, Format::Csv, Coefficient::Spearman);
    // header + 2 groups × 10 metrics × 3 coefficients
    assert_eq!(csv.lines().count(), 1 + 60);
    let json: Value = serde_json::from_str(&report::table3(
        &result,
        Format::Json,
        Coefficient::Spearman,
    ))
    .unwrap();
    assert_eq!(json["groups"].as_array().unwrap().len(), 2);
    let latex = report::table3(&result, Format::Latex, Coefficient::KendallTauB);
    assert!(latex.contains("\\begin{tabular}{lcc}") && latex.contains("\\textbf{"));
}

#[test]
fn theta_trained_on_one_file_applies_to_another_and_round_trips() {
    let train = synth::context_sets(300, 10, 5, 1);
    let test = synth::context_sets(300, 10, 5, 2);
    let options = SvmOptions {
        c: 0.1,
        tolerance: 1e-4,
        max_epochs: 2000,
        seed: 3,
    };
    let model = theta::train(&train, 5, &options).unwrap();
    assert_eq!(
        model,
        theta::train(&train, 5, &options).unwrap(),
        "deterministic"
    );
    let reloaded = theta::ThetaModel::from_json(&model.to_json()).unwrap();
    assert_eq!(reloaded, model);
    let config = StudyConfig {
        theta: Some(reloaded),
        resamples: 100,
        ..StudyConfig::default()
    };
    let result = study(&test, &config).unwrap();
    let g = &result.groups[0];
    let rho = |m: Metric| {
        g.metrics
            .iter()
            .find(|r| r.metric == m)
            .unwrap()
            .spearman
            .mean
    };
    // The synthetic outcomes weigh the ends of the context more (lost in the middle): learned
    // position weights must order contexts at least as well as flat UDCG on held-out data.
    assert!(rho(Metric::UdcgTheta) >= rho(Metric::Udcg) - 0.01);
    assert!(theta::ThetaModel::from_json("{\"kind\":\"other\"}").is_err());
}

#[test]
fn sensitivity_covers_each_size_present() {
    let mut sets = synth::context_sets(100, 6, 3, 9);
    let more = synth::context_sets(100, 6, 7, 10);
    for (a, b) in sets.iter_mut().zip(more) {
        // Same question ids: merge the 7-passage contexts into the 3-passage sets.
        let offset = a.pool.len() as u32;
        a.pool.extend(b.pool);
        a.contexts.extend(b.contexts.into_iter().map(|mut c| {
            for p in &mut c.passages {
                *p += offset;
            }
            c
        }));
    }
    let results = sensitivity(&sets, &[1, 3, 5, 7], &StudyConfig::default());
    let ks: Vec<usize> = results.iter().map(|(k, _)| *k).collect();
    assert_eq!(ks, vec![3, 7]);
    let text = report::sensitivity(&results, Format::Text, Coefficient::Spearman);
    assert!(text.contains("k=3") && text.contains("k=7"));
}

#[test]
fn synthetic_sets_are_seeded() {
    assert_eq!(
        synth::context_sets(20, 10, 5, 4),
        synth::context_sets(20, 10, 5, 4)
    );
    assert_ne!(
        synth::context_sets(20, 10, 5, 4),
        synth::context_sets(20, 10, 5, 5)
    );
    let sets = synth::context_sets(50, 10, 5, 4);
    for s in &sets {
        let with_relevant = s
            .contexts
            .iter()
            .filter(|c| {
                c.passages
                    .iter()
                    .any(|&i| s.pool[i as usize].info.judgment.relevant)
            })
            .count();
        assert!(with_relevant >= 5, "balanced 50/50 at least");
    }
}
