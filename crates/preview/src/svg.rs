//! SVG, rendered by resvg (usvg parses, tiny-skia draws) into at most the
//! preview's own pixels. Untrusted text: nothing outside the file is ever
//! loaded (no resources folder, every `<image href>` refused, file or data
//! URL alike; resvg is built without text, so no font is read), the text is
//! at most [`MAX_SVG_BYTES`], and entity expansion is bounded before the
//! parser sees it. usvg itself caps its tree at a million nodes (so `<use>`
//! chains cannot multiply), and the XML parse is capped the same way.

use std::io::Read;

use resvg::usvg::roxmltree;
use resvg::{tiny_skia, usvg};

use super::{damaged, fitted, Limits, NoPreview};

const NAME: &str = "an SVG image";

/// Larger SVG text is refused unread.
pub const MAX_SVG_BYTES: u64 = 32 << 20;

/// What all entity references in the text may expand to, in total.
const MAX_ENTITY_EXPANSION: u64 = 1 << 20;

/// The XML parser's node cap, as usvg's own.
const MAX_NODES: u32 = 1_000_000;

/// The first bytes look like an SVG document: text that opens an `<svg`
/// element, or declares an SVG DOCTYPE, before the sniffed bytes end (after
/// a BOM, an XML declaration or comments).
pub fn seems_svg(head: &[u8]) -> bool {
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = text.iter().position(|b| !b.is_ascii_whitespace());
    match start {
        Some(at) if text[at] == b'<' => {
            find(text, b"<svg").is_some() || find(text, b"<!DOCTYPE svg").is_some()
        }
        _ => false,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Renders the SVG text `reader` yields (a file, or a decompressed `.svgz`).
pub fn render(
    reader: impl Read,
    size: u32,
    limits: &Limits,
) -> Result<image::RgbaImage, NoPreview> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_SVG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| damaged(NAME, e))?;
    if bytes.len() as u64 > MAX_SVG_BYTES {
        return Err(NoPreview(format!(
            "{NAME} of over {} MiB, more than an SVG preview reads",
            MAX_SVG_BYTES >> 20
        )));
    }
    // The tree and the drawing take several times the text.
    limits.claim(
        bytes.len() as u64 * 8,
        &format!("{NAME} of {} MiB", bytes.len() >> 20),
    )?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| NoPreview(format!("{NAME}, damaged: its text is not UTF-8")))?;
    check_entities(text)?;

    let xml = roxmltree::Document::parse_with_options(
        text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            nodes_limit: MAX_NODES,
            // External entities (SYSTEM "file:...") are discarded, never read.
            entity_resolver: None,
        },
    )
    .map_err(|e| damaged(NAME, e))?;
    let options = usvg::Options {
        resources_dir: None,
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: Box::new(|_, _, _| None),
            resolve_string: Box::new(|_, _| None),
        },
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_xmltree(&xml, &options)
        .map_err(|e| NoPreview(format!("{NAME} that cannot be drawn: {e}")))?;
    limits.check_time()?;

    let natural = tree.size();
    let (width, height) = fitted(
        natural.width().ceil().min(f32::from(u16::MAX)) as u32,
        natural.height().ceil().min(f32::from(u16::MAX)) as u32,
        size,
    );
    let mut pixmap = tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| NoPreview(format!("{NAME} of no size: nothing to show")))?;
    let transform = tiny_skia::Transform::from_scale(
        width as f32 / natural.width(),
        height as f32 / natural.height(),
    );
    resvg::render(&tree, transform, &mut pixmap.as_mut());
    // tiny-skia keeps premultiplied alpha; a PNG wants it straight.
    let pixels = pixmap
        .pixels()
        .iter()
        .flat_map(|p| {
            let c = p.demultiply();
            [c.red(), c.green(), c.blue(), c.alpha()]
        })
        .collect();
    image::RgbaImage::from_raw(width, height, pixels)
        .ok_or_else(|| NoPreview(format!("{NAME}: its drawing did not add up")))
}

/// Refuses a DTD whose entities could expand past [`MAX_ENTITY_EXPANSION`]
/// ("billion laughs", or one large entity named a million times). The XML
/// parser bounds nesting but not the total, so the total is reckoned here:
/// every `&name;` in the text counts its entity's value, and an entity whose
/// value names another is refused (editors write plain ones, e.g.
/// Illustrator's namespace entities).
fn check_entities(text: &str) -> Result<(), NoPreview> {
    let refuse = |why: &str| NoPreview(format!("{NAME} whose DTD {why}: refused"));
    let mut entities: Vec<(&str, u64)> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<!ENTITY") {
        rest = &rest[at + "<!ENTITY".len()..];
        let body = rest.trim_start();
        let body = body.strip_prefix('%').map(str::trim_start).unwrap_or(body);
        let name_len = body
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(body.len());
        let name = &body[..name_len];
        let after = body[name_len..].trim_start();
        let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            // An external entity (SYSTEM/PUBLIC): never loaded, so it
            // expands to nothing.
            continue;
        };
        let value = &after[1..];
        let Some(end) = value.find(quote) else {
            return Err(refuse("has an unterminated entity"));
        };
        let value = &value[..end];
        if value.contains('&') || value.contains('%') {
            return Err(refuse("defines an entity in terms of another"));
        }
        entities.push((name, value.len() as u64));
        if entities.len() > 10_000 {
            return Err(refuse("defines over 10000 entities"));
        }
    }
    let mut total = 0u64;
    for (name, value_len) in &entities {
        if *value_len == 0 {
            continue;
        }
        let reference = format!("&{name};");
        let uses = text.matches(reference.as_str()).count() as u64;
        total = total.saturating_add(uses.saturating_mul(*value_len));
        if total > MAX_ENTITY_EXPANSION {
            return Err(refuse("expands its entities to over 1 MiB of text"));
        }
    }
    Ok(())
}
