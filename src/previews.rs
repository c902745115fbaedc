//! Previews made once per (digest, size) and kept in a folder: a PNG, or a
//! small marker saying why there is none, so a file nobody can preview is
//! not decoded again at every ask. The same bytes give the same preview
//! whichever version or proposal names them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::model::Digest;
use crate::owner_only;
use crate::preview::{self, Limits, NoPreview};

/// At most this many previews are decoded at once, each within the memory
/// budget of [`preview::MEMORY_BUDGET`]: what bounds a server's memory when
/// many large files are asked for together.
const DECODES_AT_ONCE: usize = 2;

pub struct PreviewCache {
    dir: PathBuf,
    decodes: Arc<tokio::sync::Semaphore>,
    /// One maker per (digest, size): a second ask waits for the first.
    making: Mutex<HashMap<(Digest, u32), Turn>>,
}

/// Held by whoever is making one preview.
type Turn = Arc<tokio::sync::Mutex<()>>;

impl PreviewCache {
    pub fn open(dir: &Path) -> Result<Self> {
        owner_only::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            decodes: Arc::new(tokio::sync::Semaphore::new(DECODES_AT_ONCE)),
            making: Mutex::new(HashMap::new()),
        })
    }

    fn entry(&self, digest: &Digest, size: u32) -> PathBuf {
        let hex = digest.hex();
        self.dir.join(&hex[..2]).join(format!("{hex}-{size}.png"))
    }

    /// The PNG preview of the bytes with `digest` (in the file `source`, read
    /// only when not cached yet), fitted into `size`; `Error::NoPreview` when
    /// there is none. `size` must be within the API's bounds.
    pub async fn get(&self, digest: &Digest, size: u32, source: PathBuf) -> Result<Vec<u8>> {
        check_size(size)?;
        let png = self.entry(digest, size);
        let none = png.with_extension("none");
        if let Some(found) = read_cached(&png, &none).await? {
            return found;
        }
        let maker = self
            .making
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((digest.clone(), size))
            .or_default()
            .clone();
        let turn = maker.lock().await;
        let made = match read_cached(&png, &none).await? {
            Some(found) => found,
            None => self.make(size, source, &png, &none).await,
        };
        drop(turn);
        self.making
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, m| Arc::strong_count(m) > 1);
        made
    }

    async fn make(&self, size: u32, source: PathBuf, png: &Path, none: &Path) -> Result<Vec<u8>> {
        // Waiting for a turn is bounded too: decodes that overran their time
        // (a reader cannot be stopped) hold their turns until they end.
        let permit =
            match tokio::time::timeout(preview::TIME_BUDGET, self.decodes.clone().acquire_owned())
                .await
            {
                Ok(Ok(permit)) => permit,
                Ok(Err(_)) => return Err(Error::Internal("the preview cache is closed".into())),
                Err(_) => {
                    return Err(Error::Unavailable(
                        "the server is busy making other previews: try again shortly".into(),
                    ))
                }
            };
        let limits = Limits::standard();
        // The decode holds its permit until it ends, even after we gave up
        // waiting for it: a reader that overruns still counts against the cap.
        let decode = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            preview::render_file(&source, size, &limits).map(|image| preview::encode_png(&image))
        });
        let waited = limits.deadline.saturating_duration_since(Instant::now())
            + std::time::Duration::from_secs(1);
        let outcome = match tokio::time::timeout(waited, decode).await {
            Err(_) => return Err(gave_up()),
            Ok(Err(e)) => Err(NoPreview(format!(
                "the file's reader failed on its contents: it seems damaged ({e})"
            ))),
            Ok(Ok(outcome)) => outcome,
        };
        // A preview that ran out of time may succeed when the machine is less
        // busy: only what the bytes decide is kept.
        let timed_out = Instant::now() > limits.deadline;
        match outcome {
            Ok(bytes) if bytes.is_empty() => {
                Err(Error::Internal("a preview failed to encode".into()))
            }
            Ok(bytes) => {
                keep(png, &bytes).await;
                Ok(bytes)
            }
            Err(no) => {
                if !timed_out {
                    keep(none, no.0.as_bytes()).await;
                }
                Err(no.into())
            }
        }
    }
}

fn gave_up() -> Error {
    Error::NoPreview("making the preview took too long: gave up".into())
}

/// Refuses a preview size outside the API's bounds.
pub fn check_size(size: u32) -> Result<()> {
    if (preview::MIN_SIZE..=preview::MAX_SIZE).contains(&size) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "a preview's size is {} to {} pixels, not {size}",
            preview::MIN_SIZE,
            preview::MAX_SIZE
        )))
    }
}

/// A cached preview (`Ok`) or a cached reason for none (`Err`), if either.
async fn read_cached(png: &Path, none: &Path) -> Result<Option<Result<Vec<u8>>>> {
    match tokio::fs::read(png).await {
        Ok(bytes) => return Ok(Some(Ok(bytes))),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        Err(_) => {}
    }
    match tokio::fs::read_to_string(none).await {
        Ok(why) => Ok(Some(Err(Error::NoPreview(why)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Writes a cache entry whole or not at all: a temporary file renamed into
/// place, so a reader never sees half a PNG. A cache that cannot be written
/// (a full disk) only means the preview is made again next time.
async fn keep(path: &Path, bytes: &[u8]) {
    if let Err(e) = write_whole(path, bytes).await {
        tracing::warn!("a preview was not cached at {}: {e}", path.display());
    }
}

async fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let path = path.to_owned();
    let bytes = bytes.to_vec();
    tokio::task::spawn_blocking(move || -> Result<()> {
        use std::io::Write;
        let folder = path.parent().expect("entries are in shard folders");
        owner_only::create_dir_all(folder)?;
        let temp = folder.join(format!(".{}.tmp", uuid::Uuid::new_v4()));
        let written = (|| {
            let mut file = owner_only::file_options()
                .write(true)
                .create_new(true)
                .open(&temp)?;
            file.write_all(&bytes)?;
            std::fs::rename(&temp, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        Ok(written?)
    })
    .await
    .map_err(|e| Error::Internal(format!("task: {e}")))?
}
