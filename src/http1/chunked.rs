//! An incremental decoder for `Transfer-Encoding: chunked` request bodies (RFC 9112 §7.1).
//!
//! Feed it bytes as they arrive; it appends the decoded body to a buffer and says how much input it
//! consumed, so bytes of a pipelined next request are left untouched. Chunk sizes are parsed
//! strictly (hex digits only: no sign, no `0x`, no whitespace, no overflow), every line must end in
//! CRLF, and the decoded size, chunk lines and trailers are bounded.

use super::limits::{MAX_BODY_BYTES, MAX_CHUNK_LINE, MAX_TRAILER_BYTES};
use std::fmt;

/// Why a chunked body was refused; every variant ends the connection.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum ChunkError {
    /// The chunk size is not a run of hex digits (optionally followed by `;extensions`) (400).
    BadChunkSize,
    /// A chunk-size line is longer than [`MAX_CHUNK_LINE`] (400).
    ChunkLineTooLong,
    /// Chunk data is not followed by CRLF, or a line ends in a bare CR or LF (400).
    BadLineEnding,
    /// The decoded body would pass the body limit (413).
    BodyTooLarge,
    /// The trailer section is larger than [`MAX_TRAILER_BYTES`] (400).
    TrailerTooLarge,
    /// A trailer line holds a control character (400).
    BadTrailer,
}

impl ChunkError {
    /// The status code the server answers with.
    pub fn status(self) -> u16 {
        match self {
            ChunkError::BodyTooLarge => 413,
            _ => 400,
        }
    }
}

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChunkError::BadChunkSize => {
                f.write_str("chunk size must be hexadecimal digits, optionally then `;extension`")
            }
            ChunkError::ChunkLineTooLong => {
                write!(f, "chunk-size line longer than {MAX_CHUNK_LINE} bytes")
            }
            ChunkError::BadLineEnding => f.write_str("chunk lines and data must end with CRLF"),
            ChunkError::BodyTooLarge => {
                write!(f, "chunked body larger than {MAX_BODY_BYTES} bytes")
            }
            ChunkError::TrailerTooLarge => {
                write!(f, "trailer section larger than {MAX_TRAILER_BYTES} bytes")
            }
            ChunkError::BadTrailer => f.write_str("trailer line holds a control character"),
        }
    }
}

impl std::error::Error for ChunkError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size (the value so far and the line length so far).
    Size {
        value: usize,
        len: usize,
    },
    /// Past `;`: skipping chunk extensions until CR.
    Extension {
        value: usize,
        len: usize,
    },
    /// Saw the CR ending a chunk-size line.
    SizeLf {
        value: usize,
    },
    /// Copying chunk data; this many bytes remain.
    Data {
        remaining: usize,
    },
    /// Expecting the CR after chunk data.
    DataCr,
    /// Expecting the LF after chunk data.
    DataLf,
    /// At the start of a trailer line (or the blank line ending the body).
    TrailerStart,
    /// Inside a trailer line.
    TrailerLine,
    /// Saw the CR ending a trailer line (`blank`: the line was empty, so the body ends at the LF).
    TrailerLf {
        blank: bool,
    },
    Done,
}

/// Decodes one chunked body; create a new decoder per request.
#[derive(Debug)]
pub struct ChunkedDecoder {
    state: State,
    decoded: usize,
    trailer_bytes: usize,
    /// Largest decoded body accepted ([`MAX_BODY_BYTES`] for requests).
    limit: usize,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder::new()
    }
}

impl ChunkedDecoder {
    pub fn new() -> ChunkedDecoder {
        ChunkedDecoder::with_limit(MAX_BODY_BYTES)
    }

    /// A decoder whose body may decode to `limit` bytes (the client reads responses, whose caps
    /// it enforces itself, with `usize::MAX`).
    pub fn with_limit(limit: usize) -> ChunkedDecoder {
        ChunkedDecoder {
            state: State::Size { value: 0, len: 0 },
            decoded: 0,
            trailer_bytes: 0,
            limit,
        }
    }

    /// True once the last chunk and the trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes from `input`, appending body bytes to `out`; returns how many input bytes it used
    /// (all of them unless the body ended inside `input`).
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, ChunkError> {
        let mut i = 0;
        while i < input.len() && self.state != State::Done {
            if let State::Data { remaining } = self.state {
                let take = remaining.min(input.len() - i);
                out.extend_from_slice(&input[i..i + take]);
                i += take;
                self.state = match remaining - take {
                    0 => State::DataCr,
                    left => State::Data { remaining: left },
                };
                continue;
            }
            self.state = self.step(input[i])?;
            i += 1;
        }
        Ok(i)
    }

    /// Advances over one framing byte.
    fn step(&mut self, b: u8) -> Result<State, ChunkError> {
        if matches!(
            self.state,
            State::TrailerStart | State::TrailerLine | State::TrailerLf { .. }
        ) {
            self.trailer_bytes += 1;
            if self.trailer_bytes > MAX_TRAILER_BYTES {
                return Err(ChunkError::TrailerTooLarge);
            }
        }
        Ok(match self.state {
            State::Size { value, len } => {
                if len >= MAX_CHUNK_LINE && b != b'\r' {
                    return Err(ChunkError::ChunkLineTooLong);
                }
                match (b, hex_value(b)) {
                    (_, Some(d)) => {
                        let value = value
                            .checked_mul(16)
                            .and_then(|v| v.checked_add(d))
                            .filter(|&v| v <= self.limit)
                            .ok_or(ChunkError::BodyTooLarge)?;
                        State::Size {
                            value,
                            len: len + 1,
                        }
                    }
                    (b';', None) if len > 0 => State::Extension {
                        value,
                        len: len + 1,
                    },
                    (b'\r', None) if len > 0 => State::SizeLf { value },
                    (b'\n', None) if len > 0 => return Err(ChunkError::BadLineEnding),
                    _ => return Err(ChunkError::BadChunkSize),
                }
            }
            State::Extension { value, len } => {
                if len >= MAX_CHUNK_LINE && b != b'\r' {
                    return Err(ChunkError::ChunkLineTooLong);
                }
                match b {
                    b'\r' => State::SizeLf { value },
                    b'\t' | 0x20..=0x7e | 0x80..=0xff => State::Extension {
                        value,
                        len: len + 1,
                    },
                    _ => return Err(ChunkError::BadChunkSize),
                }
            }
            State::SizeLf { value } => {
                if b != b'\n' {
                    return Err(ChunkError::BadLineEnding);
                }
                if value == 0 {
                    State::TrailerStart
                } else {
                    self.decoded = self.decoded.saturating_add(value);
                    if self.decoded > self.limit {
                        return Err(ChunkError::BodyTooLarge);
                    }
                    State::Data { remaining: value }
                }
            }
            State::DataCr if b == b'\r' => State::DataLf,
            State::DataLf if b == b'\n' => State::Size { value: 0, len: 0 },
            State::DataCr | State::DataLf => return Err(ChunkError::BadLineEnding),
            State::TrailerStart | State::TrailerLine => match b {
                b'\r' => State::TrailerLf {
                    blank: self.state == State::TrailerStart,
                },
                b'\n' => return Err(ChunkError::BadLineEnding),
                b'\t' | 0x20..=0x7e | 0x80..=0xff => State::TrailerLine,
                _ => return Err(ChunkError::BadTrailer),
            },
            State::TrailerLf { blank } => match (b, blank) {
                (b'\n', true) => State::Done,
                (b'\n', false) => State::TrailerStart,
                _ => return Err(ChunkError::BadLineEnding),
            },
            State::Data { .. } | State::Done => self.state,
        })
    }
}

fn hex_value(b: u8) -> Option<usize> {
    (b as char).to_digit(16).map(|d| d as usize)
}

/// Frames `data` as one chunk (empty data would end the body, so it yields nothing).
pub fn encode_chunk(data: &[u8], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The last chunk with an empty trailer section.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Result<(Vec<u8>, usize, bool), ChunkError> {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let used = d.decode(input, &mut out)?;
        Ok((out, used, d.is_done()))
    }

    #[test]
    fn decodes_chunks_extensions_and_trailers_and_stops_at_the_end() {
        let input = b"5;name=\"v\"\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        let (out, used, done) = decode_all(input).unwrap();
        assert_eq!(out, b"hello, world!!!");
        assert!(done);
        assert_eq!(&input[used..], b"NEXT");
    }

    #[test]
    fn gives_the_same_result_fed_one_byte_at_a_time() {
        let input = b"3\r\nabc\r\n01\r\nd\r\n0\r\n\r\n";
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        for b in input.chunks(1) {
            assert!(!d.is_done());
            assert_eq!(d.decode(b, &mut out), Ok(1));
        }
        assert!(d.is_done());
        assert_eq!(out, b"abcd");
    }

    #[test]
    fn refuses_loose_chunk_sizes() {
        for input in [
            &b" 5\r\nhello\r\n0\r\n\r\n"[..],
            b"5 \r\nhello\r\n0\r\n\r\n",
            b"+5\r\nhello\r\n0\r\n\r\n",
            b"0x5\r\nhello\r\n0\r\n\r\n",
            b"\r\n",
            b";ext\r\n",
            b"5;\x01\r\n",
            b"g\r\n",
        ] {
            assert_eq!(
                decode_all(input).err(),
                Some(ChunkError::BadChunkSize),
                "{input:?}"
            );
        }
    }

    #[test]
    fn refuses_bad_line_endings() {
        for input in [
            &b"5\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhelloX\r\n",
            b"5\r\nhello\rX",
            b"0\r\n\n",
            b"0\r\nX-T: 1\n",
            b"0\r\n\rX",
        ] {
            assert_eq!(
                decode_all(input).err(),
                Some(ChunkError::BadLineEnding),
                "{input:?}"
            );
        }
        assert_eq!(
            decode_all(b"0\r\nX-T: \x01\r\n\r\n").err(),
            Some(ChunkError::BadTrailer)
        );
    }

    #[test]
    fn body_limit_edge() {
        let exact = format!("{MAX_BODY_BYTES:x}\r\n");
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        d.decode(exact.as_bytes(), &mut out).unwrap();
        d.decode(&vec![b'a'; MAX_BODY_BYTES], &mut out).unwrap();
        d.decode(b"\r\n0\r\n\r\n", &mut out).unwrap();
        assert!(d.is_done());
        assert_eq!(out.len(), MAX_BODY_BYTES);

        let over = format!("{:x}\r\n", MAX_BODY_BYTES + 1);
        assert_eq!(
            decode_all(over.as_bytes()).err(),
            Some(ChunkError::BodyTooLarge)
        );
        // The limit holds across chunks, and an overflowing size never wraps.
        let split = format!("{MAX_BODY_BYTES:x}\r\n");
        let mut d = ChunkedDecoder::new();
        d.decode(split.as_bytes(), &mut out).unwrap();
        d.decode(&vec![b'a'; MAX_BODY_BYTES], &mut out).unwrap();
        assert_eq!(
            d.decode(b"\r\n1\r\n", &mut out).err(),
            Some(ChunkError::BodyTooLarge)
        );
        assert_eq!(
            decode_all(b"ffffffffffffffffffffffff\r\n").err(),
            Some(ChunkError::BodyTooLarge)
        );
    }

    #[test]
    fn chunk_line_and_trailer_limit_edges() {
        let line = |len: usize| format!("1;{}\r\nx\r\n0\r\n\r\n", "e".repeat(len - 2));
        assert!(decode_all(line(MAX_CHUNK_LINE).as_bytes()).unwrap().2);
        assert_eq!(
            decode_all(line(MAX_CHUNK_LINE + 1).as_bytes()).err(),
            Some(ChunkError::ChunkLineTooLong)
        );
        let zeros = "0".repeat(MAX_CHUNK_LINE + 1);
        assert_eq!(
            decode_all(zeros.as_bytes()).err(),
            Some(ChunkError::ChunkLineTooLong)
        );
        // The trailer budget counts every byte after the last chunk's line, the final CRLF included.
        let trailer = |len: usize| format!("0\r\nT: {}\r\n\r\n", "v".repeat(len - 7));
        assert!(decode_all(trailer(MAX_TRAILER_BYTES).as_bytes()).unwrap().2);
        assert_eq!(
            decode_all(trailer(MAX_TRAILER_BYTES + 1).as_bytes()).err(),
            Some(ChunkError::TrailerTooLarge)
        );
    }

    #[test]
    fn encoded_chunks_decode_back() {
        let mut wire = Vec::new();
        encode_chunk(b"event: message\n", &mut wire);
        encode_chunk(b"", &mut wire);
        encode_chunk(&[0u8; 300], &mut wire);
        wire.extend_from_slice(LAST_CHUNK);
        let (out, used, done) = decode_all(&wire).unwrap();
        assert!(done);
        assert_eq!(used, wire.len());
        assert_eq!(out.len(), 15 + 300);
    }
}
