//! The remote token in the OS keychain (the Secret Service on Linux), keyed by
//! server URL. Only this module knows the keychain. When there is none, the
//! caller keeps the token in memory for this run and says so.

const SERVICE: &str = "Leasedesk";

fn entry(server_url: &str) -> Result<keyring::Entry, String> {
    keyring::Entry::new(SERVICE, server_url).map_err(describe)
}

pub fn store(server_url: &str, token: &str) -> Result<(), String> {
    entry(server_url)?.set_password(token).map_err(describe)
}

/// The stored token, `Ok(None)` if there is none.
pub fn read(server_url: &str) -> Result<Option<String>, String> {
    match entry(server_url)?.get_password() {
        Ok(token) => Ok(Some(token)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(describe(e)),
    }
}

pub fn forget(server_url: &str) -> Result<(), String> {
    match entry(server_url)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(describe(e)),
    }
}

fn describe(error: keyring::Error) -> String {
    match error {
        keyring::Error::NoDefaultStore
        | keyring::Error::NoStorageAccess(_)
        | keyring::Error::PlatformFailure(_) => {
            format!("no keychain is available ({error}); the token is kept for this run only")
        }
        other => format!("the keychain refused: {other}"),
    }
}
