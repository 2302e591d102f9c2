//! The utilities TSV parser must never panic, and what it writes it reads back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_eval::rag::utilities_tsv::{parse, write, UtilityRow};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = parse("fuzz", text) else {
        return;
    };
    let mut rows: Vec<UtilityRow> = Vec::new();
    for ((model, qid), passages) in &parsed.entries {
        for (docno, info) in passages {
            rows.push(UtilityRow {
                qid: qid.clone(),
                docno: docno.clone(),
                model: model.clone(),
                judgment: info.judgment,
            });
        }
    }
    // Rows with and without a model cannot share one written file (the model column is
    // all-or-nothing), so only single-kind files must round-trip.
    let with_model = rows.iter().filter(|r| !r.model.is_empty()).count();
    if with_model != 0 && with_model != rows.len() {
        return;
    }
    let again = parse("fuzz", &write(&rows)).expect("written utilities parse");
    assert_eq!(again.entries.len(), parsed.entries.len());
    for (key, passages) in &parsed.entries {
        let other = &again.entries[key];
        for (docno, info) in passages {
            assert_eq!(other[docno].judgment, info.judgment);
        }
    }
});
