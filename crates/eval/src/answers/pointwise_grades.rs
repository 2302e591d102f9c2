//! Pointwise answer grades as `ragscope judge pointwise` (and the app's Judges panel) write them:
//! a CSV `qid, agent, raw_answer, reasoning, score` (RAGElo's answer-evaluation CSVs start with
//! qid, agent, raw_answer), `score` a whole grade 0–2.
//!
//! A row whose `score` is empty is a failed grade: shown as failed, never scored (the judge's
//! own file leaves failed grades out; the app's view of a job writes them this way). Each
//! agent's mean grade is the plain mean of its graded queries (RAGElo's per-agent average of
//! its answer evaluations).

use crate::rag::InputError;

/// One row: `grade` None when the judgment failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    pub qid: String,
    pub agent: String,
    pub grade: Option<f64>,
}

/// Is this header line a pointwise grades CSV?
pub fn is_header(first_line: &str) -> bool {
    let names: Vec<&str> = first_line
        .trim_start_matches('\u{feff}')
        .split(',')
        .map(|h| h.trim().trim_matches('"'))
        .collect();
    ["qid", "agent", "score"].iter().all(|n| names.contains(n))
        && (names.contains(&"reasoning") || names.contains(&"raw_answer"))
}

pub fn parse(file: &str, text: &str) -> Result<Vec<Grade>, InputError> {
    let text = text.trim_start_matches('\u{feff}');
    let mut r = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let header = r
        .headers()
        .map_err(|e| InputError::new(file, 1, 1, "", e.to_string()))?
        .clone();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| h.trim() == n)
            .ok_or_else(|| InputError::new(file, 1, 1, n, format!("no '{n}' column")))
    };
    let (q, a, s) = (col("qid")?, col("agent")?, col("score")?);
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            InputError::new(file, line, 1, "", e.to_string())
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let get = |i: usize| rec.get(i).unwrap_or("").trim().to_string();
        let score = get(s);
        let grade = if score.is_empty() {
            None
        } else {
            let g: f64 = score.parse().map_err(|_| {
                InputError::new(
                    file,
                    line,
                    s + 1,
                    "score",
                    format!("'{score}' is not a grade"),
                )
            })?;
            // A grade outside the scale would pass into the agent's mean unseen (a 4 lifts a
            // mean of 0–2 grades above 2), so the reader holds the writer's scale.
            if !matches!(g, 0.0 | 1.0 | 2.0) {
                return Err(InputError::new(
                    file,
                    line,
                    s + 1,
                    "score",
                    format!("'{score}' is not a grade 0, 1 or 2"),
                ));
            }
            Some(g)
        };
        out.push(Grade {
            qid: get(q),
            agent: get(a),
            grade,
        });
    }
    Ok(out)
}

/// An agent's grades over queries.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentGrades {
    pub agent: String,
    /// Mean over graded queries; None when none was graded.
    pub mean: Option<f64>,
    pub graded: usize,
    pub failed: usize,
    /// (qid, grade or None when failed), in file order.
    pub per_query: Vec<(String, Option<f64>)>,
}

/// Each agent's grades, agents in first-seen order.
pub fn by_agent(grades: &[Grade]) -> Vec<AgentGrades> {
    let mut out: Vec<AgentGrades> = Vec::new();
    for g in grades {
        let i = match out.iter().position(|a| a.agent == g.agent) {
            Some(i) => i,
            None => {
                out.push(AgentGrades {
                    agent: g.agent.clone(),
                    mean: None,
                    graded: 0,
                    failed: 0,
                    per_query: Vec::new(),
                });
                out.len() - 1
            }
        };
        out[i].per_query.push((g.qid.clone(), g.grade));
    }
    for a in &mut out {
        let graded: Vec<f64> = a.per_query.iter().filter_map(|(_, g)| *g).collect();
        a.graded = graded.len();
        a.failed = a.per_query.len() - graded.len();
        a.mean = (!graded.is_empty()).then(|| graded.iter().sum::<f64>() / graded.len() as f64);
    }
    out
}

/// One row to write: a failed grade has `score` None (written empty) and says why in `reasoning`.
pub struct Row<'a> {
    pub qid: &'a str,
    pub agent: &'a str,
    pub raw_answer: &'a str,
    pub reasoning: &'a str,
    pub score: Option<u64>,
}

/// The grades CSV with its header, as [`parse`] reads it.
pub fn write(rows: &[Row]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(["qid", "agent", "raw_answer", "reasoning", "score"]);
    for r in rows {
        let score = r.score.map(|s| s.to_string()).unwrap_or_default();
        let _ = w.write_record([r.qid, r.agent, r.raw_answer, r.reasoning, &score]);
    }
    w.into_inner()
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_by_hand_and_failed_never_scored() {
        // a: 2, 1, 0 → 1; b: 2 and a failed grade → 2 (1 graded, 1 failed); c: only failed.
        let text = "qid,agent,raw_answer,reasoning,score\n1,a,x,r,2\n2,a,\"y, z\",r,1\n3,a,,r,0\n\
                    1,b,x,r,2\n2,b,,failed: truncated,\n1,c,,failed,\n";
        let g = parse("g.csv", text).unwrap();
        let by = by_agent(&g);
        let got: Vec<(&str, Option<f64>, usize, usize)> = by
            .iter()
            .map(|a| (a.agent.as_str(), a.mean, a.graded, a.failed))
            .collect();
        assert_eq!(
            got,
            [
                ("a", Some(1.0), 3, 0),
                ("b", Some(2.0), 1, 1),
                ("c", None, 0, 1)
            ]
        );
        assert_eq!(by[1].per_query[1], ("2".to_string(), None));
        // Written and read back the same.
        let rows: Vec<Row> = g
            .iter()
            .map(|x| Row {
                qid: &x.qid,
                agent: &x.agent,
                raw_answer: "",
                reasoning: "",
                score: x.grade.map(|v| v as u64),
            })
            .collect();
        assert_eq!(parse("w.csv", &write(&rows)).unwrap(), g);
        let e = parse("g.csv", "qid,agent,reasoning,score\n1,a,r,two\n").unwrap_err();
        assert!(e.to_string().contains("g.csv:2"), "{e}");
        assert!(is_header("qid,agent,raw_answer,reasoning,score"));
    }

    /// Found by the judge_outputs fuzz target: a score of 4 was read as a grade.
    #[test]
    fn a_score_off_the_0_to_2_scale_is_an_error_with_its_place() {
        for bad in ["4", "-1", "1.5", "3"] {
            let text = format!("qid,agent,raw_answer,reasoning,score\n1,a,x,r,2\n2,a,y,r,{bad}\n");
            let e = parse("g.csv", &text).unwrap_err().to_string();
            assert!(e.starts_with("g.csv:3:5: field `score`"), "{e}");
            assert!(
                e.contains(&format!("'{bad}' is not a grade 0, 1 or 2")),
                "{e}"
            );
        }
        let ok = parse("g.csv", "qid,agent,score\n1,a,2.0\n2,a,0\n").unwrap();
        assert_eq!(ok[0].grade, Some(2.0));
        assert!(!is_header("qid,agent,answer"));
    }
}
