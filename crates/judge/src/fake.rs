//! A fake provider server for tests (filled in by a later commit).
