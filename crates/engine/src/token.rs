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

/// A new invite code: 160 random bits in Crockford's base32, in groups of
/// four for reading aloud (`7KQ2-…`). Shown once; the store keeps its hash.
pub fn generate_invite_code() -> Result<String> {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut bytes = [0u8; 20];
    getrandom::fill(&mut bytes).map_err(|e| Error::Internal(format!("no randomness: {e}")))?;
    let mut bits = 0u32;
    let mut held = 0;
    let mut code = String::with_capacity(39);
    for byte in bytes {
        bits = (bits << 8) | u32::from(byte);
        held += 8;
        while held >= 5 {
            held -= 5;
            if code.len() % 5 == 4 {
                code.push('-');
            }
            code.push(ALPHABET[((bits >> held) & 31) as usize] as char);
        }
    }
    Ok(code)
}

/// The hash an invite is kept under, of its code as typed: case, spaces and
/// dashes aside, and the letters people mistake for digits read as those.
pub fn invite_hash(code: &str) -> String {
    let normal: String = code
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            other => other,
        })
        .collect();
    blake3::hash(normal.as_bytes()).to_hex().to_string()
}
