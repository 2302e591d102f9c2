//! Prints the last-position logits of one prompt (debugging aid):
//! cargo run -p ragscope-infer --example logits -- M.gguf 1,2,3
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: logits M.gguf ID,ID,...");
        std::process::exit(2);
    }
    let ids: Vec<u32> = args[2]
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let (g, src) = match ragscope_infer::GgufFile::open(std::path::Path::new(&args[1])) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    };
    match ragscope_infer::Model::load(&g, &src).and_then(|m| m.prefill(&[&ids])) {
        Ok(out) => {
            let l = &out.last_logits[0];
            let max = l.iter().fold(0f32, |m, v| m.max(v.abs()));
            println!("{:?} {max}", &l[..8.min(l.len())]);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
