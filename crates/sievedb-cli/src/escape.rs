//! The byte-string escaping used on the command line and in the shell protocol.
//!
//! A token is a sequence of bytes written as text:
//!
//! * `%XX` (two hexadecimal digits, either case) stands for the byte `0xXX`;
//! * the token `""` stands for the empty string;
//! * every other byte stands for itself, except `%` and `"` which must be
//!   escaped (a lone `"` inside a token is an error).
//!
//! Output is canonical: printable ASCII graphic characters are written as
//! themselves, every other byte (controls, space, bytes >= 0x7F) plus `%`
//! and `"` is written `%XX` with uppercase digits, and the empty string is
//! written `""`. [`encode_token`] additionally escapes the first character of
//! a token that would otherwise read as one of the shell's answer words
//! (`OK`, `END`, `ERR`, `(nil)`), so that answers are never ambiguous.

use std::fmt;

/// Why a token could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscapeError {
    /// A `%` not followed by two hexadecimal digits; holds the byte offset of the `%`.
    BadPercent {
        /// Offset of the `%` in the token.
        offset: usize,
    },
    /// A `"` somewhere other than in the exact token `""`.
    StrayQuote {
        /// Offset of the `"` in the token.
        offset: usize,
    },
}

impl fmt::Display for EscapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EscapeError::BadPercent { offset } => write!(
                f,
                "bad escape at offset {offset}: `%` must be followed by two hex digits"
            ),
            EscapeError::StrayQuote { offset } => write!(
                f,
                "unexpected `\"` at offset {offset}: write `%22`, or `\"\"` for the empty string"
            ),
        }
    }
}

impl std::error::Error for EscapeError {}

/// Words the shell answers with; a token spelling one of them gets its first
/// character escaped by [`encode_token`].
const RESERVED: [&str; 4] = ["OK", "END", "ERR", "(nil)"];

/// Whether `b` is written as itself.
fn is_plain(b: u8) -> bool {
    b.is_ascii_graphic() && b != b'%' && b != b'"'
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn push_escaped(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 0x0F)]));
}

/// Writes `bytes` in canonical escaped form (see the module documentation).
pub fn encode(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "\"\"".to_string();
    }
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if is_plain(b) {
            out.push(char::from(b));
        } else {
            push_escaped(&mut out, b);
        }
    }
    out
}

/// Like [`encode`], but a token that would read as a shell answer word
/// (`OK`, `END`, `ERR`, `(nil)`) has its first character escaped, e.g. `%4FK`.
/// The result still decodes to `bytes`.
pub fn encode_token(bytes: &[u8]) -> String {
    if RESERVED.iter().any(|w| w.as_bytes() == bytes) {
        let mut out = String::with_capacity(bytes.len() + 2);
        push_escaped(&mut out, bytes[0]);
        out.push_str(&encode(&bytes[1..]));
        return out;
    }
    encode(bytes)
}

/// Decodes an escaped token. The empty text and the token `""` both decode
/// to the empty string.
pub fn decode(token: &[u8]) -> Result<Vec<u8>, EscapeError> {
    if token == b"\"\"" {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(token.len());
    let mut i = 0;
    while i < token.len() {
        match token[i] {
            b'%' => {
                let hi = token.get(i + 1).copied().and_then(hex_digit);
                let lo = token.get(i + 2).copied().and_then(hex_digit);
                match (hi, lo) {
                    (Some(h), Some(l)) => out.push(h << 4 | l),
                    _ => return Err(EscapeError::BadPercent { offset: i }),
                }
                i += 3;
            }
            b'"' => return Err(EscapeError::StrayQuote { offset: i }),
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn canonical_output() {
        assert_eq!(encode(b""), "\"\"");
        assert_eq!(encode(b"abc"), "abc");
        assert_eq!(encode(b"a b"), "a%20b");
        assert_eq!(encode(b"100%"), "100%25");
        assert_eq!(encode(b"say \"hi\""), "say%20%22hi%22");
        assert_eq!(
            encode(&[0, 0x7F, 0x80, 0xFF, b'\n', b'\t']),
            "%00%7F%80%FF%0A%09"
        );
        assert_eq!(
            encode(b"~!#$&'()*+,-./:;<=>?@[\\]^_`{|}"),
            "~!#$&'()*+,-./:;<=>?@[\\]^_`{|}"
        );
    }

    #[test]
    fn decodes_escapes_in_either_case() {
        assert_eq!(decode(b"%41%4a%4A").unwrap(), b"AJJ");
        assert_eq!(decode(b"%00x%ff").unwrap(), [0, b'x', 0xFF]);
        assert_eq!(decode(b"\"\"").unwrap(), b"");
        assert_eq!(decode(b"").unwrap(), b"");
        assert_eq!(decode(b"plain").unwrap(), b"plain");
        // Raw non-ASCII bytes are accepted as themselves.
        assert_eq!(decode("é".as_bytes()).unwrap(), "é".as_bytes());
    }

    #[test]
    fn rejects_bad_escapes() {
        assert_eq!(decode(b"%G1"), Err(EscapeError::BadPercent { offset: 0 }));
        assert_eq!(decode(b"%4"), Err(EscapeError::BadPercent { offset: 0 }));
        assert_eq!(decode(b"ab%"), Err(EscapeError::BadPercent { offset: 2 }));
        assert_eq!(decode(b"%4g"), Err(EscapeError::BadPercent { offset: 0 }));
        assert_eq!(decode(b"x%%41"), Err(EscapeError::BadPercent { offset: 1 }));
        assert_eq!(decode(b"\""), Err(EscapeError::StrayQuote { offset: 0 }));
        assert_eq!(decode(b"a\"\""), Err(EscapeError::StrayQuote { offset: 1 }));
        assert_eq!(
            decode(b"\"\"\"\""),
            Err(EscapeError::StrayQuote { offset: 0 })
        );
        assert!(decode(b"%G1").unwrap_err().to_string().contains("hex"));
    }

    #[test]
    fn reserved_words_are_escaped() {
        assert_eq!(encode_token(b"OK"), "%4FK");
        assert_eq!(encode_token(b"END"), "%45ND");
        assert_eq!(encode_token(b"ERR"), "%45RR");
        assert_eq!(encode_token(b"(nil)"), "%28nil)");
        assert_eq!(encode_token(b"OKAY"), "OKAY");
        assert_eq!(encode_token(b""), "\"\"");
        for w in RESERVED {
            assert_eq!(
                decode(encode_token(w.as_bytes()).as_bytes()).unwrap(),
                w.as_bytes()
            );
        }
    }

    #[test]
    fn round_trips_random_bytes() {
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        for _ in 0..2000 {
            let len = rng.gen_range(0..40);
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    // Bias towards the interesting bytes.
                    match rng.gen_range(0..4) {
                        0 => *[b'%', b'"', b' ', 0u8, 0xFF]
                            .get(rng.gen_range(0..5))
                            .unwrap_or(&0),
                        _ => rng.gen(),
                    }
                })
                .collect();
            for text in [encode(&bytes), encode_token(&bytes)] {
                assert!(!text.is_empty());
                assert!(text.bytes().all(|b| b.is_ascii_graphic()), "{text:?}");
                assert_eq!(decode(text.as_bytes()).unwrap(), bytes, "{text:?}");
            }
        }
    }
}
