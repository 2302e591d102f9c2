//! `--measures` lists split on commas, except inside a measure's parentheses.

use std::process::Command;

fn data(name: &str) -> String {
    format!(
        "{}/../../../shared/data/trec_eval/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn commas_inside_parentheses_belong_to_the_measure() {
    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(["eval", "--qrels", &data("qrels.test"), "--format", "csv"])
        .args([
            "--measures",
            "P(rel=2)@5, nDCG(gain=exp)@10,MAP",
            "--measures",
            "UDCG(gamma=1/3,gain=binary)@5",
        ])
        .arg(data("results.test"))
        .output()
        .expect("ragscope runs");
    // The UDCG measure parsed whole (printed canonically: γ = 1/3 is the default); the only
    // complaint is the missing utilities (usage error).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("UDCG(gain=binary)@5") && stderr.contains("utilities"),
        "{stderr}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(["eval", "--qrels", &data("qrels.test"), "--format", "csv"])
        .args(["--measures", "P(rel=2)@5, nDCG(gain=exp)@10,MAP"])
        .arg(data("results.test"))
        .output()
        .expect("ragscope runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().next(),
        Some("run,P(rel=2)@5,nDCG(gain=exp)@10,MAP")
    );
}
