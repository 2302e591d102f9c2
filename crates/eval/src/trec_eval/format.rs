//! Number formatting identical to trec_eval's `printf("%6.4f")`.

/// `%6.4f`: Rust's float formatting rounds the exact binary value like glibc does;
/// only NaN and infinities are spelled differently, so they are mapped here.
pub fn fmt_value(v: f64) -> String {
    if v.is_nan() {
        let text = if v.is_sign_negative() { "-nan" } else { "nan" };
        format!("{text:>6}")
    } else if v.is_infinite() {
        let text = if v < 0.0 { "-inf" } else { "inf" };
        format!("{text:>6}")
    } else {
        format!("{v:6.4}")
    }
}

pub const HELP: &str = "\
ragscope trec-eval: a byte-identical reimplementation of trec_eval 10.0

Usage: ragscope trec-eval [options] QRELS RUN

  QRELS  relevance judgments, lines of: qid iter docno rel
         (rel: 0 = non-relevant, 1.. = graded relevant, negative = pooled but unjudged)
  RUN    ranked results, lines of: qid Q0 docno rank score tag
         (ranked by score descending, ties by docno descending; the rank column is ignored)
  Lines whose first non-blank character is '#' are comments.

Options (values may be glued: -l2, -M100, -mP.5,10; long forms like --measure=P.5 work too):
  -q, --query_eval_wanted         also print one line per topic and measure
  -m, --measure NAME[.PARAMS]     add a measure or a nickname (official, all_trec, set);
                                  repeatable. PARAMS after the dot, comma separated:
                                    -m P.5,10          precision at 5 and 10
                                    -m ndcg_cut.10     nDCG@10 (linear gain)
                                    -m ndcg.1=3,2=9    nDCG with custom gains per level
                                    -m iprec_at_recall..10,.20   interpolated precision
  -c, --complete_rel_info_wanted  score qrels topics absent from the run as empty rankings
                                  and average over every qrels topic
  -l, --level_for_rel N           relevant means rel >= N (default 1)
  -n, --nosummary                 no summary ('all') lines
  -M, --Max_retrieved_per_topic N keep the top N results per topic (after the tie sort)
  -N, --Number_docs_in_coll N     collection size, used by utility's 4th coefficient
  -J, --Judged_docs_only          drop unjudged documents before scoring (rarely wise)
  -D, --Debug_level N             accepted for compatibility, ignored
  -R, --Rel_info_format FMT       qrels (default); qrels_jg (2nd column = judgment group,
                                  measures averaged over groups: -m qrels_jg); prefs
                                  (qid jg jsg docno rel_level: -m all_prefs); qrels_prefs
                                  (qrels read as preferences)
  -T, --Results_format FMT        only 'trec_results' exists
  -Z, --Zscore FILE               print z-scores using 'qid measure mean stddev' lines
  -h, --help                      this help
  -v, --version                   print the version on stderr
Output lines are 'measure<TAB>topic<TAB>value', in trec_eval's measure order.
";
