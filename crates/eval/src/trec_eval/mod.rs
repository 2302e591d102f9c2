//! A drop-in trec_eval 10.0: the same argv gives the same stdout, byte for byte.
//!
//! Every rel_info format (`-R qrels`, `qrels_jg`, `prefs`, `qrels_prefs`) and `-Z` are
//! supported. Divergences, all on inputs where trec_eval 10.0 misbehaves: a qrels topic
//! missing from the run without `-c` is an error naming the topic (trec_eval 10.0 reuses
//! the previous topic's results through a stale pointer, or crashes); duplicate docnos
//! are reported at parse time for any topic; non-numeric scores are errors instead of 0;
//! blank lines in qrels are skipped instead of rejected.

mod args;
mod error;
mod format;
mod measures;
mod stream;
mod zscores;

use std::fmt::Write as _;
use std::io::Read;

use crate::formats::Input as Opened;

pub use args::Args;
pub use error::TrecEvalError;
/// The `-m` selection, for callers that score in-memory inputs with trec_eval's measure names
/// (the Python package's pytrec_eval drop-in).
pub use measures::{init as init_measures, mark as mark_measures, Selected};

use crate::formats::{
    parse_prefs, parse_qrels, parse_qrels_jg, PrefsTopic, Qrels, QrelsTopic, ReadError, Run,
    RunTopic,
};
use crate::measures::prefs::form_prefs_counts;
use crate::measures::topic::{ranked_rels, NOT_POOLED};
use crate::measures::{relstring, Input, RankingOptions, Summary, TopicEval};
use format::{fmt_value, HELP};

/// Runs trec_eval on `args` (argv without the program name). The two positional
/// arguments name the qrels and the run; `read_file` fetches their bytes.
///
/// `Ok` holds exactly what trec_eval prints on stdout. `-v` yields an `Err` with exit
/// code 0 whose message is the version line trec_eval prints on stderr.
pub fn run(
    args: &[String],
    read_file: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<String, TrecEvalError> {
    run_streaming(args, &mut |name: &str| {
        read_file(name).map(|bytes| Box::new(std::io::Cursor::new(bytes)) as Box<dyn Read>)
    })
}

/// An opened input file, read in chunks.
pub type OpenFile<'a> = dyn FnMut(&str) -> Result<Box<dyn Read>, String> + 'a;

/// [`run`] for callers that can stream files (the CLI): the run is fed to its parser in
/// 1 MiB chunks, so it is never held in memory both as text and parsed.
pub fn run_streaming(args: &[String], open: &mut OpenFile) -> Result<String, TrecEvalError> {
    run_inputs(args, &mut |name: &str| open(name).map(Opened::Stream))
}

/// An opened input file: streamed, or held whole (natively, a mapped regular file:
/// [`crate::formats::open_input`]).
pub type OpenInput<'a> = dyn FnMut(&str) -> Result<Opened, String> + 'a;

/// [`run_streaming`] for callers that can also hand over whole files (the CLI maps regular
/// files): a run held whole is fed to the parser in slices straight from the mapping (its
/// docnos are still copied into the run's arena, which keeps the mapping from staying resident).
pub fn run_inputs(args: &[String], open: &mut OpenInput) -> Result<String, TrecEvalError> {
    let args = Args::parse(args)?;
    if args.version {
        return Err(TrecEvalError::new("trec_eval version 10.0 (ragscope)\n", 0));
    }
    let (marked, meas_params) = measures::mark(&args.measures)?;
    if args.help {
        return Ok(help(&marked));
    }
    if args.positional.len() != 2 {
        return Err(TrecEvalError::new(args::USAGE, 1));
    }
    let (qrels_name, run_name) = (&args.positional[0], &args.positional[1]);
    let format = match args.rel_format.as_deref() {
        None | Some("qrels") => RelFormat::Qrels,
        Some("qrels_jg") => RelFormat::QrelsJg,
        Some("prefs") => RelFormat::Prefs,
        Some("qrels_prefs") => RelFormat::QrelsPrefs,
        Some(f) => {
            return Err(TrecEvalError::new(
                format!("trec_eval: Illegal rel_format '{f}'\n"),
                2,
            ))
        }
    };
    let cannot_read_qrels = |e: String| {
        qrels_quit(
            qrels_name,
            format!("trec_eval.get_qrels: Cannot read qrels file '{qrels_name}': {e}\n"),
        )
    };
    // The measures are settled before the files are read (their errors are reported after
    // the run's), so that a run can be scored topic by topic while it is parsed when nothing
    // can fail before the scores are needed (see `stream`).
    let selected = selected_measures(&marked, &meas_params);
    let opts = ranking_options(&args);
    #[cfg(not(target_arch = "wasm32"))]
    let plan = stream::Plan::new(
        &args,
        format == RelFormat::Qrels,
        selected.as_deref().ok(),
        &opts,
    );
    // Natively the qrels stream to a second thread that parses them while this one reads on,
    // then the run streams in; the qrels text is never held whole (5 MB less at the peak of
    // the 35 MB benchmark). Errors keep trec_eval's order (everything about the qrels first).
    #[cfg(not(target_arch = "wasm32"))]
    let (qrels, run) = match open(qrels_name).map_err(cannot_read_qrels)? {
        // held whole: parsed on a second thread while the run is read (or scored there)
        Opened::Whole(bytes) => match plan.as_ref().map(|plan| (plan, open(run_name))) {
            Some((plan, Ok(Opened::Whole(run)))) => {
                stream::read_and_score((qrels_name, bytes), (run_name, run), &args, plan)
            }
            Some((_, run)) => qrels_beside((qrels_name, bytes, format), || {
                read_opened_run(run_name, run).map(|run| (run, None))
            }),
            None => qrels_beside((qrels_name, bytes, format), || {
                read_run(run_name, open).map(|run| (run, None))
            }),
        },
        Opened::Stream(mut reader) => std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
            let (spent_tx, spent) = std::sync::mpsc::channel::<Vec<u8>>();
            let parser =
                scope.spawn(move || parse_rel_info_chunks(qrels_name, rx, spent_tx, format));
            let sent = send_chunks(&mut reader, &tx, &spent);
            drop((tx, reader));
            let join = |parser: std::thread::ScopedJoinHandle<'_, _>| {
                parser
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            };
            if let Err(e) = sent {
                let _ = join(parser);
                return Err(cannot_read_qrels(e));
            }
            let run = read_run(run_name, open).map(|run| (run, None));
            Ok((join(parser), run))
        })?,
    };
    #[cfg(target_arch = "wasm32")]
    let (qrels, run) = {
        let qrels_bytes = read_all(open, qrels_name).map_err(cannot_read_qrels)?;
        let qrels = parse_rel_info(qrels_name, &qrels_bytes, format);
        let run = match &qrels {
            Ok(_) => read_run(run_name, open).map(|run| (run, None)),
            Err(_) => Err(TrecEvalError::after_qrels_error()),
        };
        (qrels, run)
    };
    let qrels = qrels?;
    if let Some(f) = args
        .results_format
        .as_deref()
        .filter(|f| *f != "trec_results")
    {
        return Err(TrecEvalError::new(
            format!("trec_eval: Illegal retrieval results format '{f}'\n"),
            2,
        ));
    }
    let run = run?;
    let zscores = match &args.zscore_file {
        None => None,
        Some(name) => {
            let bytes = read_all(open, name).map_err(|e| {
                TrecEvalError::new(
                    format!("trec_eval.get_zscores: Cannot read zscores file '{name}': {e}\n"),
                    255,
                )
            })?;
            Some(zscores::Zscores::parse(name, &bytes)?)
        }
    };
    let selected = selected?;
    let (run, streamed) = run;
    evaluate(
        &args,
        &qrels,
        (&run, streamed.as_ref()),
        &selected,
        &opts,
        zscores.as_ref(),
    )
}

/// The measures to compute, with their parameters checked.
fn selected_measures(
    marked: &[&'static str],
    params: &[(String, String)],
) -> Result<Vec<Selected>, TrecEvalError> {
    let selected = measures::init(marked, params)?;
    if let Some(u) = selected.iter().find(|s| s.family.name == "utility") {
        if u.params.fractions().len() != 4 {
            return Err(TrecEvalError::new(
                "trec_eval.calc_utility: improper number of coefficients\ntrec_eval: Can't calculate measure 'utility'\n",
                4,
            ));
        }
    }
    Ok(selected)
}

fn ranking_options(args: &Args) -> RankingOptions {
    RankingOptions {
        relevance_level: args
            .relevance_level
            .unwrap_or(1)
            .clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        max_docs: match args.max_docs {
            Some(m) if m >= 0 => m as usize,
            Some(_) => 0,
            None => usize::MAX,
        },
        judged_only: args.judged_only,
        num_docs_in_coll: args.num_docs_in_coll.unwrap_or(0),
    }
}

/// trec_eval's `-R` rel_info formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RelFormat {
    Qrels,
    QrelsJg,
    Prefs,
    QrelsPrefs,
}

/// The topics of a rel_info file: each with one judgment set, one per judgment group
/// under `-R qrels_jg`, or preferences under `-R prefs` / `-R qrels_prefs`.
struct RelInfo {
    name: String,
    input: Input,
    topics: Vec<(String, Vec<QrelsTopic>)>,
    prefs: Vec<PrefsTopic>,
}

fn read_all(open: &mut OpenInput, name: &str) -> Result<Vec<u8>, String> {
    match open(name)? {
        Opened::Whole(bytes) => Ok(bytes.to_vec()),
        Opened::Stream(mut reader) => {
            let mut bytes = Vec::new();
            reader.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
            Ok(bytes)
        }
    }
}

/// Sends `reader`'s bytes in 1 MiB chunks until its end, or until the receiver hangs up (it
/// stops at its first parse error, which it reports). Buffers the parser has emptied come
/// back through `spent` and are filled again: a fresh megabyte per chunk was page-faulted in
/// every time (about 1,300 of the 14,500 page faults of the 35 MB benchmark).
#[cfg(not(target_arch = "wasm32"))]
fn send_chunks(
    reader: &mut dyn Read,
    tx: &std::sync::mpsc::SyncSender<Vec<u8>>,
    spent: &std::sync::mpsc::Receiver<Vec<u8>>,
) -> Result<(), String> {
    loop {
        let mut chunk = spent.try_recv().unwrap_or_default();
        chunk.resize(1 << 20, 0);
        let n = loop {
            match reader.read(&mut chunk) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.to_string()),
            }
        };
        if n == 0 {
            return Ok(());
        }
        chunk.truncate(n);
        if tx.send(chunk).is_err() {
            return Ok(());
        }
    }
}

/// [`parse_rel_info`] on chunks as they arrive: plain qrels are parsed chunk by chunk, the
/// other formats once all their bytes are in.
#[cfg(not(target_arch = "wasm32"))]
fn parse_rel_info_chunks(
    name: &str,
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    spent: std::sync::mpsc::Sender<Vec<u8>>,
    format: RelFormat,
) -> Result<RelInfo, TrecEvalError> {
    if format != RelFormat::Qrels {
        let bytes: Vec<u8> = chunks.into_iter().flatten().collect();
        return parse_rel_info(name, &bytes, format);
    }
    let mut parser = crate::formats::QrelsParser::new(name);
    for chunk in chunks {
        parser.feed(&chunk).map_err(|e| bad_qrels(name, e))?;
        // the reader may have finished already: then the buffer is simply dropped
        let _ = spent.send(chunk);
    }
    let qrels = parser.finish().map_err(|e| bad_qrels(name, e))?;
    Ok(qrels_info(name, qrels))
}

/// Parses rel_info held whole on a second thread while `read_run` reads the run here.
#[cfg(not(target_arch = "wasm32"))]
fn qrels_beside<R>(
    (name, bytes, format): (&str, crate::formats::SharedBytes, RelFormat),
    read_run: impl FnOnce() -> R,
) -> (Result<RelInfo, TrecEvalError>, R) {
    std::thread::scope(|scope| {
        let parser = scope.spawn(move || parse_rel_info_whole(name, &bytes, format));
        let run = read_run();
        let qrels = parser
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (qrels, run)
    })
}

/// [`parse_rel_info`] on bytes held whole: plain qrels in slices (see
/// [`crate::formats::SharedBytes::feed_in_slices`]), the other formats at once.
#[cfg(not(target_arch = "wasm32"))]
fn parse_rel_info_whole(
    name: &str,
    bytes: &crate::formats::SharedBytes,
    format: RelFormat,
) -> Result<RelInfo, TrecEvalError> {
    if format != RelFormat::Qrels {
        return parse_rel_info(name, bytes, format);
    }
    let mut parser = crate::formats::QrelsParser::new(name);
    bytes
        .feed_in_slices(1 << 20, |slice| parser.feed(slice))
        .map_err(|e| bad_qrels(name, e))?;
    let qrels = parser.finish().map_err(|e| bad_qrels(name, e))?;
    Ok(qrels_info(name, qrels))
}

#[cfg(not(target_arch = "wasm32"))]
fn bad_qrels(name: &str, e: crate::formats::ParseError) -> TrecEvalError {
    qrels_quit(name, format!("trec_eval.get_qrels: {e}\n"))
}

fn qrels_info(name: &str, qrels: Qrels) -> RelInfo {
    RelInfo {
        name: name.to_string(),
        input: Input::Qrels,
        topics: qrels
            .into_topics()
            .into_iter()
            .map(|t| (t.qid().to_string(), vec![t]))
            .collect(),
        prefs: Vec::new(),
    }
}

fn qrels_quit(name: &str, why: String) -> TrecEvalError {
    TrecEvalError::new(format!("{why}trec_eval: Quit in file '{name}'\n"), 2)
}

fn parse_rel_info(name: &str, bytes: &[u8], format: RelFormat) -> Result<RelInfo, TrecEvalError> {
    let quit = |why: String| qrels_quit(name, why);
    let bad = |e: crate::formats::ParseError| quit(format!("trec_eval.get_qrels: {e}\n"));
    let mut info = RelInfo {
        name: name.to_string(),
        input: Input::Qrels,
        topics: Vec::new(),
        prefs: Vec::new(),
    };
    match format {
        RelFormat::Qrels => return Ok(qrels_info(name, parse_qrels(name, bytes).map_err(bad)?)),
        RelFormat::QrelsJg => {
            info.input = Input::JudgmentGroups;
            info.topics = parse_qrels_jg(name, bytes).map_err(bad)?.topics;
        }
        RelFormat::Prefs | RelFormat::QrelsPrefs => {
            info.input = Input::Prefs;
            let prefs = parse_prefs(name, bytes, format == RelFormat::QrelsPrefs)
                .map_err(|e| quit(format!("trec_eval.get_prefs: {e}\n")))?;
            info.topics = prefs
                .topics
                .iter()
                .map(|t| (t.qid.clone(), Vec::new()))
                .collect();
            info.prefs = prefs.topics;
        }
    }
    Ok(info)
}

fn read_run(name: &str, open: &mut OpenInput) -> Result<Run, TrecEvalError> {
    read_opened_run(name, open(name))
}

fn read_opened_run(name: &str, file: Result<Opened, String>) -> Result<Run, TrecEvalError> {
    let file = file.map_err(|e| cannot_read_run(name, e))?;
    crate::formats::read_run_input(name, file).map_err(|e| match e {
        ReadError::Io(e) => cannot_read_run(name, e.to_string()),
        ReadError::Parse(e) => bad_run(name, e),
    })
}

fn cannot_read_run(name: &str, why: String) -> TrecEvalError {
    run_quit(
        name,
        format!("trec_eval.get_results: Cannot read results file '{name}': {why}\n"),
    )
}

fn bad_run(name: &str, e: crate::formats::ParseError) -> TrecEvalError {
    run_quit(name, format!("trec_eval.get_results: {e}\n"))
}

fn run_quit(name: &str, why: String) -> TrecEvalError {
    TrecEvalError::new(format!("{why}trec_eval: Quit in file '{name}'\n"), 2)
}

/// What scoring the topics needs besides the topics themselves.
struct Context<'a> {
    args: &'a Args,
    qrels: &'a RelInfo,
    selected: &'a [Selected],
    opts: &'a RankingOptions,
    zscores: Option<&'a zscores::Zscores>,
    /// Values per topic: the sum of every selected family's names.
    width: usize,
    /// Topics scored while the run was parsed, if any (then left out of the run).
    streamed: Option<&'a stream::Streamed>,
}

/// The values of a contiguous range of topics, flat (`width` per topic), with what the
/// printing pass needs besides the numbers.
#[derive(Default)]
struct Scored {
    values: Vec<f64>,
    /// trec_eval's relstring per topic, when asked for with `-q`.
    relstrings: Vec<String>,
}

fn evaluate(
    args: &Args,
    qrels: &RelInfo,
    (run, streamed): (&Run, Option<&stream::Streamed>),
    selected: &[Selected],
    opts: &RankingOptions,
    zscores: Option<&zscores::Zscores>,
) -> Result<String, TrecEvalError> {
    check_formats(qrels, selected)?;
    let ctx = Context {
        args,
        qrels,
        selected,
        opts,
        zscores,
        width: selected.iter().map(|s| s.names.len()).sum(),
        streamed,
    };
    let all = 0..qrels.topics.len();
    // Natively, many topics are scored on two threads (each topic is independent, and
    // ranking plus the kernels are ~60% of a run's time once parsing is split too); the
    // numbers are then summed and printed in topic order by one pass, so the output is the
    // serial one byte for byte. The first error in topic order wins, as serially.
    #[cfg(not(target_arch = "wasm32"))]
    let scored = if all.len() >= 64 && crate::formats::parallel::threads() > 1 {
        let mid = all.len() / 2;
        let (first, second) = std::thread::scope(|scope| {
            let worker = scope.spawn(|| score_topics(&ctx, run, mid..all.end));
            let first = score_topics(&ctx, run, 0..mid);
            let second = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (first, second)
        });
        let (mut first, second) = (first?, second?);
        first.values.extend(second.values);
        first.relstrings.extend(second.relstrings);
        first
    } else {
        score_topics(&ctx, run, all)?
    };
    #[cfg(target_arch = "wasm32")]
    let scored = score_topics(&ctx, run, all)?;
    print(&ctx, run, &scored)
}

/// Scores topics `range` of the qrels: every selected family's values, in order.
fn score_topics(
    ctx: &Context,
    run: &Run,
    range: std::ops::Range<usize>,
) -> Result<Scored, TrecEvalError> {
    let mut scored = Scored {
        values: Vec::with_capacity(range.len() * ctx.width),
        ..Scored::default()
    };
    let mut buffers = TopicBuffers::new(ctx.selected);
    for topic_index in range {
        if let Some(streamed) = ctx.streamed {
            if streamed.copy_to(topic_index, ctx.width, &mut scored) {
                continue;
            }
        }
        let qid = &ctx.qrels.topics[topic_index].0;
        let run_topic = run.topic(qid);
        if run_topic.is_none() && !ctx.args.complete {
            return Err(TrecEvalError::new(
                format!(
                    "trec_eval: topic '{qid}' is in the qrels '{}' but has no results in '{}'; \
                     use -c to score it as an empty ranking\n",
                    ctx.qrels.name,
                    run.name()
                ),
                4,
            ));
        }
        score_topic(ctx, topic_index, run, run_topic, &mut buffers, &mut scored)?;
    }
    Ok(scored)
}

/// What scoring a topic needs besides its data, reused from topic to topic.
struct TopicBuffers {
    values: Vec<Vec<f64>>,
    group_values: Vec<f64>,
    scratch: Vec<(u64, u32)>,
    rels: Vec<Vec<i32>>,
}

impl TopicBuffers {
    fn new(selected: &[Selected]) -> Self {
        TopicBuffers {
            values: selected.iter().map(|s| vec![0.0; s.names.len()]).collect(),
            group_values: Vec::new(),
            scratch: Vec::new(),
            rels: Vec::new(),
        }
    }
}

/// Appends the values of qrels topic `topic_index` to `scored`: every selected family's, in
/// order. `run_topic` is its results in `run`; a topic without any is scored as trec_eval's
/// `-c` does.
fn score_topic(
    ctx: &Context,
    topic_index: usize,
    run: &Run,
    run_topic: Option<&RunTopic>,
    buffers: &mut TopicBuffers,
    scored: &mut Scored,
) -> Result<(), TrecEvalError> {
    let Context {
        args,
        qrels,
        selected,
        opts,
        zscores,
        ..
    } = *ctx;
    let TopicBuffers {
        values,
        group_values,
        scratch,
        rels,
    } = buffers;
    let bogus = [NOT_POOLED];
    let first_prefs = selected.iter().find(|s| s.family.input == Input::Prefs);
    let wants_relstring = args.query_flag && selected.iter().any(|s| s.family.name == "relstring");
    let (qid, groups) = &qrels.topics[topic_index];
    let missing = run_topic.is_none();
    rels.resize_with(groups.len(), Vec::new);
    if let Some(rt) = run_topic {
        for (qt, ranked) in groups.iter().zip(rels.iter_mut()) {
            ranked_rels(run, rt, qt, opts, scratch, ranked);
        }
    }
    // trec_eval scores a missing topic as one non-pooled document, then zeroes the
    // few values that would reveal that document.
    let evals: Vec<TopicEval> = groups
        .iter()
        .zip(rels.iter())
        .map(|(qt, ranked)| {
            TopicEval::new(
                if missing { &bogus } else { ranked },
                qt.levels(),
                opts.relevance_level,
                opts.judged_only,
                opts.num_docs_in_coll,
            )
        })
        .collect();
    let no_judgments = TopicEval::new(&[], &[], opts.relevance_level, false, 0);
    let t = evals.first().unwrap_or(&no_judgments);
    let pref_counts = match first_prefs {
        Some(first) => Some(
            form_prefs_counts(run, run_topic, &qrels.prefs[topic_index], opts.max_docs).map_err(
                |e| {
                    let message = if e.exit_code == 134 {
                        e.message
                    } else {
                        format!(
                            "{}trec_eval: Can't calculate measure '{}'\n",
                            e.message, first.family.name
                        )
                    };
                    TrecEvalError::new(message, e.exit_code)
                },
            )?,
        ),
        None => None,
    };
    for (s, vals) in selected.iter().zip(values.iter_mut()) {
        vals.iter_mut().for_each(|v| *v = 0.0);
        if let (Some(kernel), Some(pc)) = (s.family.prefs_kernel, &pref_counts) {
            vals[0] = kernel(pc);
        } else if s.family.input == Input::JudgmentGroups {
            for group in &evals {
                group_values.clear();
                group_values.resize(vals.len(), 0.0);
                (s.family.compute)(group, &s.params, group_values);
                for (v, g) in vals.iter_mut().zip(group_values.iter()) {
                    *v += g;
                }
            }
            if evals.len() > 1 {
                vals.iter_mut().for_each(|v| *v /= evals.len() as f64);
            }
        } else {
            (s.family.compute)(t, &s.params, vals);
        }
        if missing {
            for (name, v) in s.names.iter().zip(vals.iter_mut()) {
                if name == "num_ret"
                    || name == "utility"
                    || name == "rbp_resid"
                    || name.starts_with("unj")
                {
                    *v = 0.0;
                }
            }
        }
        if let Some(zs) = zscores {
            for (name, v) in s.names.iter().zip(vals.iter_mut()) {
                *v = zs.convert(qid, name, *v);
            }
        }
        scored.values.extend_from_slice(vals);
    }
    if wants_relstring {
        let text = match selected.iter().find(|s| s.family.name == "relstring") {
            Some(s) if !missing => {
                relstring(t, s.params.fractions().first().copied().unwrap_or(10.0))
            }
            _ => String::new(),
        };
        scored.relstrings.push(text);
    }
    Ok(())
}

/// Sums the scored topics in topic order and prints what trec_eval prints.
fn print(ctx: &Context, run: &Run, scored: &Scored) -> Result<String, TrecEvalError> {
    let Context {
        args,
        qrels,
        selected,
        zscores,
        width,
        ..
    } = *ctx;
    let z = if zscores.is_some() { "Z" } else { "" };
    let mut out = String::new();
    let mut sums: Vec<Vec<f64>> = selected.iter().map(|s| vec![0.0; s.names.len()]).collect();
    let mut num_q = 0u64;
    for (topic, (qid, _)) in qrels.topics.iter().enumerate() {
        let mut at = topic * width;
        for (s, sum) in selected.iter().zip(sums.iter_mut()) {
            let vals = &scored.values[at..at + s.names.len()];
            at += s.names.len();
            for (acc, v) in sum.iter_mut().zip(vals) {
                *acc += v;
            }
            if !args.query_flag || !s.family.per_query {
                continue;
            }
            if s.family.name == "relstring" {
                let text = scored.relstrings.get(topic).map_or("", String::as_str);
                let _ = writeln!(out, "{:<22}\t{}\t'{}'", s.names[0], qid, text);
                continue;
            }
            for (name, v) in s.names.iter().zip(vals) {
                let _ = writeln!(
                    out,
                    "{z}{:<22}\t{}\t{}",
                    name,
                    qid,
                    value_text(s, *v, zscores.is_some())
                );
            }
        }
        num_q += 1;
    }
    if num_q == 0 {
        return Err(TrecEvalError::new(
            "trec_eval: No queries with both results and relevance info\n",
            7,
        ));
    }
    if args.no_summary {
        return Ok(out);
    }
    for (s, sum) in selected.iter().zip(&sums) {
        let summary: Vec<f64> = match s.family.summary {
            Summary::RunId => {
                let _ = writeln!(out, "{:<22}\tall\t{}", "runid", run.run_id());
                continue;
            }
            Summary::Nothing => continue,
            Summary::NumQ => vec![num_q as f64],
            Summary::Sum => sum.clone(),
            Summary::Mean => sum.iter().map(|v| v / num_q as f64).collect(),
            Summary::GeoMean => sum.iter().map(|v| (v / num_q as f64).exp()).collect(),
        };
        for (name, v) in s.names.iter().zip(summary) {
            let _ = writeln!(
                out,
                "{z}{:<22}\tall\t{}",
                name,
                value_text(s, v, zscores.is_some())
            );
        }
    }
    Ok(out)
}

/// Measures over plain qrels cannot read judgment groups and vice versa; trec_eval fails
/// on the first topic with these messages.
fn check_formats(qrels: &RelInfo, selected: &[Selected]) -> Result<(), TrecEvalError> {
    if qrels.topics.is_empty() {
        return Ok(());
    }
    for s in selected {
        let f = s.family;
        if matches!(f.summary, Summary::RunId | Summary::NumQ) || f.input == qrels.input {
            continue;
        }
        let why = match f.input {
            Input::JudgmentGroups => {
                "trec_eval: rel_info format not qrels_jg or results format not trec_results\n"
            }
            Input::Prefs => {
                "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or results format not trec_results\n"
            }
            Input::Qrels => {
                "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results\n"
            }
        };
        return Err(TrecEvalError::new(
            format!("{why}trec_eval: Can't calculate measure '{}'\n", f.name),
            4,
        ));
    }
    Ok(())
}

fn value_text(s: &Selected, v: f64, zscore: bool) -> String {
    if s.family.integer && !zscore {
        format!("{}", v as i64)
    } else {
        fmt_value(v)
    }
}

fn help(marked: &[&str]) -> String {
    let mut text = HELP.to_string();
    text.push_str("\nMeasures (in output order):\n");
    for f in crate::measures::registry() {
        let star = if marked.contains(&f.name) { "*" } else { " " };
        let _ = writeln!(text, " {star}{:<22} {}", f.name, f.explanation);
    }
    text.push_str("\n(* = selected by the -m options given; 'official' when none)\n");
    text
}
