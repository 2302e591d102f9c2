//! Browser plumbing that both sides of the worker boundary use, written once: the blob channel
//! that hands a picked file from the page to the worker without copying it, IndexedDB
//! requests as futures, and the list of every store the app keeps (`stores`). Browser calls only (js-sys, web-sys); the messages themselves are in
//! crates/protocol.

pub mod blob_channel;
pub mod idb;
pub mod stores;
