//! One writer at a time per library directory.
//!
//! Generations make a crash safe, not a race: two processes writing the same library would pick
//! the same next generation number, and each one's commit removes the other's half-written
//! generation; a writer that opened the library before another one committed would build its
//! generation on the older one and silently drop the other's clauses. So every commit
//! ([`crate::Library::build`], [`crate::Library::add`]) runs under an exclusive lock on
//! `LIBRARY/LOCK`, and a long-running writer (`precedent ingest`) takes the lock once for its
//! whole run with [`crate::Library::lock`], so a second writer is refused at once instead of
//! after minutes of reading contracts.
//!
//! The lock is an OS file lock (`flock` on Unix), so it dies with the process: a crashed writer
//! leaves no stale lock behind. Within one process the lock is shared (a writer that holds it can
//! commit as often as it likes); OS file locks would otherwise refuse the process its own lock.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::{io_err, LibraryError};

const LOCK_FILE: &str = "LOCK";

/// Held while a process may write a library; released when the last clone is dropped.
#[derive(Clone)]
pub struct WriteLock {
    _held: Arc<HeldLock>,
}

struct HeldLock {
    // Dropping the file releases the OS lock.
    _file: File,
}

/// Locks this process holds, by canonical library path.
fn held() -> &'static Mutex<HashMap<PathBuf, Weak<HeldLock>>> {
    static HELD: OnceLock<Mutex<HashMap<PathBuf, Weak<HeldLock>>>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

impl WriteLock {
    /// Takes the write lock of the library in `root` (created if missing), or fails at once with
    /// [`LibraryError::Locked`] when another process holds it.
    pub(crate) fn acquire(root: &Path) -> Result<WriteLock, LibraryError> {
        Self::take(root, false)
    }

    /// As [`WriteLock::acquire`], but waits for another process's lock to be released.
    pub(crate) fn acquire_waiting(root: &Path) -> Result<WriteLock, LibraryError> {
        Self::take(root, true)
    }

    fn take(root: &Path, wait: bool) -> Result<WriteLock, LibraryError> {
        fs::create_dir_all(root).map_err(io_err(root))?;
        let key = root.canonicalize().map_err(io_err(root))?;
        // A poisoned map only means another thread panicked while holding it; the map itself
        // is still consistent (entries are inserted whole).
        let mut held = held().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = held.get(&key).and_then(Weak::upgrade) {
            return Ok(WriteLock { _held: existing });
        }
        let path = key.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) if wait => {
                // Not holding the map while waiting: other libraries stay lockable.
                drop(held);
                file.lock().map_err(io_err(&path))?;
                held = self::held().lock().unwrap_or_else(|e| e.into_inner());
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(LibraryError::Locked {
                    path: root.to_path_buf(),
                })
            }
            Err(fs::TryLockError::Error(e)) => return Err(io_err(&path)(e)),
        }
        let lock = Arc::new(HeldLock { _file: file });
        held.retain(|_, weak| weak.strong_count() > 0);
        held.insert(key, Arc::downgrade(&lock));
        Ok(WriteLock { _held: lock })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_within_a_process_exclusive_across_file_handles() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("lib");
        let first = WriteLock::acquire(&root).expect("first");
        // The same process may take it again (a writer committing several generations).
        let again = WriteLock::acquire(&root).expect("again");
        // Another holder (as another process would be) is refused while it is held.
        let other = File::open(root.join(LOCK_FILE)).expect("open");
        assert!(matches!(
            other.try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));
        drop(first);
        assert!(matches!(
            other.try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));
        drop(again);
        // Released with the last handle.
        other.try_lock().expect("free after the last handle");
        let refused = WriteLock::acquire(&root)
            .err()
            .expect("held by the other handle");
        assert!(matches!(refused, LibraryError::Locked { .. }), "{refused}");
        assert!(refused.to_string().contains("another process"), "{refused}");
        // A waiting writer gets it once the other holder lets go.
        let waiter = {
            let root = root.clone();
            std::thread::spawn(move || WriteLock::acquire_waiting(&root).map(|_| ()))
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !waiter.is_finished(),
            "took a lock that another handle held"
        );
        drop(other);
        waiter.join().expect("thread").expect("lock after release");
    }
}
