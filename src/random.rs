//! The one source of randomness: the operating system's generator, read from [`SOURCE`] (std has
//! no CSPRNG of its own, and `#![forbid(unsafe_code)]` rules out the `getrandom` call). It fails
//! closed: a draw that cannot be made is an error naming the source, never a weaker substitute
//! such as the clock. Session ids, sealed-session nonces, request-state keys, event-id tags, JWT
//! ids and PKCE values all come from here.

use std::fs::File;
use std::io::{self, Read};
use std::sync::Mutex;

/// The operating system's random device.
pub const SOURCE: &str = "/dev/urandom";

/// Fills `bytes` from a fresh handle on [`SOURCE`].
pub fn fill(bytes: &mut [u8]) -> io::Result<()> {
    File::open(SOURCE)
        .and_then(|mut source| source.read_exact(bytes))
        .map_err(named)
}

/// `N` random bytes.
pub fn array<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    fill(&mut bytes)?;
    Ok(bytes)
}

/// The error of a draw, naming the source.
fn named(error: io::Error) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("cannot read the system random source {SOURCE}: {error}"),
    )
}

/// A handle on [`SOURCE`] kept open for many draws (one per session or nonce), so a server that
/// later runs out of file descriptors still draws.
#[derive(Debug)]
pub struct Source(Mutex<File>);

impl Source {
    pub fn open() -> io::Result<Source> {
        Ok(Source(Mutex::new(File::open(SOURCE).map_err(named)?)))
    }

    /// Fills `bytes`.
    pub fn fill(&self, bytes: &mut [u8]) -> io::Result<()> {
        let mut source = self.0.lock().unwrap_or_else(|e| e.into_inner());
        source.read_exact(bytes).map_err(named)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ_and_fill_what_is_asked() {
        let (a, b) = (array::<16>().unwrap(), array::<16>().unwrap());
        assert_ne!(a, b);
        let source = Source::open().unwrap();
        let mut c = [0u8; 64];
        source.fill(&mut c).unwrap();
        assert_ne!(c, [0u8; 64]);
        fill(&mut []).unwrap();
    }
}
