//! Photoshop's action descriptors, as far as fill layers need them: a tree
//! of keyed values (numbers, strings, enumerations, lists, objects) read
//! from a tagged block already in memory. A value we have no use for and
//! cannot skip safely (references, object arrays) fails the whole
//! descriptor, which leaves its layer approximate; nesting is bounded.

/// Objects nested deeper than this are refused.
const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Object(Descriptor),
    List(Vec<Value>),
    Number(f64),
    /// A number with its unit ("#Ang", "#Prc", "#Pxl"...).
    Unit([u8; 4], f64),
    Text(String),
    /// An enumeration's type and value.
    Enum(Vec<u8>, Vec<u8>),
    Bool(bool),
    /// Something kept but never looked at (raw data, aliases, classes).
    Other,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Descriptor {
    pub(super) class: Vec<u8>,
    pub(super) items: Vec<(Vec<u8>, Value)>,
}

impl Descriptor {
    pub(super) fn get(&self, key: &[u8]) -> Option<&Value> {
        self.items.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(super) fn number(&self, key: &[u8]) -> Option<f64> {
        match self.get(key)? {
            Value::Number(n) | Value::Unit(_, n) => Some(*n),
            _ => None,
        }
    }

    pub(super) fn object(&self, key: &[u8]) -> Option<&Descriptor> {
        match self.get(key)? {
            Value::Object(d) => Some(d),
            _ => None,
        }
    }

    pub(super) fn list(&self, key: &[u8]) -> Option<&[Value]> {
        match self.get(key)? {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub(super) fn enumeration(&self, key: &[u8]) -> Option<&[u8]> {
        match self.get(key)? {
            Value::Enum(_, v) => Some(v),
            _ => None,
        }
    }

    pub(super) fn flag(&self, key: &[u8]) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

/// The descriptor of a block that starts with its version (16), as `SoCo`,
/// `GdFl` and `PtFl` do.
pub(super) fn versioned(data: &[u8]) -> Option<Descriptor> {
    let mut r = Reader { data, at: 0 };
    if r.u32()? != 16 {
        return None;
    }
    r.descriptor(0)
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let bytes = self.data.get(self.at..end)?;
        self.at = end;
        Some(bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f64(&mut self) -> Option<f64> {
        let b = self.take(8)?;
        Some(f64::from_be_bytes(b.try_into().ok()?))
    }

    fn key4(&mut self) -> Option<[u8; 4]> {
        self.take(4)?.try_into().ok()
    }

    /// A key or class: its length, or 0 and four bytes.
    fn id(&mut self) -> Option<Vec<u8>> {
        let len = self.u32()? as usize;
        Some(self.take(if len == 0 { 4 } else { len })?.to_vec())
    }

    fn unicode(&mut self) -> Option<String> {
        let units = self.u32()? as usize;
        let bytes = self.take(units.checked_mul(2)?)?;
        let utf16: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        Some(String::from_utf16_lossy(&utf16))
    }

    fn descriptor(&mut self, depth: usize) -> Option<Descriptor> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.unicode()?;
        let class = self.id()?;
        let count = self.u32()?;
        let mut items = Vec::new();
        for _ in 0..count {
            let key = self.id()?;
            let value = self.value(depth)?;
            items.push((key, value));
        }
        Some(Descriptor { class, items })
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        let kind = self.key4()?;
        Some(match &kind {
            b"Objc" | b"GlbO" => Value::Object(self.descriptor(depth + 1)?),
            b"VlLs" => {
                if depth > MAX_DEPTH {
                    return None;
                }
                let count = self.u32()?;
                let mut items = Vec::new();
                for _ in 0..count {
                    items.push(self.value(depth + 1)?);
                }
                Value::List(items)
            }
            b"doub" => Value::Number(self.f64()?),
            b"UntF" => {
                let unit = self.key4()?;
                Value::Unit(unit, self.f64()?)
            }
            b"UnFl" => {
                self.key4()?;
                let count = self.u32()? as usize;
                self.take(count.checked_mul(8)?)?;
                Value::Other
            }
            b"TEXT" => Value::Text(self.unicode()?),
            b"enum" => Value::Enum(self.id()?, self.id()?),
            b"long" => Value::Number(self.u32()? as i32 as f64),
            b"comp" => {
                let b = self.take(8)?;
                Value::Number(i64::from_be_bytes(b.try_into().ok()?) as f64)
            }
            b"bool" => Value::Bool(self.take(1)?[0] != 0),
            b"type" | b"GlbC" => {
                self.unicode()?;
                self.id()?;
                Value::Other
            }
            b"alis" | b"tdta" | b"Pth " => {
                let len = self.u32()? as usize;
                self.take(len)?;
                Value::Other
            }
            // References, object arrays and anything unknown: not skipped.
            _ => return None,
        })
    }
}

#[cfg(test)]
pub(in crate::psd) mod tests {
    use super::*;

    /// A descriptor's bytes, for tests: `items` already encoded.
    pub(in crate::psd) fn encode(class: &[u8], items: &[(&[u8], Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(0u32.to_be_bytes()); // empty name
        id(&mut out, class);
        out.extend((items.len() as u32).to_be_bytes());
        for (key, value) in items {
            id(&mut out, key);
            out.extend(value);
        }
        out
    }

    fn id(out: &mut Vec<u8>, id: &[u8]) {
        if id.len() == 4 {
            out.extend(0u32.to_be_bytes());
        } else {
            out.extend((id.len() as u32).to_be_bytes());
        }
        out.extend(id);
    }

    pub(in crate::psd) fn double(v: f64) -> Vec<u8> {
        [b"doub".to_vec(), v.to_be_bytes().to_vec()].concat()
    }

    pub(in crate::psd) fn object(class: &[u8], items: &[(&[u8], Vec<u8>)]) -> Vec<u8> {
        [b"Objc".to_vec(), encode(class, items)].concat()
    }

    #[test]
    fn reads_a_solid_colour_and_refuses_what_it_cannot_skip() {
        let colour = object(
            b"RGBC",
            &[
                (b"Rd  ", double(255.0)),
                (b"Grn ", double(0.0)),
                (b"Bl  ", double(10.0)),
            ],
        );
        let block = [
            16u32.to_be_bytes().to_vec(),
            encode(b"null", &[(b"Clr ", colour)]),
        ]
        .concat();
        let d = versioned(&block).unwrap();
        let c = d.object(b"Clr ").unwrap();
        assert_eq!(c.class, b"RGBC");
        assert_eq!(c.number(b"Bl  "), Some(10.0));
        // Cut anywhere, it fails rather than panics.
        for len in 0..block.len() {
            assert!(versioned(&block[..len]).is_none());
        }
        let reference = [
            16u32.to_be_bytes().to_vec(),
            encode(b"null", &[(b"Clr ", b"obj \0\0\0\x01".to_vec())]),
        ]
        .concat();
        assert!(versioned(&reference).is_none());
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut value = double(1.0);
        for _ in 0..100 {
            value = object(b"null", &[(b"x   ", value)]);
        }
        let block = [
            16u32.to_be_bytes().to_vec(),
            encode(b"null", &[(b"x   ", value)]),
        ]
        .concat();
        assert!(versioned(&block).is_none());
    }
}
