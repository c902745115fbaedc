//! The layers as a tree of groups: a divider opens a group, its top record
//! closes it. Structure only: it never reads the file or draws.

use super::records::{Kind, Layer};
use crate::NoPreview;

/// Groups nested deeper than this are refused (each holds a canvas).
const MAX_DEPTH: usize = 32;

/// A group or a layer, in drawing order (bottom first).
pub(super) enum Node {
    Layer(usize),
    Group { top: usize, members: Vec<Node> },
}

/// The layers as a tree: a divider opens a group, its top record closes it.
pub(super) fn tree(layers: &[Layer]) -> Result<Vec<Node>, NoPreview> {
    let mut open: Vec<Vec<Node>> = vec![Vec::new()];
    for (i, layer) in layers.iter().enumerate() {
        match layer.kind {
            Kind::GroupBottom => {
                if open.len() > MAX_DEPTH {
                    return Err(NoPreview(format!(
                        "a Photoshop document whose groups nest more than {MAX_DEPTH} deep"
                    )));
                }
                open.push(Vec::new());
            }
            Kind::GroupTop if open.len() > 1 => {
                let members = open.pop().expect("an open group");
                open.last_mut()
                    .expect("the document")
                    .push(Node::Group { top: i, members });
            }
            // A group's top without its divider: nothing to group.
            Kind::GroupTop => {}
            Kind::Pixels => open.last_mut().expect("the document").push(Node::Layer(i)),
        }
    }
    // Dividers never closed: their members belong to the document.
    while open.len() > 1 {
        let members = open.pop().expect("an open group");
        open.last_mut().expect("the document").extend(members);
    }
    Ok(open.pop().expect("the document"))
}

pub(super) fn max_depth(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|node| match node {
            Node::Layer(_) => 0,
            Node::Group { members, .. } => 1 + max_depth(members),
        })
        .max()
        .unwrap_or(0)
}
