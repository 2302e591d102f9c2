//! The fake provider server on its own, for the browser end-to-end test:
//! `cargo run -p ragscope-judge-fake --bin fake_provider -- --port 0 --scenario markers`
//! prints the port on the first line of stdout, then serves until killed. `GET /__fake/requests`
//! returns what it received (`count`, `max_in_flight`, `requests`).

use ragscope_judge_fake::{scenario, FakeServer};
use std::io::Write;

fn main() {
    let mut port = 0u16;
    let mut name = "markers".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--port", Some(p)) => match p.parse() {
                Ok(p) => port = p,
                Err(_) => usage(&format!("not a port: {p}")),
            },
            ("--scenario", Some(s)) => name = s,
            _ => usage(&format!("unexpected argument {a}")),
        }
    }
    let Some(script) = scenario(&name) else {
        usage(&format!("unknown scenario {name} (markers, down)"));
    };
    let server = match FakeServer::start_on(port, script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fake_provider: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", server.port());
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}

fn usage(m: &str) -> ! {
    eprintln!("fake_provider: {m}\nusage: fake_provider [--port N] [--scenario markers|down]");
    std::process::exit(2);
}
