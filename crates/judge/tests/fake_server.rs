//! End-to-end tests against the fake provider server (filled in by a later commit).
