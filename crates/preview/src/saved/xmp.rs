//! The thumbnail in an XMP packet: `xmpGImg:image`, a base64 JPEG, written
//! as an element (`<xmpGImg:image>…</xmpGImg:image>`) or an attribute
//! (`xmpGImg:image="…"`), its lines broken by `&#xA;` entities.

use std::io::{Read, Seek, SeekFrom};

use super::{find, unreadable, Limits, NoPreview};

/// The element's opening tag and the attribute, as they start: a search
/// for the bare name would also find closing tags.
const ELEMENT: &[u8] = b"<xmpGImg:image>";
const ATTRIBUTE: &[u8] = b"xmpGImg:image=";

/// Base64 text read for one thumbnail at most.
const MAX_BASE64_BYTES: u64 = 16 << 20;

/// The JPEG of the first (or, with `last`, the last) XMP thumbnail in the
/// file from `from` on; `None` if there is none. `name` names the document.
pub fn thumbnail<R: Read + Seek>(
    reader: &mut R,
    from: u64,
    last: bool,
    limits: &Limits,
    name: &str,
) -> Result<Option<Vec<u8>>, NoPreview> {
    let element = find(reader, ELEMENT, from, last, limits)?.map(|at| (at, ELEMENT));
    let attribute = find(reader, ATTRIBUTE, from, last, limits)?.map(|at| (at, ATTRIBUTE));
    let found = match (element, attribute) {
        (Some(e), Some(a)) if last => Some(e.max(a)),
        (Some(e), Some(a)) => Some(e.min(a)),
        (one, other) => one.or(other),
    };
    let Some((at, tag)) = found else {
        return Ok(None);
    };
    // The value starts at the tag's last character: `>` or `=`.
    reader
        .seek(SeekFrom::Start(at + tag.len() as u64 - 1))
        .map_err(unreadable)?;
    let mut text = Vec::new();
    reader
        .take(MAX_BASE64_BYTES)
        .read_to_end(&mut text)
        .map_err(unreadable)?;
    let base64 = value_of(&text).ok_or_else(|| {
        NoPreview(format!(
            "{name} whose saved thumbnail (XMP) is cut off: no preview for it"
        ))
    })?;
    let jpeg = decode_base64(base64).ok_or_else(|| {
        NoPreview(format!(
            "{name} whose saved thumbnail (XMP) is not base64: no preview for it"
        ))
    })?;
    if !jpeg.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Err(NoPreview(format!(
            "{name} whose saved thumbnail (XMP) is not a JPEG: no preview for it"
        )));
    }
    Ok(Some(jpeg))
}

/// The text after the tag's name: an element's content up to `<`, or an
/// attribute's value between its quotes.
fn value_of(after_tag: &[u8]) -> Option<&[u8]> {
    match after_tag.first()? {
        b'>' => {
            let text = &after_tag[1..];
            Some(&text[..text.iter().position(|&b| b == b'<')?])
        }
        b'=' => {
            let quote = *after_tag.get(1)?;
            if quote != b'"' && quote != b'\'' {
                return None;
            }
            let text = &after_tag[2..];
            Some(&text[..text.iter().position(|&b| b == quote)?])
        }
        _ => None,
    }
}

/// Base64, skipping white space and XML's `&#xA;`/`&#10;`-style character
/// references (line breaks written as entities); `None` for anything else.
pub fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut bits, mut count, mut i) = (0u32, 0u32, 0);
    while i < text.len() {
        let byte = text[i];
        i += 1;
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b' ' | b'\t' | b'\r' | b'\n' => continue,
            b'&' => {
                let end = text[i..].iter().take(8).position(|&b| b == b';')?;
                if text.get(i) != Some(&b'#') {
                    return None;
                }
                i += end + 1;
                continue;
            }
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{decode_base64, value_of};

    #[test]
    fn base64_skips_entity_line_breaks() {
        assert_eq!(
            decode_base64(b"/9j/&#xA;4AAQ").unwrap(),
            b"\xff\xd8\xff\xe0\x00\x10"
        );
        assert_eq!(decode_base64(b"aGk=").unwrap(), b"hi");
        assert!(decode_base64(b"a*b").is_none());
        assert!(decode_base64(b"ab&amp;cd").is_none());
    }

    #[test]
    fn element_and_attribute_values() {
        assert_eq!(value_of(b">abc</x>").unwrap(), b"abc");
        assert_eq!(value_of(b"=\"abc\" y").unwrap(), b"abc");
        assert!(value_of(b">abc").is_none());
    }
}
