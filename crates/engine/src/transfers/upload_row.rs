//! What an upload's row says to its participant, and the size of its chunk
//! list: read off the store's row, which knows no chunk.

use super::*;

/// What an upload's row says to its participant and of its chunk list.
pub(super) trait UploadRowReading {
    fn state(&self) -> UploadState;
    fn list_bytes(&self) -> u64;
    fn list_len(&self) -> u64;
    fn is_unlisted(&self) -> bool;
}

impl UploadRowReading for UploadRow {
    fn state(&self) -> UploadState {
        UploadState {
            id: self.id,
            size: self.size,
            digest: self.digest.clone(),
            send: self.send.clone(),
            length: self.length,
            offset: self.reached,
            expires_at: self.expires_at,
            known: None,
        }
    }

    fn list_bytes(&self) -> u64 {
        self.list_len() * LISTED_BYTES as u64
    }

    /// How many chunks the list has: the end of the last run at least, and
    /// exactly what the list part holds (its size is checked as it is read).
    fn list_len(&self) -> u64 {
        self.send.last().map_or(0, |run| run.1)
    }

    /// Whether it was begun without a chunk list: its bytes are the whole
    /// file. (A listed upload's runs end at its list's end, and only an
    /// empty file's list is empty: its upload has no bytes either way.)
    fn is_unlisted(&self) -> bool {
        self.send.is_empty() && self.size > 0
    }
}
