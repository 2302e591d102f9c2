//! Starts the fake provider server (not yet: filled in by a later commit).
fn main() {
    eprintln!("fake_provider: not yet");
    std::process::exit(2);
}
