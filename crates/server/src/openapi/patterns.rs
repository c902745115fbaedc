//! The model's rules for strings (paths, names, notes, a version's
//! description) written as JSON Schema patterns, for the document to state
//! what the server refuses. Each restates a parser of `crate::model` or
//! `rules`, which stay the only ones that decide; it never checks anything
//! itself. `tests/openapi.rs` keeps them honest: Schemathesis sends strings
//! that match each pattern (the server must take them) and strings that
//! do not (it must refuse them).
//!
//! Written in the part of ECMA-262's syntax that Rust's `regex`, Python's
//! `re` and JavaScript (with the `u` flag) read alike: `\uXXXX` escapes and
//! classes spelled out, no `\s`, `\d` or `\p{..}`, whose meanings differ
//! between them. A length in bytes of UTF-8 is said as the same number of
//! characters, the most a schema can say.

use crate::model::{
    MAX_COMMENT_CHARS, MAX_NOTE_BYTES, MAX_REQUEST_MESSAGE_CHARS, MAX_REVIEW_MESSAGE_CHARS,
};

/// What `char::is_control` is: C0, DEL and C1.
const CONTROL: &str = r"\u0000-\u001f\u007f-\u009f";

/// The controls but a line break (`\n`), which notes and messages may have.
const CONTROL_BUT_LINE_BREAK: &str = r"\u0000-\u0009\u000b-\u001f\u007f-\u009f";

/// What `str::trim` drops: `char::is_whitespace`, Unicode's White_Space.
pub(super) const WHITESPACE: &str =
    r"\u0009-\u000d\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

/// Unicode's format characters (general category Cf), which a new path may
/// not have; those past the Basic Multilingual Plane, which `\uXXXX` cannot
/// name, as the characters themselves.
const FORMAT: &str = concat!(
    r"\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f",
    r"\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb",
    "\u{110bd}\u{110cd}\u{13430}-\u{1343f}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}",
    "\u{e0001}\u{e0020}-\u{e007f}",
);

/// The characters Windows refuses in a name, `/` (between segments) and
/// `\`: `RepoPath`'s `FORBIDDEN_CHARACTERS`.
const FORBIDDEN: &str = r#"/\\:<>"|?*"#;

/// A participant's or a group's name: 1 to 64 letters, digits or `. _ - @`.
const NAME: &str = "[A-Za-z0-9._@-]{1,64}";

/// One segment of a path as stored (`RepoPath::stored`): not empty, `.` or
/// `..`, no control character, `/` or `\`.
fn stored_segment() -> String {
    format!(r"(?!\.\.?(?:/|$))[^{CONTROL}/\\]+")
}

/// A path as stored, which a lookup takes: relative, `/` between segments
/// (`RepoPath::stored`).
pub(super) fn stored_path() -> String {
    let segment = stored_segment();
    format!("^{segment}(?:/{segment})*$")
}

/// A folder as rules and lists name it (`check_folder`): `""`, or a path as
/// stored followed by `/`.
pub(super) fn folder() -> String {
    let segment = stored_segment();
    format!("^(?:{segment}(?:/{segment})*/)?$")
}

/// A path a file may be given now (`RepoPath`'s `FromStr`): a path as
/// stored that every designer's computer can hold (`placement_problem`).
/// No character Windows refuses or format character; no segment that ends
/// in a dot or a space (so none is `.` or `..`), names a Windows device
/// (`CON`, `nul.txt`, `COM1`, ..., in any case and with any extension), or
/// has the shape of a short name (`PROGRA~1`, `CHARAC~1.PSD`).
pub(super) fn new_path() -> String {
    let any = format!("[^{CONTROL}{FORMAT}{FORBIDDEN}]");
    let last = format!("[^{CONTROL}{FORMAT}{FORBIDDEN}. ]");
    let dot_or_end = r"(?:\.|/|$)";
    // The part before the first dot, trailing spaces dropped; the digits
    // ¹ ² ³ count as digits on Windows.
    let device = r"(?:[Cc][Oo][Nn](?:[Ii][Nn]\$|[Oo][Uu][Tt]\$)?|[Pp][Rr][Nn]|[Aa][Uu][Xx]|[Nn][Uu][Ll]|[Cc][Oo][Mm][0-9\u00b9\u00b2\u00b3]|[Ll][Pp][Tt][0-9\u00b9\u00b2\u00b3])";
    // ASCII but `.` and `/`: a short name's base (at most 8, a stem, `~` and
    // digits) and extension (at most 3).
    let ascii = r"[\u0000-\u002d\u0030-\u007f]";
    let short =
        format!(r"(?={ascii}{{1,8}}{dot_or_end}){ascii}+~[0-9]+(?:\.{ascii}{{0,3}})?(?:/|$)");
    let segment = format!(r"(?!{device} *{dot_or_end})(?!{short}){any}*{last}");
    format!("^{segment}(?:/{segment})*$")
}

/// Text that `str::trim` reduces to 1 to `most` characters, none of them in
/// `refused` (a class's ranges), the first and the last not white space.
fn trimmed(refused: &str, most: usize) -> String {
    let edge = format!("[{WHITESPACE}]*");
    let core_end = format!("[^{CONTROL}{WHITESPACE}]");
    let inner = format!("[^{refused}]");
    format!(
        "^{edge}{core_end}(?:{inner}{{0,{}}}{core_end})?{edge}$",
        most - 2
    )
}

/// A device's name (`device_name`): 1 to 64 characters once trimmed, no control.
pub(super) fn device_name() -> String {
    trimmed(CONTROL, 64)
}

/// A check-out's note (`checked_note`): blank (none), or at most 1024 bytes
/// once trimmed, no control but line breaks.
pub(super) fn note() -> String {
    format!(
        "(?:^[{WHITESPACE}]*$)|{}",
        trimmed(CONTROL_BUT_LINE_BREAK, MAX_NOTE_BYTES)
    )
}

/// A request's or a reply's message (`check_request_message`): blank
/// (none), or at most 1000 characters once trimmed, no control but line
/// breaks.
pub(super) fn request_message() -> String {
    format!(
        "(?:^[{WHITESPACE}]*$)|{}",
        trimmed(CONTROL_BUT_LINE_BREAK, MAX_REQUEST_MESSAGE_CHARS)
    )
}

/// A reply's message, which may not be blank.
pub(super) fn reply_message() -> String {
    trimmed(CONTROL_BUT_LINE_BREAK, MAX_REQUEST_MESSAGE_CHARS)
}

/// A comment's body (`check_comment_body`): 1 to 10,000 characters once
/// trimmed, no control but line breaks.
pub(super) fn comment() -> String {
    trimmed(CONTROL_BUT_LINE_BREAK, MAX_COMMENT_CHARS)
}

/// A decision's message: blank (none), or 1 to 1,000 characters once
/// trimmed, no control but line breaks.
pub(super) fn review_message() -> String {
    format!(
        "(?:^[{WHITESPACE}]*$)|{}",
        trimmed(CONTROL_BUT_LINE_BREAK, MAX_REVIEW_MESSAGE_CHARS)
    )
}

/// Text with something in it once trimmed (a break's reason).
pub(super) fn not_blank() -> String {
    format!("[^{WHITESPACE}]")
}

/// Text without control characters (a search).
pub(super) fn no_control() -> String {
    format!("^[^{CONTROL}]*$")
}

/// `user:NAME` or `agent:NAME` (`Participant`).
pub(super) fn participant() -> String {
    format!("^(?:user|agent):{NAME}$")
}

/// A group's name (`GroupName`).
pub(super) fn group() -> String {
    format!("^{NAME}$")
}

/// Whom a rule names (`Who`): `everyone`, `group:NAME`, `user:NAME` or `agent:NAME`.
pub(super) fn who() -> String {
    format!("^(?:everyone|(?:group|user|agent):{NAME})$")
}

/// Whom an invite is for, once trimmed: a bare name, or `user:NAME` or
/// `agent:NAME` (`rules::studio`'s `invited`).
pub(super) fn invited() -> String {
    format!("^[{WHITESPACE}]*(?:(?:user|agent):)?{NAME}[{WHITESPACE}]*$")
}

/// `Leasedesk-Message`: percent-encoded UTF-8 (`request`'s
/// `message_header`). Printable ASCII but `%`, or `%` and two hex digits,
/// whose bytes together are UTF-8; at most 4096 bytes once decoded, which
/// `max_length` says of the encoded text (never longer than its bytes).
pub(super) fn percent_encoded_utf8() -> String {
    let hex = "[0-9A-Fa-f]";
    let tail = format!("%[89ABab]{hex}");
    let sequences = [
        // Printable ASCII but `%`, or any ASCII byte encoded.
        r"[\u0020-\u0024\u0026-\u007e]".to_owned(),
        format!("%[0-7]{hex}"),
        // Two bytes: C2 to DF.
        format!("%(?:[Cc][2-9A-Fa-f]|[Dd]{hex}){tail}"),
        // Three: E0 A0-BF, E1-EC and EE-EF, ED 80-9F (no surrogates).
        format!("%[Ee]0%[ABab]{hex}{tail}"),
        format!("%[Ee][1-9A-Ca-cEeFf]{tail}{tail}"),
        format!("%[Ee][Dd]%[89]{hex}{tail}"),
        // Four: F0 90-BF, F1-F3, F4 80-8F (nothing past U+10FFFF).
        format!("%[Ff]0%[9ABab]{hex}{tail}{tail}"),
        format!("%[Ff][1-3]{tail}{tail}{tail}"),
        format!("%[Ff]4%8{hex}{tail}{tail}"),
    ];
    format!("^(?:{})*$", sequences.join("|"))
}
