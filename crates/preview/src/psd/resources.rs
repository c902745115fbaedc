//! The image resources a preview needs: where the thumbnail is (1036, or
//! 1033's BGR), whether the composite is real (1057, "maximize
//! compatibility") and the ICC profile (1039). Every other resource is
//! skipped unread; a profile larger than moxcms reads is never loaded.

use std::io::{Read, Seek, SeekFrom};

use super::cursor::{be16, be32, Cursor, Short};
use super::damaged;
use super::thumbnail::Thumbnail;
use crate::{unreadable, Limits, NoPreview};

/// The largest colour profile read (moxcms's own bound).
const MAX_PROFILE: u64 = 10 << 20;

/// What the image resources say.
pub(super) struct Resources {
    pub thumbnail: Option<Thumbnail>,
    /// Resource 1057 said the composite is real (true when absent).
    pub has_real_composite: bool,
    /// The embedded ICC profile (resource 1039).
    pub icc: Option<Vec<u8>>,
}

/// Reads the image resources section at `at` (its length first), and
/// leaves `at` at its end.
pub(super) fn read(
    at: &mut Cursor,
    file: &mut (impl Read + Seek),
    kind: &str,
    limits: &Limits,
) -> Result<Resources, NoPreview> {
    let resources_len = at
        .section_len(file, false)
        .map_err(|e| e.in_section(kind, "its image resources"))?;
    let resources_end = at.pos() + resources_len;
    let mut found = Resources {
        thumbnail: None,
        has_real_composite: true,
        icc: None,
    };
    while resources_end.saturating_sub(at.pos()) >= 12 {
        let in_resources = |e: Short| e.in_section(kind, "its image resources");
        let sig = at.take(file, 6).map_err(in_resources)?;
        if &sig[0..4] != b"8BIM" {
            // Some writers pad the section; nothing after this is a resource.
            break;
        }
        let id = be16(&sig[4..]);
        let name_len = at.take(file, 1).map_err(in_resources)?[0] as u64;
        // The name (a Pascal string) is padded to an even length, its length byte included.
        at.seek_to(at.pos() + (name_len + 1).next_multiple_of(2) - 1);
        let data_len = be32(at.take(file, 4).map_err(in_resources)?) as u64;
        let data_start = at.pos();
        if data_start + data_len > resources_end {
            return Err(damaged(
                kind,
                format_args!("image resource {id} runs past the end of its section"),
            ));
        }
        match id {
            1033 | 1036 if data_len > 28 => {
                found.thumbnail = Some(Thumbnail {
                    offset: data_start + 28,
                    len: data_len - 28,
                    bgr: id == 1033,
                });
            }
            1057 if data_len >= 5 => {
                found.has_real_composite = at.take(file, 5).map_err(in_resources)?[4] != 0;
            }
            1039 if data_len <= MAX_PROFILE => {
                limits.claim(data_len, "a Photoshop document's colour profile")?;
                let mut bytes = vec![0; data_len as usize];
                file.seek(SeekFrom::Start(data_start))
                    .and_then(|_| file.read_exact(&mut bytes))
                    .map_err(unreadable)?;
                found.icc = Some(bytes);
            }
            _ => {}
        }
        at.seek_to(data_start + data_len.next_multiple_of(2));
    }
    at.seek_to(resources_end);
    Ok(found)
}
