//! `ragscope calibrate --nuggets` and `--pairwise`: the same estimates for answer-level
//! judgments, nugget scores per topic and pairwise games (see calibrate.rs and
//! docs/calibration.md).

use std::collections::HashMap;

use super::calibrate::{estimate_run, grid, json, Args, Unit};
use super::common::Format;

/// Estimates of nugget scores: one unit per topic of each run in the judge's assignments.
pub fn nuggets(args: &Args, weights: Option<&HashMap<String, f64>>) -> Result<String, String> {
    use ragscope_eval::answers::nugget_scores::{score_run, Compat, SCORE_NAMES};
    use ragscope_eval::calibration::units::nugget_units;
    if !SCORE_NAMES.contains(&args.measure.as_str()) {
        return Err(format!(
            "with --nuggets, -m is one of {} (got {:?})",
            SCORE_NAMES.join(", "),
            args.measure
        ));
    }
    if args.unit == Unit::Item || args.agreement {
        return Err("--nuggets estimates per-topic scores: no --unit item or --agreement".into());
    }
    let score = |path: &str| -> Result<Vec<_>, String> {
        let runs = super::nuggets::read_runs(path)?;
        Ok(runs.iter().map(|r| score_run(r, Compat::Paper)).collect())
    };
    let judge = score(&args.judge)?;
    let human = score(&args.human)?;
    let wanted: Vec<&str> = if args.runs.is_empty() {
        judge.iter().map(|r| r.run_id.as_str()).collect()
    } else {
        args.runs.iter().map(String::as_str).collect()
    };
    let mut results = Vec::new();
    for run_id in wanted {
        let ids = |all: &[ragscope_eval::answers::nugget_scores::RunScores]| {
            all.iter()
                .map(|r| r.run_id.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let j = judge
            .iter()
            .find(|r| r.run_id == run_id)
            .ok_or_else(|| format!("{}: no run '{run_id}' (runs: {})", args.judge, ids(&judge)))?;
        let h = human
            .iter()
            .find(|r| r.run_id == run_id)
            .ok_or_else(|| format!("{}: no run '{run_id}' (runs: {})", args.human, ids(&human)))?;
        let units = nugget_units(j, h, &args.measure)
            .ok_or_else(|| format!("unknown nugget score {:?}", args.measure))?;
        let path = format!("{} run '{run_id}'", args.judge);
        results.push(estimate_run(args, &path, run_id, &units, weights)?);
    }
    Ok(match args.format {
        Format::Json => json(args, &args.measure, &results),
        other => grid(&results).render(other),
    })
}

/// Win rates: one estimate per pair of agents of the judge's games, in first-appearance order.
pub fn pairwise(args: &Args, weights: Option<&HashMap<String, f64>>) -> Result<String, String> {
    use ragscope_eval::calibration::units::pairwise_units;
    if args.measure != "win_rate" {
        return Err(format!(
            "with --pairwise, -m is win_rate (got {:?})",
            args.measure
        ));
    }
    if weights.is_some() || !args.runs.is_empty() || args.agreement || args.unit == Unit::Item {
        return Err(
            "--pairwise takes no --weights (not yet), RUN arguments, --agreement or --unit item"
                .into(),
        );
    }
    let judge = super::elo::read_games(&args.judge)?;
    let human = super::elo::read_games(&args.human)?;
    let mut results = Vec::new();
    for (i, first) in judge.agents.iter().enumerate() {
        for second in &judge.agents[i + 1..] {
            let units = pairwise_units(&judge, &human, first, second)
                .map_err(|e| format!("{}: {e}", args.human))?;
            if units.judge.is_empty() {
                continue;
            }
            let name = format!("{first} vs {second}");
            let labelled = units.num_labelled();
            if labelled < 2 {
                eprintln!(
                    "ragscope calibrate: {name}: {labelled} game(s) with a human verdict, \
                     left out (an interval needs 2)"
                );
                continue;
            }
            let path = format!("{} ({name})", args.judge);
            results.push(estimate_run(args, &path, &name, &units, None)?);
        }
    }
    if results.is_empty() {
        return Err(format!(
            "no pair of agents has 2 games judged in both '{}' and '{}'",
            args.judge, args.human
        ));
    }
    Ok(match args.format {
        Format::Json => json(args, "win_rate", &results),
        other => grid(&results).render(other),
    })
}
