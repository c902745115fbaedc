//! Windows paths past `MAX_PATH` (260 characters). std's file calls add the
//! `\\?\` prefix themselves when a path needs it; a Windows call we make
//! ourselves gets it from [`extended`]. The rewriting is plain string work, so
//! the Linux tests run it too.

use std::path::{Path, PathBuf};

/// The longest path the plain Windows calls take (`MAX_PATH`, 260, its NUL
/// included), less the 12 characters a new folder's path leaves for an 8.3 name.
const PLAIN_LIMIT: usize = 248;

/// `path` in the `\\?\` form that Windows' wide calls take at any length, if
/// it needs it: an absolute path with a drive (`C:\…`) or a share
/// (`\\server\share\…`) that is too long. The prefix turns off Windows' own
/// path parsing, so `/` becomes `\` and `.` and `..` must be gone already
/// (a path with them is left as it is). Anything else comes back as `None`.
pub fn verbatim(path: &str) -> Option<String> {
    if path.len() < PLAIN_LIMIT || path.starts_with(r"\\?\") || path.starts_with(r"\\.\") {
        return None;
    }
    let path = path.replace('/', "\\");
    if path
        .split('\\')
        .skip(1)
        .any(|part| part == "." || part == "..")
    {
        return None;
    }
    let bytes = path.as_bytes();
    if bytes.len() > 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'\\' {
        return Some(format!(r"\\?\{path}"));
    }
    path.strip_prefix(r"\\")
        .map(|share| format!(r"\\?\UNC\{share}"))
}

/// [`verbatim`] on a path, for a Windows call of our own.
pub fn extended(path: &Path) -> PathBuf {
    match path.to_str().and_then(verbatim) {
        Some(long) => PathBuf::from(long),
        None => path.to_owned(),
    }
}

/// A path as Windows' wide-character calls take it: NUL-terminated UTF-16,
/// [`extended`] when it is long.
#[cfg(windows)]
pub fn wide(path: &Path) -> Vec<u16> {
    use std::os::windows::ffi::OsStrExt;
    extended(path)
        .as_os_str()
        .encode_wide()
        .chain(Some(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::verbatim;

    #[test]
    fn only_long_absolute_paths_get_the_prefix() {
        let deep = format!(r"C:\Users\ana\Leasedesk\{}\hero.psd", "folder\\".repeat(40));
        assert_eq!(verbatim(&deep), Some(format!(r"\\?\{deep}")));
        assert_eq!(verbatim(r"C:\Users\ana\hero.psd"), None, "short paths stay");
        let share = format!(r"\\studio\projects\{}", "a".repeat(300));
        assert_eq!(
            verbatim(&share),
            Some(format!(r"\\?\UNC\studio\projects\{}", "a".repeat(300)))
        );
        let slashes = format!("C:/work/{}", "b".repeat(300));
        assert_eq!(
            verbatim(&slashes),
            Some(format!(r"\\?\C:\work\{}", "b".repeat(300))),
            "the prefix turns off the rewriting of / to \\, so it is done here"
        );
    }

    #[test]
    fn paths_windows_must_still_parse_are_left_alone() {
        let long = "x".repeat(300);
        for path in [
            format!(r"\\?\C:\{long}"),
            format!(r"C:\{long}\..\y"),
            format!(r"C:\{long}\.\y"),
            format!(r"relative\{long}"),
            format!(r"\rooted-without-drive\{long}"),
        ] {
            assert_eq!(verbatim(&path), None, "{path}");
        }
    }
}
