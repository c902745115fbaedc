//! Follows the workspace folder and sends which paths changed into a channel,
//! nothing more: it never calls the backend. The receiver looks at each path
//! on disk again (stat, then hash) instead of concluding from event order: a
//! save through a temporary file reaches the debouncer as a create of the
//! target, and Blender's save also renames the original to `.blend1` first,
//! so a batch may end with a rename whose source is the file being edited.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};
use tokio::sync::mpsc;

use crate::error::{Error, Result};

/// How long a burst of events on one path is gathered before it is reported:
/// short enough that "modified" shows within a second of a save.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Watches while it lives.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

/// Starts watching `root` and everything below it. Each message is the set of
/// paths that something happened to in one debounced batch.
pub fn watch(root: &Path) -> Result<(Watcher, mpsc::UnboundedReceiver<Vec<PathBuf>>)> {
    let (sender, receiver) = mpsc::unbounded_channel();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |batch: DebounceEventResult| {
        let Ok(events) = batch else {
            // Errors (a watch limit reached, a folder gone) leave the paths
            // unknown; the app's periodic look at its check-outs covers them.
            return;
        };
        let paths: BTreeSet<PathBuf> = events.into_iter().flat_map(|e| e.event.paths).collect();
        if !paths.is_empty() {
            let _ = sender.send(paths.into_iter().collect());
        }
    })
    .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", root.display())))?;
    debouncer
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", root.display())))?;
    Ok((
        Watcher {
            _debouncer: debouncer,
        },
        receiver,
    ))
}
