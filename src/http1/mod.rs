//! HTTP/1.1 without I/O: the one codec under the server (`crate::http`) and the client
//! (`crate::client`). Each parser works on the bytes it is given and answers complete, need more,
//! or what was wrong; the caller does the reading and bounds the time.
//!
//! [`limits`] (every bound the codec holds), [`request`] (request heads: the server reads them),
//! [`response`] (request heads written and responses read: the client), [`chunked`] (chunked
//! bodies both ways), [`url`] (`http://` and `https://` URLs, for connecting and for OAuth's
//! identifiers alike), [`form`] (form-encoded bodies and queries), [`sse`] (the event-stream
//! format, written and parsed).

pub mod chunked;
pub mod form;
pub mod limits;
pub mod request;
pub mod response;
pub mod sse;
pub mod url;
