//! Browser plumbing that both sides of the worker boundary use, written once: the blob channel
//! that hands a picked file from the page to the worker without copying it, and IndexedDB
//! requests as futures. Browser calls only (js-sys, web-sys); the messages themselves are in
//! crates/protocol.

pub mod blob_channel;
pub mod idb;
