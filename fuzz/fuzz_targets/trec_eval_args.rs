//! trec_eval's argv parsing and evaluation never panic, whatever the flags and files.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{0}');
    let argv: Vec<String> = parts.next().unwrap_or("").split(' ').map(String::from).collect();
    let qrels = parts.next().unwrap_or("").as_bytes().to_vec();
    let run = parts.next().unwrap_or("").as_bytes().to_vec();
    let _ = ragscope_eval::trec_eval::run(&argv, &mut |name: &str| {
        Ok(if name.contains('q') { qrels.clone() } else { run.clone() })
    });
});
