//! Clip Studio Paint `.clip`: `CSFCHUNK`, then chunks (an 8-byte name such as
//! `CHNKHead`, a big-endian u64 length, the data). `CHNKSQLi` is an SQLite
//! database whose `CanvasPreview` table holds the canvas as a PNG. The
//! database is read into memory (read-only, under a bound) and queried with
//! a progress handler that stops at the deadline: a corrupt one is an error
//! from SQLite, never a crash.

use std::io::{BufRead, Read, Seek, SeekFrom};
use std::time::Instant;

use image::ImageFormat;

use super::{read_at, thumbnail, unreadable, Limits, NoPreview, Preview, MAX_THUMBNAIL_BYTES};

const MAGIC: &[u8] = b"CSFCHUNK";
/// The magic number, the file's length and the first chunk's offset.
const FILE_HEADER: u64 = 24;
const DATABASE_CHUNK: &[u8] = b"CHNKSQLi";
/// The largest database read.
const MAX_DATABASE_BYTES: u64 = 256 << 20;

const NAME: &str = "a Clip Studio Paint document";

pub fn is_clip(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

pub fn render<R: BufRead + Seek>(
    reader: &mut R,
    size: u32,
    limits: &Limits,
) -> Result<Preview, NoPreview> {
    let file_len = reader.seek(SeekFrom::End(0)).map_err(unreadable)?;
    let mut at = FILE_HEADER;
    while at + 16 <= file_len {
        limits.check_time()?;
        let header = read_at(reader, at, 16, NAME)?;
        let len = u64::from_be_bytes(header[8..16].try_into().unwrap());
        let data = at + 16;
        if data.saturating_add(len) > file_len {
            return Err(super::damaged(NAME, "a chunk runs past the file's end"));
        }
        if &header[..8] == DATABASE_CHUNK {
            let png = canvas_preview(reader, data, len, limits)?;
            return thumbnail(
                png,
                ImageFormat::Png,
                size,
                limits,
                NAME,
                "Clip Studio Paint",
            );
        }
        at = data + len;
    }
    Err(NoPreview(format!(
        "{NAME} without its database: no preview for it"
    )))
}

/// The `CanvasPreview` PNG of the database of `len` bytes at `at`.
fn canvas_preview<R: Read + Seek>(
    reader: &mut R,
    at: u64,
    len: u64,
    limits: &Limits,
) -> Result<Vec<u8>, NoPreview> {
    let database = |e: rusqlite::Error| super::damaged(NAME, format!("its database: {e}"));
    if len > MAX_DATABASE_BYTES.min(limits.memory / 2) {
        return Err(NoPreview(format!(
            "{NAME} whose database is {} MiB: over the budget",
            len >> 20
        )));
    }
    reader.seek(SeekFrom::Start(at)).map_err(unreadable)?;
    let mut connection = rusqlite::Connection::open_in_memory().map_err(database)?;
    connection
        .deserialize_read_exact("main", reader.take(len), len as usize, true)
        .map_err(database)?;
    let deadline = limits.deadline;
    // Stops a query that would run past the deadline (a corrupt or hostile
    // database).
    connection.progress_handler(1000, Some(move || Instant::now() > deadline))?;
    let (bytes, png): (i64, Option<Vec<u8>>) = connection
        .query_row(
            "SELECT length(ImageData), \
                    CASE WHEN length(ImageData) <= ?1 THEN ImageData END \
             FROM CanvasPreview LIMIT 1",
            [MAX_THUMBNAIL_BYTES as i64],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => NoPreview(format!(
                "{NAME} saved without a canvas preview: no preview for it"
            )),
            e => database(e),
        })?;
    png.ok_or_else(|| {
        NoPreview(format!(
            "{NAME} whose canvas preview is {} MiB: over the budget",
            bytes >> 20
        ))
    })
}

impl From<rusqlite::Error> for NoPreview {
    fn from(e: rusqlite::Error) -> Self {
        super::damaged(NAME, format!("its database: {e}"))
    }
}
