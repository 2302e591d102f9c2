fn main() {
    eprintln!("ragscope: no command yet");
    std::process::exit(2);
}
