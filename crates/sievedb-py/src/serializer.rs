//! Typed values, opt-in: `Db(path, serializer=...)` (`"pickle"`, `"json"`
//! or any object with `dumps` and `loads`), `Db(path, decode="utf-8")`
//! (values read as str), and `str_keys=True` (keys read as str). The
//! default [`Codec`] is bytes in, bytes out: one match on the way, no call
//! into Python.
//!
//! Keys are never serialized (their order is the engine's byte order); with
//! `str_keys` they are only decoded from UTF-8 on the way out. Merge
//! operands are not serialized either.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::keys::bytes_of;

/// How values cross the boundary.
pub enum Values {
    /// bytes (str and bytearray accepted on the way in): the default.
    Bytes,
    /// str out, decoded with `encoding` (`utf8`: UTF-8, decoded in Rust);
    /// str (encoded so) or bytes in.
    Decode { encoding: String, utf8: bool },
    /// `dumps(value)` in (bytes or str, the latter as UTF-8), `loads(bytes)`
    /// out.
    Serializer {
        name: String,
        dumps: Py<PyAny>,
        loads: Py<PyAny>,
    },
}

/// How the values and keys of one database or keyspace cross the boundary.
pub struct Codec {
    pub values: Values,
    /// Keys read as str (decoded from UTF-8) instead of bytes.
    pub str_keys: bool,
}

/// The default: bytes keys, bytes values.
pub fn bytes() -> Arc<Codec> {
    Arc::new(Codec {
        values: Values::Bytes,
        str_keys: false,
    })
}

impl Codec {
    /// The codec of the arguments `serializer=`, `decode=`, `str_keys=`;
    /// what is not given is `inherit`'s (a keyspace inherits its database's).
    pub fn from_args(
        py: Python<'_>,
        serializer: Option<&Bound<'_, PyAny>>,
        decode: Option<&str>,
        str_keys: Option<bool>,
        inherit: Option<&Arc<Codec>>,
    ) -> PyResult<Arc<Codec>> {
        let serializer = serializer.filter(|s| !s.is_none());
        if serializer.is_none() && decode.is_none() && str_keys.is_none() {
            if let Some(c) = inherit {
                return Ok(c.clone());
            }
        }
        let values = match (serializer, decode) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "serializer= and decode= are mutually exclusive (decode= reads values as \
                     str; a serializer's loads() makes them whatever it makes)",
                ))
            }
            (Some(s), None) => serializer_of(py, s)?,
            (None, Some(enc)) => {
                // Refuses an unknown encoding now rather than at the first read.
                py.import("codecs")?.call_method1("lookup", (enc,))?;
                let norm = enc.to_ascii_lowercase().replace(['-', '_'], "");
                Values::Decode {
                    encoding: enc.to_string(),
                    utf8: norm == "utf8",
                }
            }
            (None, None) => match inherit {
                Some(c) => c.values.clone_ref(py),
                None => Values::Bytes,
            },
        };
        let str_keys = str_keys.unwrap_or_else(|| inherit.is_some_and(|c| c.str_keys));
        Ok(Arc::new(Codec { values, str_keys }))
    }

    /// The bytes to store for the Python value `v`.
    #[inline]
    pub fn encode<'a>(&self, v: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
        match &self.values {
            Values::Bytes => bytes_of(v, "value"),
            Values::Decode { encoding, utf8 } => {
                if *utf8 || !v.is_instance_of::<PyString>() {
                    return bytes_of(v, "value");
                }
                let b = v.call_method1("encode", (encoding.as_str(),))?;
                Ok(Cow::Owned(b.downcast::<PyBytes>()?.as_bytes().to_vec()))
            }
            Values::Serializer { name, dumps, .. } => {
                let out = dumps.bind(v.py()).call1((v,))?;
                let b = bytes_of(&out, "value").map_err(|_| {
                    PyTypeError::new_err(format!(
                        "the serializer {name}'s dumps() must return bytes or str, not {}",
                        out.get_type()
                            .name()
                            .map_or_else(|_| "?".into(), |n| n.to_string())
                    ))
                })?;
                Ok(Cow::Owned(b.into_owned()))
            }
        }
    }

    /// The Python value of the stored bytes `v`.
    #[inline]
    pub fn decode(&self, py: Python<'_>, v: &[u8]) -> PyResult<PyObject> {
        match &self.values {
            Values::Bytes => Ok(PyBytes::new(py, v).into_any().unbind()),
            Values::Decode { encoding, utf8 } => {
                if *utf8 {
                    if let Ok(s) = std::str::from_utf8(v) {
                        return Ok(PyString::new(py, s).into_any().unbind());
                    }
                }
                // Python's own decode: its UnicodeDecodeError says where.
                Ok(PyBytes::new(py, v)
                    .call_method1("decode", (encoding.as_str(),))?
                    .unbind())
            }
            Values::Serializer { loads, .. } => {
                Ok(loads.bind(py).call1((PyBytes::new(py, v),))?.unbind())
            }
        }
    }

    /// `value_or` of the store: the decoded value, or `default` (as given).
    #[inline]
    pub fn value_or(
        &self,
        py: Python<'_>,
        v: Option<Vec<u8>>,
        default: Option<PyObject>,
    ) -> PyResult<Option<PyObject>> {
        match v {
            Some(v) => self.decode(py, &v).map(Some),
            None => Ok(default),
        }
    }

    /// The Python key of the stored key `k`: bytes, or str with `str_keys`.
    #[inline]
    pub fn key(&self, py: Python<'_>, k: &[u8]) -> PyResult<PyObject> {
        if self.str_keys {
            match std::str::from_utf8(k) {
                Ok(s) => Ok(PyString::new(py, s).into_any().unbind()),
                Err(_) => Ok(PyBytes::new(py, k)
                    .call_method1("decode", ("utf-8",))?
                    .unbind()),
            }
        } else {
            Ok(PyBytes::new(py, k).into_any().unbind())
        }
    }
}

impl Values {
    fn clone_ref(&self, py: Python<'_>) -> Values {
        match self {
            Values::Bytes => Values::Bytes,
            Values::Decode { encoding, utf8 } => Values::Decode {
                encoding: encoding.clone(),
                utf8: *utf8,
            },
            Values::Serializer { name, dumps, loads } => Values::Serializer {
                name: name.clone(),
                dumps: dumps.clone_ref(py),
                loads: loads.clone_ref(py),
            },
        }
    }
}

/// The serializer `serializer=` names: "pickle", "json", "bytes" (the
/// default: none), or an object with `dumps` and `loads`.
fn serializer_of(py: Python<'_>, s: &Bound<'_, PyAny>) -> PyResult<Values> {
    if let Ok(name) = s.downcast::<PyString>() {
        let name = name.to_cow()?;
        let module = match &*name {
            "bytes" => return Ok(Values::Bytes),
            "pickle" | "json" => py.import(&*name)?.into_any(),
            other => {
                return Err(PyValueError::new_err(format!(
                    "serializer must be \"pickle\", \"json\", \"bytes\" or an object with \
                     dumps() and loads(), not {other:?}"
                )))
            }
        };
        return Ok(Values::Serializer {
            name: name.to_string(),
            dumps: module.getattr("dumps")?.unbind(),
            loads: module.getattr("loads")?.unbind(),
        });
    }
    let (dumps, loads) = match (s.getattr("dumps"), s.getattr("loads")) {
        (Ok(d), Ok(l)) if d.is_callable() && l.is_callable() => (d, l),
        _ => {
            return Err(PyTypeError::new_err(format!(
                "serializer must be \"pickle\", \"json\", \"bytes\" or an object with \
                 dumps() and loads(), not {}",
                s.repr()?
            )))
        }
    };
    Ok(Values::Serializer {
        name: s.repr()?.to_string(),
        dumps: dumps.unbind(),
        loads: loads.unbind(),
    })
}
