//! Elo, Bradley–Terry and agreement against independent oracles: RAGElo's own test data
//! (agents_ranking.csv, elo_oracle.json) and the fixtures of tests/oracle/tournament/generate.py
//! (PyPI ragelo 0.7.0, scipy, scikit-learn, krippendorff).

use std::path::PathBuf;

use ragscope_eval::answers::bradley_terry::{bradley_terry, BtError};
use ragscope_eval::answers::elo::{elo, schedule, tournament, EloCompat, EloParams};
use ragscope_eval::answers::games::{Games, Verdict};
use ragscope_eval::answers::ragelo_csv;
use ragscope_eval::stats::agreement::{
    cohen_kappa, krippendorff_alpha, run_agreement, weighted_kappa_linear,
    weighted_kappa_quadratic, Level,
};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared(path: &str) -> PathBuf {
    root().join("../shared/data/ragelo").join(path)
}

fn fixture(name: &str) -> Vec<Value> {
    let path = root()
        .join("crates/eval/tests/fixtures/tournament")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    value["cases"].as_array().unwrap().clone()
}

fn games_from_file(path: &PathBuf) -> Games {
    let text = std::fs::read_to_string(path).unwrap();
    let evaluations = ragelo_csv::parse_pairwise(&path.display().to_string(), &text).unwrap();
    Games::from_evaluations(&evaluations)
}

fn games_of(case: &Value) -> Games {
    if let Some(file) = case["file"].as_str() {
        return games_from_file(&root().join(file));
    }
    let rows: Vec<(String, String, String, Verdict)> = case["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let s = |i: usize| g[i].as_str().unwrap().to_string();
            (s(0), s(1), s(2), Verdict::parse(&s(3)).unwrap())
        })
        .collect();
    Games::from_triples(
        rows.iter()
            .map(|(q, a, b, v)| (q.as_str(), a.as_str(), b.as_str(), *v)),
    )
}

fn agent_index(games: &Games, name: &str) -> usize {
    games.agents.iter().position(|a| a == name).unwrap()
}

#[test]
fn ragelo_tests_data_gives_agents_ranking_csv() {
    let games = games_from_file(&shared("tests_data/pairwise_answers_evaluations.csv"));
    let params = EloParams {
        shuffle: false,
        compat: EloCompat::Ragelo,
        ..EloParams::default()
    };
    let ratings = elo(&games, &params);
    // RAGElo's tests/data/agents_ranking.csv: agent,score / agent1,1030 / agent2,969.
    let expected = std::fs::read_to_string(shared("tests_data/agents_ranking.csv")).unwrap();
    for line in expected.lines().skip(1) {
        let (agent, score) = line.split_once(',').unwrap();
        let r = &ratings[agent_index(&games, agent)];
        assert_eq!(r.rating, score.parse::<f64>().unwrap(), "{agent}");
        assert_eq!(r.std, 0.0);
    }
    // elo_oracle.json: the same two games under the standard formula.
    let oracle: Value =
        serde_json::from_str(&std::fs::read_to_string(shared("elo_oracle.json")).unwrap()).unwrap();
    let standard = &oracle["expected_pre_4f588d7_standard_formula_E=1/(1+10^((Rb-Ra)/400))"];
    for agent in ["agent1", "agent2"] {
        assert_eq!(
            ratings[agent_index(&games, agent)].rating,
            standard[agent].as_f64().unwrap()
        );
    }
}

#[test]
fn ragelo_070_elo_ranker_reproduced() {
    for case in fixture("ragelo_elo.json") {
        let name = case["name"].as_str().unwrap();
        let games = games_of(&case);
        let params = EloParams {
            k: case["k"].as_f64().unwrap_or(32.0),
            initial: case["initial"].as_f64().unwrap_or(1000.0),
            tournaments: case["tournaments"].as_u64().unwrap() as usize,
            seed: 0,
            shuffle: false,
            compat: EloCompat::Ragelo,
        };
        let expected = case["expected"].as_object().unwrap();
        assert_eq!(expected.len(), games.agents.len(), "{name}");
        let got: Vec<(f64, f64)> = match case["permutations"].as_array() {
            None => elo(&games, &params)
                .into_iter()
                .map(|r| (r.rating, r.std))
                .collect(),
            Some(perms) => {
                // ragelo shuffled its schedule with these permutations: play the same orders.
                let base = schedule(&games, EloCompat::Ragelo);
                let runs: Vec<Vec<f64>> = perms
                    .iter()
                    .map(|p| {
                        let order: Vec<_> = p
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|i| base[i.as_u64().unwrap() as usize])
                            .collect();
                        tournament(&order, games.agents.len(), &params)
                    })
                    .collect();
                (0..games.agents.len())
                    .map(|i| {
                        let v: Vec<f64> = runs.iter().map(|r| r[i]).collect();
                        let m = v.iter().sum::<f64>() / v.len() as f64;
                        let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
                        (m, var.sqrt())
                    })
                    .collect()
            }
        };
        for (agent, want) in expected {
            let (rating, std) = got[agent_index(&games, agent)];
            assert_eq!(rating, want["rating"].as_f64().unwrap(), "{name} {agent}");
            let want_std = want["std"].as_f64().unwrap();
            assert!(
                (std - want_std).abs() <= 1e-9 * want_std.max(1.0),
                "{name} {agent}: std {std} vs {want_std}"
            );
        }
    }
}

#[test]
fn bradley_terry_matches_scipy_mle() {
    for case in fixture("bradley_terry.json") {
        let name = case["name"].as_str().unwrap();
        let games = games_of(&case);
        let initial = case["initial"].as_f64().unwrap();
        let result = bradley_terry(&games, initial, 0, 0).unwrap();
        for (agent, want) in case["expected"].as_object().unwrap() {
            let got = result.ratings[agent_index(&games, agent)].rating;
            let want = want.as_f64().unwrap();
            assert!((got - want).abs() < 1e-6, "{name} {agent}: {got} vs {want}");
        }
        let mean: f64 =
            result.ratings.iter().map(|r| r.rating).sum::<f64>() / result.ratings.len() as f64;
        assert!((mean - initial).abs() < 1e-9);
    }
}

#[test]
fn bradley_terry_refuses_when_the_mle_does_not_exist() {
    let v = |s| Verdict::parse(s).unwrap();
    let undefeated = Games::from_triples([
        ("q1", "x", "y", v("A")),
        ("q1", "y", "z", v("A")),
        ("q2", "z", "y", v("A")),
    ]);
    match bradley_terry(&undefeated, 1000.0, 0, 0) {
        Err(BtError::NoMle(m)) => assert!(m.contains("'x' never lost"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Every agent won and lost, but {a, b} never lost to {c, d}.
    let split = Games::from_triples([
        ("q", "a", "b", v("A")),
        ("q", "b", "a", v("A")),
        ("q", "c", "d", v("A")),
        ("q", "d", "c", v("A")),
        ("q", "a", "c", v("A")),
        ("q", "b", "d", v("A")),
    ]);
    match bradley_terry(&split, 1000.0, 0, 0) {
        Err(BtError::NoMle(m)) => assert!(m.contains("never won or tied against"), "{m}"),
        other => panic!("{other:?}"),
    }
}

fn close(got: Option<f64>, want: &Value, what: &str) {
    match (got, want.as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "{what}: {g} vs {w}"),
        (None, None) => {}
        (g, w) => panic!("{what}: {g:?} vs {w:?}"),
    }
}

#[test]
fn kappa_and_alpha_match_sklearn_and_krippendorff() {
    for case in fixture("agreement_labels.json") {
        let name = case["name"].as_str().unwrap();
        let ints = |k: &str| -> Vec<i64> {
            case[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect()
        };
        let (a, b) = (ints("a"), ints("b"));
        let (fa, fb): (Vec<f64>, Vec<f64>) = (
            a.iter().map(|&x| x as f64).collect(),
            b.iter().map(|&x| x as f64).collect(),
        );
        close(cohen_kappa(&a, &b), &case["cohen"], name);
        close(weighted_kappa_linear(&a, &b), &case["linear"], name);
        close(weighted_kappa_quadratic(&a, &b), &case["quadratic"], name);
        for (level, key) in [
            (Level::Nominal, "alpha_nominal"),
            (Level::Ordinal, "alpha_ordinal"),
            (Level::Interval, "alpha_interval"),
        ] {
            close(krippendorff_alpha(&fa, &fb, level), &case[key], name);
        }
    }
}

#[test]
fn run_ranking_agreement_matches_scipy_kendalltau() {
    for case in fixture("agreement_runs.json") {
        let name = case["name"].as_str().unwrap();
        let cells: Vec<(String, String, f64, f64)> = case["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_str().unwrap().to_string(),
                    c[1].as_str().unwrap().to_string(),
                    c[2].as_f64().unwrap(),
                    c[3].as_f64().unwrap(),
                )
            })
            .collect();
        let got = run_agreement(&cells);
        close(got.run_means.tau, &case["run_means"], name);
        close(got.all_pairs.tau, &case["all_pairs"], name);
        close(got.per_topic.tau, &case["per_topic"], name);
        assert_eq!(got.run_means.items as u64, case["runs"].as_u64().unwrap());
        assert_eq!(got.all_pairs.items, cells.len());
        assert_eq!(got.per_topic.items as u64, case["topics"].as_u64().unwrap());
    }
}
