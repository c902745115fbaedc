//! Previews on disk, by (digest, size): a PNG made once is served as a file
//! from then on, and a "no preview" answer is kept as a small marker too, so
//! a file nobody can read is not decoded again at every ask. The same bytes
//! give the same preview whichever version or proposal names them. Bounded in
//! size: past the bound the least recently used files go. The bundled backend
//! keeps one in its data folder (what a server answers from), or in its object
//! store's bucket with `--blobs s3://…` (unbounded there: a bucket's lifecycle
//! rule may expire `PREFIX/previews/`); the app keeps one in its cache folder
//! (what the backend sent, and its local copies'). Knows no blob store: a
//! bucket is reached through [`PreviewStore`], which the S3 store implements.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};
use crate::model::Digest;
use crate::owner_only;
use crate::preview::{self, Limits};

/// At most this many previews are decoded at once per cache, each within
/// [`preview::MEMORY_BUDGET`]: what bounds a server's memory when many large
/// files are asked for together.
const DECODES_AT_ONCE: usize = 2;

/// A preview's name in the cache: its bytes, its size and the readers' generation.
fn cache_key(digest: &Digest, size: u32) -> String {
    format!("{}-{size}-r{}", digest.hex(), preview::READER_GENERATION)
}

/// How much disk the app's previews may take: 256 MiB (some 2500
/// thumbnails of 512 px, or a few hundred large previews).
pub const DEFAULT_BOUND_BYTES: u64 = 256 << 20;

/// How much of a data folder the previews may take: a server's thumbnails of
/// many thousands of files.
pub const DATA_FOLDER_BOUND_BYTES: u64 = 2 << 30;

/// How long a "no preview" answer is believed: a newer reader (the server's
/// or the app's) may read the file later.
const NO_PREVIEW_KEPT: Duration = Duration::from_secs(24 * 3600);

/// Where previews are kept outside a folder (an object store's
/// `PREFIX/previews/`): named byte strings, each written whole.
#[async_trait::async_trait]
pub trait PreviewStore: Send + Sync {
    /// A stored preview: `Some((bytes, how long ago it was written))`, or
    /// `None` if there is none.
    async fn get(&self, name: &str) -> Result<Option<(Vec<u8>, Duration)>>;
    /// Stores a preview (a reader sees all of it or none).
    async fn put(&self, name: &str, bytes: &[u8]) -> Result<()>;
}

#[derive(Clone)]
pub struct PreviewCache {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    /// Previews kept in a store (`PREFIX/previews/…`) instead of in `dir`.
    store: Option<Arc<dyn PreviewStore>>,
    bound: u64,
    /// Bytes in the folder, counted on first use and kept up to date after.
    used: Mutex<Option<u64>>,
    /// One maker per key at a time: two rows showing one image ask once.
    making: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Turns to decode (see [`PreviewCache::decode`]).
    decodes: Arc<tokio::sync::Semaphore>,
}

impl PreviewCache {
    /// A cache in `dir` (made on first write) of at most `bound` bytes.
    pub fn new(dir: impl Into<PathBuf>, bound: u64) -> Self {
        Self::with(dir.into(), None, bound)
    }

    /// A cache kept in a store, such as an object store beside its blobs:
    /// every server on the bucket shares it.
    pub fn in_store(store: Arc<dyn PreviewStore>) -> Self {
        Self::with(PathBuf::new(), Some(store), u64::MAX)
    }

    fn with(dir: PathBuf, store: Option<Arc<dyn PreviewStore>>, bound: u64) -> Self {
        Self {
            inner: Arc::new(Inner {
                dir,
                store,
                bound,
                used: Mutex::new(None),
                making: Mutex::default(),
                decodes: Arc::new(tokio::sync::Semaphore::new(DECODES_AT_ONCE)),
            }),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Decodes the file at `source` into a PNG fitted into `size`, on the
    /// blocking pool, within the standard limits, taking one of this cache's
    /// turns. A reader cannot be stopped, so one that overruns keeps its turn
    /// until it ends, and the caller is answered when its time is up; the
    /// wait for a turn is bounded too.
    pub async fn decode(&self, source: PathBuf, size: u32) -> Result<Vec<u8>> {
        let permit = match tokio::time::timeout(
            preview::TIME_BUDGET,
            self.inner.decodes.clone().acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(Error::Internal("the preview cache is closed".into())),
            Err(_) => {
                return Err(Error::Unavailable(
                    "busy making other previews: try again shortly".into(),
                ))
            }
        };
        let limits = Limits::standard();
        let decode = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            preview::preview_file(&source, size, &limits).map(|made| preview::encode_preview(&made))
        });
        let waited = preview::TIME_BUDGET + Duration::from_secs(1);
        match tokio::time::timeout(waited, decode).await {
            Err(_) => Err(Error::NoPreview(
                "making the preview took too long: gave up".into(),
            )),
            Ok(Err(e)) => Err(Error::NoPreview(format!(
                "the file's reader failed on its contents: it seems damaged ({e})"
            ))),
            Ok(Ok(Ok(png))) if png.is_empty() => {
                Err(Error::Internal("a preview failed to encode".into()))
            }
            Ok(Ok(made)) => Ok(made?),
        }
    }

    /// The preview of `digest` at `size`: the cached file, or `make`'s PNG
    /// bytes written to the cache first. `make`'s `NoPreview` is remembered
    /// (and returned) like a picture; any other error is not.
    pub async fn get_or_make<F, Fut>(&self, digest: &Digest, size: u32, make: F) -> Result<PathBuf>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>>>,
    {
        self.made_once(&InFolder(self), &cache_key(digest, size), make)
            .await
    }

    /// [`PreviewCache::get_or_make`], answering the PNG's bytes, from either
    /// kind of cache (what a backend serves).
    pub async fn get_or_make_bytes<F, Fut>(
        &self,
        digest: &Digest,
        size: u32,
        make: F,
    ) -> Result<Vec<u8>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>>>,
    {
        let Some(store) = &self.inner.store else {
            let made = self.get_or_make(digest, size, make).await?;
            return Ok(tokio::fs::read(made).await?);
        };
        self.made_once(&InStore(&**store), &cache_key(digest, size), make)
            .await
    }

    /// What `place` keeps under `key`, or `make`'s answer kept there first,
    /// one maker per key at a time (two rows showing one image ask once).
    async fn made_once<P, F, Fut>(&self, place: &P, key: &str, make: F) -> Result<P::Answer>
    where
        P: Place,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>>>,
    {
        if let Some(found) = place.cached(key).await? {
            return found;
        }
        let turn = self.turn(key);
        let _turn = turn.lock().await;
        // Whoever had the turn before may have made it.
        if let Some(found) = place.cached(key).await? {
            return found;
        }
        let answer = match make().await {
            Ok(png) => place.keep(&format!("{key}.png"), png).await,
            Err(Error::NoPreview(why)) => place
                .keep(&format!("{key}.none"), why.clone().into_bytes())
                .await
                .and(Err(Error::NoPreview(why))),
            Err(e) => Err(e),
        };
        self.inner
            .making
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
        answer
    }

    /// The turn to make `key`: one maker per key at a time.
    fn turn(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.inner
            .making
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.to_owned())
            .or_default()
            .clone()
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
    /// never sees half a PNG), for its owner only, then evicts past the bound.
    fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf> {
        use std::io::Write;
        owner_only::create_dir_all(&self.inner.dir)?;
        let dest = self.inner.dir.join(name);
        let temp = self
            .inner
            .dir
            .join(format!(".{name}.{}", uuid::Uuid::new_v4()));
        let written = owner_only::file_options()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| file.write_all(bytes));
        if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &dest)) {
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

/// Where a cache keeps its previews, as [`PreviewCache::made_once`] uses it.
trait Place {
    /// What a preview is answered as: its file, or its bytes.
    type Answer;
    /// `Some` when the key is answered from here: the preview, or the
    /// remembered `NoPreview`.
    async fn cached(&self, key: &str) -> Result<Option<Result<Self::Answer>>>;
    /// Keeps `bytes` whole under `name`.
    async fn keep(&self, name: &str, bytes: Vec<u8>) -> Result<Self::Answer>;
}

/// The cache's folder, bounded.
struct InFolder<'a>(&'a PreviewCache);

impl Place for InFolder<'_> {
    type Answer = PathBuf;

    async fn cached(&self, key: &str) -> Result<Option<Result<PathBuf>>> {
        self.0.cached(key)
    }

    async fn keep(&self, name: &str, bytes: Vec<u8>) -> Result<PathBuf> {
        self.0.write(name, &bytes)
    }
}

/// A [`PreviewStore`] (unbounded: a bucket's lifecycle rule may expire it).
struct InStore<'a>(&'a dyn PreviewStore);

impl Place for InStore<'_> {
    type Answer = Vec<u8>;

    async fn cached(&self, key: &str) -> Result<Option<Result<Vec<u8>>>> {
        if let Some((png, _)) = self.0.get(&format!("{key}.png")).await? {
            return Ok(Some(Ok(png)));
        }
        match self.0.get(&format!("{key}.none")).await? {
            Some((why, age)) if age < NO_PREVIEW_KEPT => Ok(Some(Err(Error::NoPreview(
                String::from_utf8_lossy(&why).into_owned(),
            )))),
            _ => Ok(None),
        }
    }

    async fn keep(&self, name: &str, bytes: Vec<u8>) -> Result<Vec<u8>> {
        self.0.put(name, &bytes).await?;
        Ok(bytes)
    }
}

/// A preview's size within the API's bounds, or `Invalid`.
pub fn check_size(size: u32) -> Result<u32> {
    use crate::preview::{MAX_SIZE, MIN_SIZE};
    if (MIN_SIZE..=MAX_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(Error::Invalid(format!(
            "a preview size of {size} px is out of range: use {MIN_SIZE} to {MAX_SIZE}"
        )))
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
