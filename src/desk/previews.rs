//! The app's previews on disk, by (digest, size): a PNG made once (by the
//! backend, or here from a local copy) is served as a file from then on, and
//! a "no preview" answer is kept as a small marker too, so a file nobody can
//! read is not asked about again and again. Bounded in size: past the bound
//! the least recently used files go.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};
use crate::model::Digest;

/// How much disk the previews may take: 256 MiB (some 2500 thumbnails of
/// 512 px, or a few hundred large previews).
pub const DEFAULT_BOUND_BYTES: u64 = 256 << 20;

/// How long a "no preview" answer is believed: a newer reader (the server's
/// or the app's) may read the file later.
const NO_PREVIEW_KEPT: Duration = Duration::from_secs(24 * 3600);

#[derive(Clone)]
pub struct PreviewCache {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    bound: u64,
    /// Bytes in the folder, counted on first use and kept up to date after.
    used: Mutex<Option<u64>>,
    /// One maker per key at a time: two rows showing one image ask once.
    making: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl PreviewCache {
    /// A cache in `dir` (made on first write) of at most `bound` bytes.
    pub fn new(dir: impl Into<PathBuf>, bound: u64) -> Self {
        Self {
            inner: Arc::new(Inner {
                dir: dir.into(),
                bound,
                used: Mutex::new(None),
                making: Mutex::default(),
            }),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The preview of `digest` at `size`: the cached file, or `make`'s PNG
    /// bytes written to the cache first. `make`'s `NoPreview` is remembered
    /// (and returned) like a picture; any other error is not.
    pub async fn get_or_make<F, Fut>(&self, digest: &Digest, size: u32, make: F) -> Result<PathBuf>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>>>,
    {
        let key = format!("{}-{size}", digest.hex());
        if let Some(found) = self.cached(&key)? {
            return found;
        }
        let turn = self
            .inner
            .making
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        let _turn = turn.lock().await;
        // Whoever had the turn before may have made it.
        if let Some(found) = self.cached(&key)? {
            return found;
        }
        let answer = match make().await {
            Ok(png) => self.write(&format!("{key}.png"), &png),
            Err(Error::NoPreview(why)) => self
                .write(&format!("{key}.none"), why.as_bytes())
                .and(Err(Error::NoPreview(why))),
            Err(e) => Err(e),
        };
        self.inner
            .making
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
        answer
    }

    /// `Some` when the key is answered from disk: the PNG's path, or the
    /// remembered `NoPreview`.
    fn cached(&self, key: &str) -> Result<Option<Result<PathBuf>>> {
        let png = self.inner.dir.join(format!("{key}.png"));
        if png.is_file() {
            // Its mtime is its last use, for the eviction's order.
            let _ = std::fs::File::options()
                .append(true)
                .open(&png)
                .and_then(|f| f.set_modified(SystemTime::now()));
            return Ok(Some(Ok(png)));
        }
        let marker = self.inner.dir.join(format!("{key}.none"));
        let fresh = std::fs::metadata(&marker)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age < NO_PREVIEW_KEPT);
        if fresh {
            let why = std::fs::read_to_string(&marker).unwrap_or_default();
            return Ok(Some(Err(Error::NoPreview(why))));
        }
        Ok(None)
    }

    /// Writes `name` whole (a temporary file renamed into place, so a reader
    /// never sees half a PNG), then evicts past the bound.
    fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.inner.dir)?;
        let dest = self.inner.dir.join(name);
        let temp = self
            .inner
            .dir
            .join(format!(".{name}.{}", uuid::Uuid::new_v4()));
        std::fs::write(&temp, bytes)?;
        if let Err(e) = std::fs::rename(&temp, &dest) {
            let _ = std::fs::remove_file(&temp);
            return Err(e.into());
        }
        let mut used = self.inner.used.lock().unwrap_or_else(|p| p.into_inner());
        let total = match *used {
            Some(before) => before + bytes.len() as u64,
            None => folder_bytes(&self.inner.dir),
        };
        *used = Some(if total > self.inner.bound {
            evict(&self.inner.dir, self.inner.bound, &dest)
        } else {
            total
        });
        Ok(dest)
    }
}

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Removes the least recently used files until the folder holds at most
/// three quarters of `bound` (so eviction does not run at every write), never
/// `keep` (the file just written). Returns the bytes left.
fn evict(dir: &Path, bound: u64, keep: &Path) -> u64 {
    let mut files: Vec<(SystemTime, u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let metadata = entry.metadata().ok()?;
            metadata.is_file().then(|| {
                (
                    metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    metadata.len(),
                    entry.path(),
                )
            })
        })
        .collect();
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    files.sort();
    let target = bound / 4 * 3;
    for (_, len, path) in files {
        if total <= target {
            break;
        }
        if path != keep && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest_of(n: u8) -> Digest {
        blake3::hash(&[n]).into()
    }

    #[tokio::test]
    async fn past_its_bound_the_least_recently_used_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PreviewCache::new(dir.path(), 4000);
        let png = vec![7u8; 1000];
        let mut made = Vec::new();
        for n in 0..3 {
            made.push(
                cache
                    .get_or_make(&digest_of(n), 64, || async { Ok(png.clone()) })
                    .await
                    .unwrap(),
            );
            // mtimes a second apart, whatever the file system's granularity.
            let at = SystemTime::now() - Duration::from_secs(100 - n as u64 * 10);
            std::fs::File::options()
                .append(true)
                .open(&made[n as usize])
                .unwrap()
                .set_modified(at)
                .unwrap();
        }
        // The oldest is used again: now the second one is the least recent.
        cache
            .get_or_make(&digest_of(0), 64, || async { panic!("cached") })
            .await
            .unwrap();
        for n in 3..5 {
            cache
                .get_or_make(&digest_of(n), 64, || async { Ok(png.clone()) })
                .await
                .unwrap();
        }
        assert!(folder_bytes(dir.path()) <= 4000);
        assert!(made[0].exists(), "used last, kept");
        assert!(!made[1].exists(), "least recently used, evicted");
    }

    #[tokio::test]
    async fn no_preview_is_remembered_and_other_errors_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PreviewCache::new(dir.path(), DEFAULT_BOUND_BYTES);
        let (a, b) = (digest_of(1), digest_of(2));
        let first = cache
            .get_or_make(&a, 64, || async {
                Err(Error::NoPreview("a ZIP archive".into()))
            })
            .await;
        assert_eq!(first, Err(Error::NoPreview("a ZIP archive".into())));
        let again = cache
            .get_or_make(&a, 64, || async { panic!("asked again") })
            .await;
        assert_eq!(again, Err(Error::NoPreview("a ZIP archive".into())));
        let down = cache
            .get_or_make(&b, 64, || async { Err(Error::Unavailable("down".into())) })
            .await;
        assert!(matches!(down, Err(Error::Unavailable(_))));
        let up = cache
            .get_or_make(&b, 64, || async { Ok(vec![1, 2, 3]) })
            .await
            .unwrap();
        assert_eq!(std::fs::read(up).unwrap(), [1, 2, 3]);
    }
}
