//! plyvel's `iterator(...)` arguments (`reverse`, `start`, `stop`,
//! `include_start`, `include_stop`, `prefix`, `include_key`,
//! `include_value`) as a key range, a direction and what to yield.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::iter::Yield;
use crate::keys::{bounds_of, bytes_of, prefix_range, KeyRange};

/// What `iterator(...)` reads and yields.
pub struct IterOptions {
    pub range: KeyRange,
    pub reverse: bool,
    pub kind: Yield,
}

impl IterOptions {
    /// The options from plyvel's arguments: `prefix` excludes `start` and
    /// `stop` (`TypeError`), and at least one of `include_key` and
    /// `include_value` must be true (`ValueError`).
    #[expect(
        clippy::too_many_arguments,
        reason = "plyvel's iterator() arguments, one each"
    )]
    pub fn new(
        reverse: bool,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        include_start: bool,
        include_stop: bool,
        prefix: Option<&Bound<'_, PyAny>>,
        include_key: bool,
        include_value: bool,
    ) -> PyResult<IterOptions> {
        let kind = match (include_key, include_value) {
            (true, true) => Yield::Items,
            (true, false) => Yield::Keys,
            (false, true) => Yield::Values,
            (false, false) => {
                return Err(PyValueError::new_err(
                    "iterator(): include_key and include_value cannot both be False",
                ))
            }
        };
        let given = |o: Option<&Bound<'_, PyAny>>| o.is_some_and(|o| !o.is_none());
        let range = match prefix.filter(|p| !p.is_none()) {
            Some(p) => {
                if given(start) || given(stop) {
                    return Err(PyTypeError::new_err(
                        "iterator(): prefix cannot be combined with start or stop",
                    ));
                }
                prefix_range(&bytes_of(p, "prefix")?)
            }
            None => bounds_of(start, stop, include_start, include_stop)?,
        };
        Ok(IterOptions {
            range,
            reverse,
            kind,
        })
    }
}
