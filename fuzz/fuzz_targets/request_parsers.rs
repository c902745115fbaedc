//! Every parser a request's untrusted bytes meet before any rule: the HTTP
//! guard's head and chunk-size checks, the JSON bodies, `RepoPath` and
//! `Participant`, a resumable upload's chunk list, review's bodies and
//! @mentions. None may panic, and what
//! each accepts must keep its promises. The first byte picks the parser.

#![no_main]

use leasedesk::chunking::Chunked;
use leasedesk::model::{
    check_comment_body, mentioned_names, CheckoutRequest, Digest, NewThread, Participant,
    RepoPath, MAX_COMMENT_CHARS, MAX_MENTIONS,
};
use leasedesk::server::{self, parsers, BreakBody, TtlBody};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    match pick % 8 {
        0 => {
            if let Ok(text) = std::str::from_utf8(bytes) {
                if let Ok(path) = text.parse::<RepoPath>() {
                    repo_path_keeps_its_rules(text, &path);
                }
            }
        }
        1 => {
            if let Ok(text) = std::str::from_utf8(bytes) {
                if let Ok(participant) = text.parse::<Participant>() {
                    assert_eq!(participant.as_str(), text);
                    assert!(!participant.name().is_empty());
                    assert_eq!(
                        participant.to_string().parse::<Participant>().ok(),
                        Some(participant)
                    );
                }
            }
        }
        2 => {
            if let Ok(request) = server::json_object::<CheckoutRequest>(bytes) {
                // What was accepted is an object (or nothing) and serializes back.
                let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
                assert!(matches!(first, None | Some(b'{')));
                let again = serde_json::to_vec(&request).unwrap();
                assert_eq!(
                    server::json_object::<CheckoutRequest>(&again).ok(),
                    Some(request)
                );
            }
        }
        3 => {
            let _ = server::json_object::<TtlBody>(bytes);
            let _ = server::json_object::<BreakBody>(bytes);
        }
        5 => {
            // A declared size (8 bytes), then the list.
            if bytes.len() >= 8 {
                let (size, list) = bytes.split_at(8);
                let size = u64::from_le_bytes(size.try_into().unwrap()) % (1 << 40);
                let digest: Digest = format!("blake3:{}", "0".repeat(64)).parse().unwrap();
                if let Ok(chunked) = Chunked::decode_list(digest, Some(size), list) {
                    // Accepted: within the rules, and read back as it was.
                    chunked.check().unwrap();
                    assert!(chunked.chunks.len() as u64 <= leasedesk::chunking::most_chunks(size));
                    assert_eq!(chunked.encode_list(), list);
                }
            }
        }
        6 => {
            if let Ok(text) = std::str::from_utf8(bytes) {
                review_text_keeps_its_rules(text);
            }
            if let Ok(thread) = server::json_object::<NewThread>(bytes) {
                // A pin either passes its check or is refused; never a panic.
                let _ = thread.pin.map(|pin| pin.check());
                let _ = thread.image.map(|image| image.check());
            }
        }
        4 => {
            if parsers::accepts_head(bytes) {
                // A head let through is one hyper can read: it ends with an
                // empty line and holds no NUL.
                assert!(bytes.ends_with(b"\n"));
                assert!(!bytes.contains(&0));
            }
        }
        _ => {
            if let Some(size) = parsers::chunk_size_of(bytes) {
                let text = String::from_utf8_lossy(bytes);
                let digits = text
                    .trim_end_matches(['\r', '\n'])
                    .split(';')
                    .next()
                    .unwrap_or("");
                assert_eq!(
                    u64::from_str_radix(digits.trim_end_matches([' ', '\t']), 16).ok(),
                    Some(size)
                );
            }
        }
    }
});

/// What every accepted path promises (docs/API.md).
fn repo_path_keeps_its_rules(text: &str, path: &RepoPath) {
    use unicode_normalization::UnicodeNormalization;
    let stored = path.as_str();
    assert_eq!(
        stored,
        text.nfc().collect::<String>(),
        "kept in NFC, else as given"
    );
    assert!(!stored.is_empty() && stored.len() <= RepoPath::MAX_BYTES);
    assert!(!stored.starts_with('/'));
    for segment in stored.split('/') {
        assert!(!segment.is_empty() && segment != "." && segment != "..");
        assert!(!segment.ends_with(['.', ' ']));
    }
    assert!(!stored.chars().any(|c| c.is_control()));
    assert!(!stored.contains(['\\', ':', '<', '>', '"', '|', '?', '*']));
    assert_eq!(path.placement_problem(), None);
    assert_eq!(stored.parse::<RepoPath>().ok().as_ref(), Some(path));
    assert_eq!(RepoPath::stored(stored).ok().as_ref(), Some(path));
    // One key per file name: the key of a key is itself.
    let key = path.collision_key();
    assert_eq!(leasedesk::model::collision_key(&key), key);
}

/// What a comment's checks promise: a body kept is trimmed and within its
/// length, and each @name is a name once, at most 50 of them.
fn review_text_keeps_its_rules(text: &str) {
    if let Ok(body) = check_comment_body(text) {
        assert_eq!(body, text.trim());
        let chars = body.chars().count();
        assert!((1..=MAX_COMMENT_CHARS).contains(&chars));
    }
    if let Ok(names) = mentioned_names(text) {
        assert!(names.len() <= MAX_MENTIONS);
        for (i, name) in names.iter().enumerate() {
            assert!(!name.is_empty() && name.len() <= 64, "{name:?}");
            assert!(text.contains(&format!("@{name}")));
            assert!(!names[..i].contains(name), "{name:?} twice");
        }
    }
}
