//! Atomic file replacement: write a temporary file beside the target, flush it to disk, rename it
//! over the target. A failed build never leaves a torn or half-written index behind.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` atomically (`<name>.tmp` in the same folder, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!("{name}.tmp"));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

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
        let err = write_atomic(&dir.join("missing/y.json"), b"z").unwrap_err();
        assert!(err.starts_with("cannot write "), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
