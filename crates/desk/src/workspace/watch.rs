//! Follows the workspace folder and sends which paths changed into a channel,
//! nothing more: it never calls the backend. The receiver looks at each path
//! on disk again (stat, then hash) instead of concluding from event order: a
//! save through a temporary file reaches the watcher as a create of the
//! target, and Blender's save also renames the original to `.blend1` first,
//! so a batch may end with a rename whose source is the file being edited.
//!
//! The debouncer only gathers paths (notify-debouncer-mini). A debouncer that
//! merges events into their net effect drops a path created and removed
//! within one window, and a Blender save followed by a delete is exactly
//! that for the edited file: it was created by the rename, then removed, yet
//! it existed before and the app must hear it is gone.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};
use tokio::sync::mpsc;

use crate::error::{Error, Result};

/// How long a burst of events on one path is gathered before it is reported:
/// short enough that "modified" shows within a second of a save.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Watches while it lives.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher>,
}

/// Starts watching `root` and everything below it. Each message is the set of
/// paths that something happened to in one debounced batch.
pub fn watch(root: &Path) -> Result<(Watcher, mpsc::UnboundedReceiver<Vec<PathBuf>>)> {
    let (sender, receiver) = mpsc::unbounded_channel();
    let mut debouncer = new_debouncer(DEBOUNCE, move |batch: DebounceEventResult| {
        let Ok(events) = batch else {
            // Errors (a watch limit reached, a folder gone) leave the paths
            // unknown; the app looks at its check-outs again now and then.
            return;
        };
        let paths: BTreeSet<PathBuf> = events.into_iter().map(|e| e.path).collect();
        if !paths.is_empty() {
            let _ = sender.send(paths.into_iter().collect());
        }
    })
    .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", root.display())))?;
    debouncer
        .watcher()
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| Error::Internal(format!("cannot watch {}: {e}", root.display())))?;
    Ok((
        Watcher {
            _debouncer: debouncer,
        },
        receiver,
    ))
}

/// The watcher's backstop: remembers each file's stat (there or not, size,
/// mtime) between looks, to tell which changed when events may have been
/// lost (an overflowed event queue, a folder that could not be watched).
#[derive(Default)]
pub struct Restat {
    seen: Option<HashMap<PathBuf, Option<(u64, std::time::SystemTime)>>>,
}

impl Restat {
    /// Those of `paths` whose stat differs from the last look, or that were
    /// not looked at then; nothing at the first look, which only takes note.
    pub fn changed(&mut self, paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
        let mut now = HashMap::new();
        let mut changed = Vec::new();
        for path in paths {
            let stat = std::fs::metadata(&path)
                .ok()
                .and_then(|m| Some((m.len(), m.modified().ok()?)));
            if self
                .seen
                .as_ref()
                .is_some_and(|seen| seen.get(&path) != Some(&stat))
            {
                changed.push(path.clone());
            }
            now.insert(path, stat);
        }
        self.seen = Some(now);
        changed
    }
}
