//! The qrels parser keeps each topic's docnos in one arena behind a hash table that is also
//! the duplicate check. Against a plain map model: every relevance, the file order of
//! `judgments()`, the level counts, absent docnos, and the first duplicate with its line.

use std::collections::BTreeMap;

use proptest::prelude::*;
use ragscope_eval::formats::ParseErrorKind;
use ragscope_eval::parse_qrels;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn equals_a_map_model(
        lines in prop::collection::vec((0u8..4, "[a-c]{1,3}|d[0-9]{1,12}", -2i32..4, 0u8..6), 1..120),
    ) {
        // some lines follow a blank one (the parser skips it; the lines after count it)
        let mut text = String::new();
        let mut line_of = Vec::new();
        for (q, d, r, blank) in &lines {
            if *blank == 0 {
                text.push('\n');
            }
            text.push_str(&format!("q{q} 0 {d} {r}\n"));
            line_of.push(text.lines().count() as u64);
        }
        // the model: first line of each (qid, docno), and the first line repeating one
        let mut model: BTreeMap<(String, String), (i32, u64)> = BTreeMap::new();
        let mut duplicate = None;
        for (i, (q, d, r, _)) in lines.iter().enumerate() {
            let key = (format!("q{q}"), d.clone());
            match model.get(&key) {
                Some(&(_, first)) => {
                    duplicate = Some((line_of[i], first, key));
                    break;
                }
                None => {
                    model.insert(key, (*r, line_of[i]));
                }
            }
        }
        match (parse_qrels("q.txt", text.as_bytes()), duplicate) {
            (Err(e), Some((line, first, (qid, docno)))) => {
                prop_assert_eq!(e.line, line);
                prop_assert_eq!(e.text, docno);
                prop_assert_eq!(e.kind, ParseErrorKind::DuplicateDocno { qid, first_line: first });
            }
            (Ok(qrels), None) => {
                for t in qrels.topics() {
                    let want: Vec<(String, i32, u64)> = model
                        .iter()
                        .filter(|((q, _), _)| q == t.qid())
                        .map(|((_, d), (r, line))| (d.clone(), *r, *line))
                        .collect();
                    let mut in_file_order = want.clone();
                    in_file_order.sort_by_key(|w| w.2);
                    let got: Vec<(String, i32)> = t
                        .judgments()
                        .map(|(d, r)| (String::from_utf8_lossy(d).into_owned(), r))
                        .collect();
                    let expected: Vec<(String, i32)> =
                        in_file_order.iter().map(|(d, r, _)| (d.clone(), *r)).collect();
                    prop_assert_eq!(got, expected);
                    for (d, r, _) in &want {
                        prop_assert_eq!(t.rel(d.as_bytes()), Some(*r));
                    }
                    prop_assert_eq!(t.rel(b"absent"), None);
                    for level in -1..5 {
                        let n = want.iter().filter(|(_, r, _)| *r >= level.max(0) && *r >= level).count();
                        prop_assert_eq!(t.num_rel(level), n as u64, "level {}", level);
                    }
                }
                let topics: std::collections::BTreeSet<&String> = model.keys().map(|(q, _)| q).collect();
                prop_assert_eq!(qrels.topics().len(), topics.len());
            }
            (got, want) => prop_assert!(false, "parser {:?} vs model duplicate {:?}", got.err(), want),
        }
    }
}
