//! Bearer tokens: 32 random bytes, shown once when made and kept only as a
//! hash (BLAKE3). A token is `ld_<id>_<secret>`; the id finds its row, and the hash of
//! the whole token is compared in constant time.

use crate::error::{Error, Result};

/// A new token and the id it is filed under.
pub struct NewToken {
    pub id: String,
    pub token: String,
}

pub fn generate() -> Result<NewToken> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Internal(format!("no randomness: {e}")))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let (id, secret) = hex.split_at(16);
    Ok(NewToken {
        id: id.to_owned(),
        token: format!("ld_{id}_{secret}"),
    })
}

/// The id part of a well-formed token.
pub fn id_of(token: &str) -> Option<&str> {
    let rest = token.strip_prefix("ld_")?;
    let (id, secret) = rest.split_once('_')?;
    let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(id, 16) && hex(secret, 48)).then_some(id)
}

pub fn hash(token: &str) -> String {
    blake3::hash(token.as_bytes()).to_hex().to_string()
}

/// Whether `token` hashes to `stored`, compared in constant time.
pub fn matches(token: &str, stored: &str) -> bool {
    blake3::Hash::from_hex(stored).is_ok_and(|stored| stored == blake3::hash(token.as_bytes()))
}
