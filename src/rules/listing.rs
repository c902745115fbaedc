//! Lists by page, folder and search, as one caller may see them: what they
//! may not read is neither listed nor counted (`shared/API.md`, "A million
//! files" and "Folder permissions").

use std::collections::HashMap;

use super::access::{key_within, Caller};
use super::artifacts::visible;
use crate::error::Result;
use crate::model::*;
use crate::store::{FolderRow, Hidden, ListQuery, Tx};

/// How many key ranges of hidden folders a page's query may test on every
/// row: measured, 100 such ranges doubled the time of a list of 10,000,
/// and 8 cost it a tenth.
const HIDDEN_TERMS: usize = 4;

/// A page of artifacts (all of them without a limit), by path, with the
/// sequence number of the last event the transaction sees: the page is as
/// of it.
pub fn artifact_page(
    tx: &Tx,
    me: &Participant,
    query: &ArtifactQuery,
    now: Timestamp,
) -> Result<ArtifactPage> {
    let seq = tx.last_event_seq()?;
    let caller = Caller::of(tx, me)?;
    // The query skips hidden folders (a freelancer's one folder of a
    // thousand is not walked past), up to a few conditions: each costs every
    // row a look at its key. Whatever else is hidden is left out as rows
    // come (`Caller::see`, each folder decided once).
    let mut terms = HIDDEN_TERMS;
    let ranges: Vec<Hidden> = caller
        .hidden()
        .into_iter()
        .filter(|part| {
            let cost = 1 + part.except.len();
            let fits = cost <= terms;
            if fits {
                terms -= cost;
            }
            fits
        })
        .collect();
    // One more than asked: whether there is a next page.
    let wanted = query.limit.map(|limit| limit as usize + 1);
    let mut artifacts: Vec<Artifact> = Vec::new();
    let mut after = query.after.clone();
    loop {
        let limit = wanted.map(|wanted| (wanted - artifacts.len()) as u32);
        let list = ListQuery {
            after: after.as_deref(),
            folder: query.prefix.as_deref().unwrap_or(""),
            text_key: query.text.as_deref().map(collision_key),
            held_at: query.held.then_some(now),
            hidden: &ranges,
            limit,
        };
        let found = tx.artifact_page(&list)?;
        let full = limit.is_some_and(|limit| found.len() == limit as usize);
        // Where to go on from: a path never told to the caller.
        after = found.last().map(|a| a.path.to_string());
        // Each with its `access`; those in the folders decided here left out.
        artifacts.extend(found.into_iter().filter_map(|a| caller.see(a).ok()));
        let short = wanted.is_some_and(|wanted| artifacts.len() < wanted);
        if !(full && short) {
            break;
        }
    }
    let mut next = None;
    if let Some(limit) = query.limit {
        if artifacts.len() > limit as usize {
            artifacts.truncate(limit as usize);
            next = artifacts.last().map(|a| a.path.to_string());
        }
    }
    let artifacts = artifacts.into_iter().map(|a| visible(a, now)).collect();
    Ok(ArtifactPage {
        artifacts,
        next,
        seq,
    })
}

/// The folders directly under `folder`, each with the files under it that
/// the caller may read and how many of those are held at `now`; a folder
/// with none is not listed.
pub fn folders(tx: &Tx, me: &Participant, folder: &str, now: Timestamp) -> Result<FolderList> {
    let caller = Caller::of(tx, me)?;
    let hidden = caller.hidden();
    let (rows, direct) = tx.subfolders(folder)?;
    let held: HashMap<String, u64> = tx
        .held_by_folder(folder, now, &hidden)?
        .into_iter()
        .collect();
    let mut folders = Vec::with_capacity(rows.len());
    for row in rows {
        let files = row.files.saturating_sub(hidden_files(tx, &hidden, &row)?);
        if files > 0 {
            let held = held.get(&row.path).copied().unwrap_or(0);
            folders.push(FolderCount {
                path: row.path,
                files,
                held,
            });
        }
    }
    let files = match caller.level_in(folder) {
        Level::None => 0,
        _ => direct,
    };
    Ok(FolderList { folders, files })
}

/// How many of the files under the folder `row` lie in the parts `hidden`
/// (which never overlap: a file's deepest rule decides).
fn hidden_files(tx: &Tx, hidden: &[Hidden], row: &FolderRow) -> Result<u64> {
    let beneath = |key: &str, of: &str| key != of && key_within(key, of);
    let mut total = 0u64;
    for part in hidden {
        let files_under = |keys: &mut dyn Iterator<Item = &String>| -> Result<u64> {
            let mut sum = 0;
            for key in keys {
                sum += tx.files_under_key(key, &row.path)?;
            }
            Ok(sum)
        };
        total += if key_within(&row.key, &part.key) {
            // The folder lies in the hidden part: all of it is hidden but
            // what lies under the part's exceptions.
            if part.except.iter().any(|e| key_within(&row.key, e)) {
                0
            } else {
                let shown = files_under(&mut part.except.iter().filter(|e| beneath(e, &row.key)))?;
                row.files.saturating_sub(shown)
            }
        } else if beneath(&part.key, &row.key) {
            // The hidden part lies in the folder.
            let part_files = tx.files_under_key(&part.key, &row.path)?;
            part_files.saturating_sub(files_under(&mut part.except.iter())?)
        } else {
            0
        };
    }
    Ok(total)
}
