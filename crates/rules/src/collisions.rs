//! The path rules that keep every artifact placeable on a computer's folder
//! beside the others: shared by an import, a rename and a Git lock of a
//! path with no file yet.

use super::access::Caller;
use crate::error::{Error, Result};
use crate::model::*;
use crate::store::Tx;

/// Refuses a path that a computer's folder could not hold beside the store's
/// other artifacts (`other_than`, being renamed, does not count): one that
/// differs from another only in case or Unicode normalization, one that lies
/// under another artifact's path, and one that is a folder of artifacts.
///
/// A file the caller cannot see is never named: the refusal is then the
/// same whatever is there. Most such files are refused before this, by the
/// folder's rule (`Caller::require_write_new`).
pub(super) fn refuse_collisions(
    tx: &dyn Tx,
    caller: &Caller,
    path: &RepoPath,
    other_than: Option<ArtifactId>,
) -> Result<()> {
    let others = |found: Vec<(ArtifactId, RepoPath)>| {
        found
            .into_iter()
            .find(|(id, _)| Some(*id) != other_than)
            .map(|(_, taken)| taken)
    };
    let unseen = |taken: &RepoPath| caller.level(taken) == Level::None;
    let refused_unnamed = || {
        Err(Error::Exists(format!(
            "{path} cannot be added there: choose another name or place"
        )))
    };
    if let Some(taken) = others(tx.artifacts_with_key(&path.collision_key())?) {
        if unseen(&taken) {
            return refused_unnamed();
        }
        return Err(Error::Exists(format!(
            "{path} would be the same file as {taken} on Windows and macOS, which do not tell \
             case or accents written two ways apart: choose another name"
        )));
    }
    for folder in path.folder_keys() {
        if let Some(taken) = others(tx.artifacts_with_key(&folder)?) {
            if unseen(&taken) {
                return refused_unnamed();
            }
            return Err(Error::Exists(format!(
                "{path} would lie under {taken}, which is a file, not a folder: choose another place"
            )));
        }
    }
    if let Some(taken) = others(tx.artifacts_under_key(&path.collision_key(), 2)?) {
        if unseen(&taken) {
            return refused_unnamed();
        }
        return Err(Error::Exists(format!(
            "{path} is a folder of other files ({taken}), so no file can have that name"
        )));
    }
    Ok(())
}
