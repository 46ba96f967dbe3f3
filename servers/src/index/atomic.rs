//! Atomic file replacement: write a temporary file beside the target, flush it to disk, rename it
//! over the target. A failed build never leaves a torn or half-written index behind, and nothing
//! a repository planted (a symlink at the temporary name or the target) redirects the write.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` atomically (`<name>.tmp` in the same folder, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomic_streamed(path, |file| file.write_all(bytes), |_| Ok(()))
}

/// Replaces `path` atomically with what `write` writes (through a buffer) into `<name>.tmp` in
/// the same folder; once it is on disk, `check` may read the temporary file (its path) and
/// refuse it, which leaves `path` as it was; else it is renamed over `path`.
pub fn write_atomic_streamed(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    check: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    write_pending(path, write)?.commit(check)
}

/// The replacement of `path` with what `write` writes (through a buffer), written and flushed
/// to disk but not yet in place: [`Pending::commit`] puts it there (then at little cost).
pub fn write_pending(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Pending, String> {
    let pending = Pending::create(path)?;
    let file = pending.file();
    let written = std::thread::scope(|scope| {
        let mut sink = EarlySync {
            file,
            scope,
            unsynced: 0,
            ask: None,
            tried: false,
        };
        let mut buffered = std::io::BufWriter::with_capacity(WRITE_BUFFER_BYTES, &mut sink);
        write(&mut buffered)?;
        buffered.flush()
        // The syncing thread, if any, ends once its sync does; the scope waits for it.
    })
    .and_then(|()| file.sync_all());
    written.map_err(|e| pending.error(e))?;
    Ok(pending)
}

/// Bytes written between two requests of [`EarlySync`] to sync the file.
const SYNC_EVERY_BYTES: u64 = 32 * 1024 * 1024;

/// The file being written, which every [`SYNC_EVERY_BYTES`] a second thread syncs as far as it
/// is written, so the disk writes a large file while it is being made and the final sync waits
/// for the last stretch only (a 186 MB `local.json` spent 0.15 s in its final one). The thread
/// starts with the first request, so a small file starts none; a request made while one waits
/// is dropped. An early sync that fails, or a thread that cannot start, is no matter: the final
/// sync is the one that counts, and it reports any error.
struct EarlySync<'scope, 'env> {
    file: &'env fs::File,
    scope: &'scope std::thread::Scope<'scope, 'env>,
    unsynced: u64,
    ask: Option<std::sync::mpsc::SyncSender<()>>,
    tried: bool,
}

impl EarlySync<'_, '_> {
    fn ask_for_sync(&mut self) {
        if !self.tried {
            self.tried = true;
            let (ask, asked) = std::sync::mpsc::sync_channel::<()>(1);
            let file = self.file;
            let started = std::thread::Builder::new()
                .name("index-sync".into())
                .spawn_scoped(self.scope, move || {
                    while asked.recv().is_ok() {
                        let _ = file.sync_data();
                    }
                });
            self.ask = started.is_ok().then_some(ask);
        }
        if let Some(ask) = &self.ask {
            let _ = ask.try_send(());
        }
    }
}

impl Write for EarlySync<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(bytes)?;
        self.unsynced += n as u64;
        if self.unsynced >= SYNC_EVERY_BYTES {
            self.unsynced = 0;
            self.ask_for_sync();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A replacement of a file under way: `<name>.tmp` beside it, created fresh, written by the
/// caller through [`Pending::file`] (in order or at positions), then put in place by
/// [`Pending::commit`]; dropped uncommitted, it is removed and the file stays as it was.
pub struct Pending {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<fs::File>,
}

impl Pending {
    /// Creates `<name>.tmp` beside `path`. A leftover or planted one is removed first (a symlink
    /// is unlinked, never followed) and the new one is created exclusively: `O_EXCL` does not
    /// follow links. A directory there is not removed (it may hold anything); the error names it.
    pub fn create(path: &Path) -> Result<Pending, String> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!("{name}.tmp"));
        let created = match fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&tmp),
        };
        let file = created.map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        Ok(Pending {
            path: path.to_owned(),
            tmp,
            file: Some(file),
        })
    }

    /// The temporary file.
    pub fn file(&self) -> &fs::File {
        self.file.as_ref().expect("a pending file until committed")
    }

    /// The message for an error met while writing it.
    pub fn error(&self, e: std::io::Error) -> String {
        format!("cannot write {}: {e}", self.tmp.display())
    }

    /// Flushes the temporary file to disk, lets `check` read it (its path) and refuse it, then
    /// renames it over the file: the rename replaces a target that is a symlink itself, not the
    /// file it points to.
    pub fn commit(mut self, check: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
        let file = self.file.take().expect("committed once");
        file.sync_all().map_err(|e| self.error(e))?;
        drop(file);
        check(&self.tmp)?;
        fs::rename(&self.tmp, &self.path)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Uncommitted, or a commit that failed: nothing half-written stays behind.
        let _ = fs::remove_file(&self.tmp);
    }
}

/// What the writer gathers before each write call.
const WRITE_BUFFER_BYTES: usize = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("index-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("x.json");
        fs::write(&target, "old").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert!(!dir.join("x.json.tmp").exists());
        // Links planted at the temporary name and at the target are replaced, never written through.
        let victim = dir.join("victim.txt");
        fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("x.json.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("z.json")).unwrap();
        write_atomic(&target, b"newer").unwrap();
        write_atomic(&dir.join("z.json"), b"zed").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&target).unwrap(), "newer");
        assert!(!fs::symlink_metadata(dir.join("z.json"))
            .unwrap()
            .is_symlink());
        assert_eq!(fs::read_to_string(dir.join("z.json")).unwrap(), "zed");
        // A check that refuses what was written leaves the target as it was, and no temporary.
        let refused = write_atomic_streamed(
            &target,
            |w| w.write_all(b"bad"),
            |tmp| {
                assert_eq!(fs::read(tmp).unwrap(), b"bad");
                Err("refused".into())
            },
        );
        assert_eq!(refused, Err("refused".into()));
        assert_eq!(fs::read_to_string(&target).unwrap(), "newer");
        assert!(!dir.join("x.json.tmp").exists());
        let err = write_atomic(&dir.join("missing/y.json"), b"z").unwrap_err();
        assert!(err.starts_with("cannot write "), "{err}");
        // A directory at the temporary name is left as it is, and the message names it.
        fs::create_dir_all(dir.join("d.json.tmp/inner")).unwrap();
        let err = write_atomic(&dir.join("d.json"), b"d").unwrap_err();
        assert!(
            err.starts_with(&format!(
                "cannot write {}: ",
                dir.join("d.json.tmp").display()
            )),
            "{err}"
        );
        assert!(dir.join("d.json.tmp/inner").is_dir());
        assert!(!dir.join("d.json").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_synced_while_it_is_written_holds_every_byte_in_order() {
        let dir = crate::scratch::TempDir::new("index-atomic-early-sync");
        let target = dir.join("large.json");
        // Past two early syncs, written in pieces of awkward sizes.
        let piece: Vec<u8> = (0..=250u8).collect();
        let pieces = (2 * SYNC_EVERY_BYTES as usize + 12_345) / piece.len();
        write_atomic_streamed(
            &target,
            |w| {
                for _ in 0..pieces {
                    w.write_all(&piece)?;
                }
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
        let read = fs::read(&target).unwrap();
        assert_eq!(read.len(), pieces * piece.len());
        assert!(read.chunks(piece.len()).all(|c| c == piece.as_slice()));
    }
}
