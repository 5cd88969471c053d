//! Files and folders only this user may read: the state folder (local Claim records, the
//! broker's stage requests, the pass cache, which holds a private repository's comment text) and
//! the Runs' logs. Folders are made 0700, files 0600, whatever the umask allows beyond that.
//!
//! It does not decide where anything lives (`state.rs`, `pickup`, `snapshot/cache.rs` do).

use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// Folder mode: the owner only.
pub const DIR_MODE: u32 = 0o700;
/// File mode: the owner only, no execution.
pub const FILE_MODE: u32 = 0o600;

/// Makes `path` and any missing parent (each 0700), and makes `path` itself 0700 if it existed.
pub fn dir(path: &Path) -> io::Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)?;
    let mode = fs::metadata(path)?.permissions().mode() & 0o777;
    if mode != DIR_MODE {
        fs::set_permissions(path, fs::Permissions::from_mode(DIR_MODE))?;
    }
    Ok(())
}

/// Opens `path` for writing from the start (created 0600 if missing, emptied if not).
pub fn create(path: &Path) -> io::Result<fs::File> {
    fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .open(path)
}

/// Opens `path` for appending (created 0600 if missing).
pub fn append(path: &Path) -> io::Result<fs::File> {
    fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(FILE_MODE)
        .open(path)
}

/// Writes `bytes` to a new or emptied 0600 file at `path`.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    create(path)?.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn folders_are_0700_and_files_0600_even_under_an_open_umask() {
        // given a folder that exists open to everyone, and one to be made under it
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let made = open.join("a/b");
        // when both are made private and a file is written in the new one
        dir(&open).unwrap();
        dir(&made).unwrap();
        write(&made.join("f"), b"x").unwrap();
        drop(append(&made.join("log")).unwrap());
        // then the folders are the owner's only, and so are the files
        assert_eq!(mode(&open), 0o700);
        assert_eq!(mode(&made), 0o700);
        assert_eq!(mode(&open.join("a")), 0o700);
        assert_eq!(mode(&made.join("f")), 0o600);
        assert_eq!(mode(&made.join("log")), 0o600);
    }
}
