//! Joining a studio from an invite: the link `leasedesk://join?server=URL&code=CODE`
//! made and read back, a pasted code alone, and the name a new device gets
//! by default (the computer's). Host-free: the app and the CLI share it.

use crate::error::{Error, Result};

/// What an invite names: the server (a link says; a bare code does not) and the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invitation {
    pub server: Option<String>,
    pub code: String,
}

/// The link an admin sends: opens the app on the join dialog.
pub fn join_link(server: &str, code: &str) -> String {
    format!(
        "leasedesk://join?server={}&code={}",
        query_encoded(server.trim()),
        query_encoded(code.trim())
    )
}

/// Reads an invite as pasted or opened: a `leasedesk://join` link, or a
/// code alone (`7KQ2-…`). Anything else is refused with what was expected.
pub fn read_invitation(text: &str) -> Result<Invitation> {
    let text = text.trim();
    if let Some(query) = text
        .strip_prefix("leasedesk://join?")
        .or_else(|| text.strip_prefix("leasedesk://join/?"))
    {
        let mut server = None;
        let mut code = None;
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = query_decoded(value)?;
            match key {
                "server" => server = Some(value),
                "code" => code = Some(value),
                _ => {}
            }
        }
        let server = server
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| Error::Invalid("this link names no server: ask for a new one".into()))?;
        crate::remote::check_servers(&server)?;
        let code = code.filter(|c| looks_like_a_code(c)).ok_or_else(|| {
            Error::Invalid("this link carries no invite code: ask for a new one".into())
        })?;
        return Ok(Invitation {
            server: Some(server),
            code,
        });
    }
    if looks_like_a_code(text) {
        return Ok(Invitation {
            server: None,
            code: text.to_owned(),
        });
    }
    Err(Error::Invalid(
        "paste the invite link (leasedesk://join?…) or its code (such as 7KQ2-…)".into(),
    ))
}

/// A code as made (groups of base32 letters and digits with dashes), or as
/// typed with spaces: 16 to 64 of them.
fn looks_like_a_code(text: &str) -> bool {
    let letters = text.chars().filter(|c| c.is_ascii_alphanumeric()).count();
    (16..=64).contains(&letters)
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ' ')
}

fn query_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn query_decoded(text: &str) -> Result<String> {
    let refused = || Error::Invalid("the link is damaged: ask for a new one".into());
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.bytes();
    while let Some(b) = rest.next() {
        match b {
            b'%' => {
                let hex = [
                    rest.next().ok_or_else(refused)?,
                    rest.next().ok_or_else(refused)?,
                ];
                let hex = std::str::from_utf8(&hex).map_err(|_| refused())?;
                bytes.push(u8::from_str_radix(hex, 16).map_err(|_| refused())?);
            }
            b'+' => bytes.push(b' '),
            b => bytes.push(b),
        }
    }
    String::from_utf8(bytes).map_err(|_| refused())
}

/// The name a new device gets unless its owner types another: the
/// computer's (`COMPUTERNAME` on Windows, the host name elsewhere).
pub fn computer_name() -> String {
    let from_env = ["COMPUTERNAME", "HOSTNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok());
    let from_system = || {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
    };
    from_env
        .or_else(from_system)
        .map(|name| {
            name.trim()
                .chars()
                .filter(|c| !c.is_control())
                .take(64)
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "this computer".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_reads_back_as_it_was_made() {
        let link = join_link("https://files.studio.lan:7443", "7KQ2-ABCD-EFGH-JKMN");
        assert_eq!(
            link,
            "leasedesk://join?server=https%3A%2F%2Ffiles.studio.lan%3A7443&code=7KQ2-ABCD-EFGH-JKMN"
        );
        assert_eq!(
            read_invitation(&format!("  {link}\n")).unwrap(),
            Invitation {
                server: Some("https://files.studio.lan:7443".into()),
                code: "7KQ2-ABCD-EFGH-JKMN".into()
            }
        );
    }

    #[test]
    fn a_code_alone_is_read_and_anything_else_is_refused() {
        assert_eq!(read_invitation("7kq2 abcd efgh jkmn").unwrap().server, None);
        for bad in [
            "",
            "hello",
            "leasedesk://join?code=7KQ2-ABCD-EFGH-JKMN",
            "leasedesk://join?server=ftp%3A%2F%2Fx&code=7KQ2-ABCD-EFGH-JKMN",
            "leasedesk://join?server=https%3A%2F%2Fx&code=%ZZ",
            "leasedesk://join?server=https%3A%2F%2Fx",
            "https://evil.example/?code=7KQ2-ABCD-EFGH-JKMN",
        ] {
            assert!(read_invitation(bad).is_err(), "{bad:?}");
        }
    }
}
