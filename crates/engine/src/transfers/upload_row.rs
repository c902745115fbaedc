//! What an upload's row says to its participant, and the size of its chunk
//! list: read off the store's row, which knows no chunk.

use super::*;

/// What an upload's row says to its participant and of its chunk list.
pub(super) trait UploadRowReading {
    fn state(&self) -> UploadState;
    fn list_bytes(&self) -> u64;
    fn list_len(&self) -> u64;
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
}
