//! A str's UTF-8 without a copy where the stable ABI allows it.
//!
//! `PyUnicode_AsUTF8AndSize` joined the limited API in Python 3.10; on 3.9 (the wheel is abi3
//! from 3.9) PyO3 goes through a temporary bytes object per string, a third of the time of
//! reading a large run dict. The function is looked up for 3.10+ only.

use std::borrow::Cow;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

extern "C" {
    // Part of the stable ABI since 3.10 (called only there); the cached UTF-8 of an ASCII
    // string is its own buffer, so this copies nothing.
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}

/// Whether [`text`] may take the copy-free path (the running interpreter is 3.10 or later).
pub fn fast_available(py: Python<'_>) -> bool {
    py.version_info() >= (3, 10)
}

/// The UTF-8 text of `s`, borrowed from the string object on 3.10+.
pub fn text<'a>(s: &'a Bound<'_, PyString>, fast: bool) -> PyResult<Cow<'a, str>> {
    if !fast {
        return s.to_cow();
    }
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live str (held by the Bound for 'a); the returned buffer is owned by
    // the string object and lives as long as it does; NULL means an exception is set.
    unsafe {
        let data = PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
        if data.is_null() {
            return Err(PyErr::fetch(s.py()));
        }
        let bytes = std::slice::from_raw_parts(data as *const u8, size as usize);
        // CPython's UTF-8 encoder only produces valid UTF-8
        Ok(Cow::Borrowed(std::str::from_utf8_unchecked(bytes)))
    }
}
