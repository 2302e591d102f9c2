//! Python dicts to ragscope's parsed `Run` through the TREC text the parser reads (the
//! `evaluate` path), and the checks a qrels dict passes before its judgments go to
//! `QrelsParser::push_judgment` directly. Identifiers with whitespace cannot be written as a
//! TREC line, so they are refused by name (in qrels and in text runs) instead of being split,
//! and a dict behaves as the same file would.

/// Why a dict could not become TREC text: which topic and document, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictError(pub String);

fn check_id(what: &str, id: &str) -> Result<(), DictError> {
    if id.is_empty() || id.bytes().any(|b| b.is_ascii_whitespace()) {
        return Err(DictError(format!(
            "{what} '{id}' is empty or holds whitespace, which a TREC file cannot hold"
        )));
    }
    Ok(())
}

/// Checks a topic id once, before its lines are written.
pub fn check_qid(qid: &str) -> Result<(), DictError> {
    check_id("topic", qid)
}

/// Checks a judgment of a qrels dict (`qid` already checked): the docno as a TREC line could
/// hold it, the relevance within trec_eval's 32 bits.
pub fn check_judgment(qid: &str, doc: &str, rel: i64) -> Result<i32, DictError> {
    check_id("document", doc)?;
    i32::try_from(rel).map_err(|_| {
        DictError(format!(
            "relevance {rel} of document '{doc}' in topic '{qid}' does not fit in 32 bits"
        ))
    })
}

/// Appends the qrels line `qid 0 docno rel` (`qid` already checked), for DataFrame columns.
pub fn push_qrels_line(out: &mut Vec<u8>, qid: &str, doc: &str, rel: i64) -> Result<(), DictError> {
    check_judgment(qid, doc, rel)?;
    out.extend_from_slice(qid.as_bytes());
    out.extend_from_slice(b" 0 ");
    out.extend_from_slice(doc.as_bytes());
    out.push(b' ');
    out.extend_from_slice(itoa::Buffer::new().format(rel).as_bytes());
    out.push(b'\n');
    Ok(())
}

/// Appends the run line `qid Q0 docno 0 score run` (`qid` already checked). The rank column
/// is ignored by the parser (trec_eval ranks by score, ties by docno descending), and ryu
/// prints the shortest text that reads back as the same f64.
pub fn push_run_line(out: &mut Vec<u8>, qid: &str, doc: &str, score: f64) -> Result<(), DictError> {
    check_id("document", doc)?;
    if !score.is_finite() {
        return Err(DictError(format!(
            "score {score} of document '{doc}' in topic '{qid}' is not a finite number"
        )));
    }
    out.extend_from_slice(qid.as_bytes());
    out.extend_from_slice(b" Q0 ");
    out.extend_from_slice(doc.as_bytes());
    out.extend_from_slice(b" 0 ");
    out.extend_from_slice(ryu::Buffer::new().format_finite(score).as_bytes());
    out.extend_from_slice(b" run\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_written_as_text_parses_back_to_the_same_scores() {
        let mut text = Vec::new();
        push_run_line(&mut text, "q1", "d1", 0.1 + 0.2).unwrap();
        push_run_line(&mut text, "q1", "d2", 1e-300).unwrap();
        let run = ragscope_eval::parse_run("dict", &text).unwrap();
        let topic = run.topic("q1").unwrap();
        let scores: Vec<f64> = topic.docs().iter().map(|d| d.score).collect();
        assert_eq!(scores, vec![0.1 + 0.2, 1e-300]);
    }

    #[test]
    fn whitespace_in_an_id_is_refused_with_its_name() {
        let mut text = Vec::new();
        let err = check_qid("q 1").unwrap_err();
        assert!(err.0.contains("topic 'q 1'"), "{}", err.0);
        let err = push_qrels_line(&mut text, "q1", "d 2", 1).unwrap_err();
        assert!(err.0.contains("document 'd 2'"), "{}", err.0);
        let err = push_run_line(&mut text, "q1", "d", f64::NAN).unwrap_err();
        assert!(err.0.contains("not a finite number"), "{}", err.0);
    }
}
