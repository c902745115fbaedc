//! Lists by page, folder and search, as one caller may see them: what they
//! may not read is neither listed nor counted (`docs/API.md`, "A million
//! files" and "Folder permissions"). A held list gives the paths held with
//! no file yet (Git LFS locks, `git`) too, in the page among the files.

use std::collections::HashMap;

use super::access::{key_within, Caller};
use super::artifacts::visible;
use super::git::hold_of;
use crate::error::Result;
use crate::model::*;
use crate::store::rows::Under;
use crate::store::{FolderRow, Hidden, ListQuery, PathRange, Tx};

/// How many key ranges of hidden folders a held list's query may test on
/// every row: measured, 100 such ranges doubled the time of a list of
/// 10,000, and 8 cost it a tenth.
const HIDDEN_TERMS: usize = 4;

/// A page of artifacts (all of them without a limit), by path, with the
/// sequence number of the last event the transaction sees: the page is as
/// of it.
///
/// For a caller some folders are hidden from, a page or a search walks the
/// parts of the path index they may see, one range after another
/// ([`visible_ranges`]), and never the search index: it would find the
/// hidden files that match too, and its time would grow with them. So the
/// time of a search tells nothing of what the caller may not see; a rare
/// text costs them a walk of what they may see.
pub fn artifact_page(
    tx: &dyn Tx,
    me: &Participant,
    query: &ArtifactQuery,
    now: Timestamp,
) -> Result<ArtifactPage> {
    let seq = tx.last_event_seq()?;
    let caller = Caller::of(tx, me)?;
    let hidden = caller.hidden();
    let folder = query.prefix.as_deref().unwrap_or("");
    // Where the pages walk (`None`: everywhere), and the hidden parts each
    // row is tested for on the way.
    let (ranges, tested): (Vec<Option<PathRange>>, Vec<Hidden>) = if hidden.is_empty() {
        (vec![None], Vec::new())
    } else if query.held {
        // Held files are found through the leases. The query skips hidden
        // folders up to a few conditions, each costing every row a look at
        // its key; whatever else is hidden is left out as rows come
        // (`Caller::see`, each folder decided once).
        (vec![None], fewest_terms(hidden))
    } else {
        let after = query.after.as_deref();
        let ranges = visible_ranges(tx, &hidden)?
            .into_iter()
            .filter(|range| may_hold(range, after, folder))
            .map(Some)
            .collect();
        (ranges, Vec::new())
    };
    let text_key = query.text.as_deref().map(collision_key);
    // One more than asked: whether there is a next page.
    let wanted = query.limit.map(|limit| limit as usize + 1);
    let mut artifacts: Vec<Artifact> = Vec::new();
    let mut after = query.after.clone();
    'ranges: for range in &ranges {
        loop {
            let limit = wanted.map(|wanted| (wanted - artifacts.len()) as u32);
            let list = ListQuery {
                after: after.as_deref(),
                folder,
                text_key: text_key.clone(),
                held_at: query.held.then_some(now),
                hidden: &tested,
                within: range.as_ref(),
                limit,
            };
            let found = tx.artifact_page(&list)?;
            let full = limit.is_some_and(|limit| found.len() == limit as usize);
            // Where to go on from: a path never told to the caller.
            if let Some(last) = found.last() {
                after = Some(last.path.to_string());
            }
            // Each with its `access`; those in the folders decided here left out.
            artifacts.extend(found.into_iter().filter_map(|a| caller.see(a).ok()));
            if wanted.is_some_and(|wanted| artifacts.len() >= wanted) {
                break 'ranges;
            }
            if !full {
                break;
            }
        }
    }
    let mut holds = match query.held {
        true => live_holds(tx, &caller, query, wanted, now)?,
        false => Vec::new(),
    };
    // One page of files and holds together, by path.
    let mut next = None;
    if let Some(limit) = query.limit {
        let limit = limit as usize;
        if artifacts.len() + holds.len() > limit {
            let (files, held) = first_by_path(&artifacts, &holds, limit);
            artifacts.truncate(files);
            holds.truncate(held);
            let last_file = artifacts.last().map(|a| a.path.as_str());
            let last_hold = holds.last().map(|h| h.path.as_str());
            next = last_file.max(last_hold).map(str::to_owned);
        }
    }
    let artifacts = artifacts.into_iter().map(|a| visible(a, now)).collect();
    Ok(ArtifactPage {
        artifacts,
        next,
        seq,
        holds,
    })
}

/// How many holds a held list reads at a time when not told a page.
const HOLDS_BATCH: u32 = 1000;

/// The live holds on paths with no file that a held list finds (under its
/// folder, after its path, containing its text) and the caller may see, by
/// path, at most `wanted` (all of them without): a hold in a folder hidden
/// from the caller is left out, never counted, and the walk goes on past
/// it. A lapsed hold is passed over, not deleted: no read writes.
fn live_holds(
    tx: &dyn Tx,
    caller: &Caller,
    query: &ArtifactQuery,
    wanted: Option<usize>,
    now: Timestamp,
) -> Result<Vec<PathHold>> {
    let folder = query.prefix.as_deref().unwrap_or("");
    if caller.sees_nothing_under(folder) {
        return Ok(Vec::new());
    }
    let text_key = query.text.as_deref().map(collision_key);
    let found_by = |path: &RepoPath| {
        caller.level(path) != Level::None
            && text_key
                .as_deref()
                .is_none_or(|key| path.collision_key().contains(key))
    };
    let batch = wanted.map_or(HOLDS_BATCH, |w| u32::try_from(w).unwrap_or(u32::MAX));
    let mut after = query.after.clone().unwrap_or_default();
    let mut holds = Vec::new();
    loop {
        let found = tx.held_paths_under(&Under::new(folder, &after, batch, now))?;
        let full = found.len() == batch as usize;
        if let Some(last) = found.last() {
            after = last.path.to_string();
        }
        holds.extend(found.iter().filter(|h| found_by(&h.path)).map(hold_of));
        if let Some(wanted) = wanted.filter(|w| holds.len() >= *w) {
            holds.truncate(wanted);
            break;
        }
        if !full {
            break;
        }
    }
    Ok(holds)
}

/// How many of `files` and of `holds` (each sorted by path) are the first
/// `n` of the two by path.
fn first_by_path(files: &[Artifact], holds: &[PathHold], n: usize) -> (usize, usize) {
    let (mut file, mut hold) = (0, 0);
    while file + hold < n {
        let file_first = match (files.get(file), holds.get(hold)) {
            (Some(a), Some(h)) => a.path.as_str() <= h.path.as_str(),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        match file_first {
            true => file += 1,
            false => hold += 1,
        }
    }
    (file, hold)
}

/// The hidden parts a query tests on every row: as many as fit in
/// [`HIDDEN_TERMS`] conditions, in order.
fn fewest_terms(hidden: Vec<Hidden>) -> Vec<Hidden> {
    let mut terms = HIDDEN_TERMS;
    hidden
        .into_iter()
        .filter(|part| {
            let cost = 1 + part.except.len();
            let fits = cost <= terms;
            if fits {
                terms -= cost;
            }
            fits
        })
        .collect()
}

/// The ranges of the path index a caller may see, in order: every path but
/// those under the folders of each hidden part (each path its key has:
/// `finance/` and `Finance/` for `FINANCE`, from the folders' rows), less
/// those under its exceptions' folders. As many ranges as the hidden
/// folders make, whatever lies in them.
fn visible_ranges(tx: &dyn Tx, hidden: &[Hidden]) -> Result<Vec<PathRange>> {
    let mut keys: Vec<String> = hidden
        .iter()
        .flat_map(|part| std::iter::once(&part.key).chain(&part.except))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    let mut paths: HashMap<String, Vec<String>> = HashMap::new();
    for (key, path) in tx.folder_paths(&keys)? {
        paths.entry(key).or_default().push(path);
    }
    let under = |keys: &mut dyn Iterator<Item = &String>| -> Vec<PathRange> {
        merged(
            keys.flat_map(|key| paths.get(key).into_iter().flatten())
                .map(|path| PathRange {
                    start: path.clone(),
                    end: folder_range_end(path),
                })
                .collect(),
        )
    };
    let mut out_of_sight = Vec::new();
    for part in hidden {
        let own = under(&mut std::iter::once(&part.key));
        let shown = under(&mut part.except.iter());
        out_of_sight.extend(less(own, &shown));
    }
    Ok(complement(&merged(out_of_sight)))
}

/// Whether `path` lies before the end of `range`.
fn before_end(path: &str, range: &PathRange) -> bool {
    range.end.as_deref().is_none_or(|end| path < end)
}

/// Whether `range` may hold a path after `after` in `folder`.
fn may_hold(range: &PathRange, after: Option<&str>, folder: &str) -> bool {
    let after_it = after.is_none_or(|after| before_end(after, range));
    let in_folder =
        before_end(folder, range) && folder_range_end(folder).is_none_or(|end| range.start < end);
    after_it && in_folder
}

/// `ranges` sorted, those that overlap or touch made one.
fn merged(mut ranges: Vec<PathRange>) -> Vec<PathRange> {
    ranges.sort_by(|a, b| a.start.cmp(&b.start));
    let mut merged: Vec<PathRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        if let Some(last) = merged.last_mut() {
            if last.end.as_ref().is_none_or(|end| *end >= range.start) {
                last.end = match (last.end.take(), range.end) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
                continue;
            }
        }
        merged.push(range);
    }
    merged
}

/// The parts of `ranges` outside every one of `taken` (both merged).
fn less(ranges: Vec<PathRange>, taken: &[PathRange]) -> Vec<PathRange> {
    let mut left = ranges;
    for cut in taken {
        left = left
            .into_iter()
            .flat_map(|range| {
                let overlaps = before_end(&cut.start, &range) && before_end(&range.start, cut);
                if !overlaps {
                    return vec![range];
                }
                let mut pieces = Vec::new();
                if range.start < cut.start {
                    pieces.push(PathRange {
                        start: range.start.clone(),
                        end: Some(cut.start.clone()),
                    });
                }
                if let Some(cut_end) = &cut.end {
                    if before_end(cut_end, &range) {
                        pieces.push(PathRange {
                            start: cut_end.clone(),
                            end: range.end.clone(),
                        });
                    }
                }
                pieces
            })
            .collect();
    }
    left
}

/// Every path outside `ranges` (merged), as ranges in order.
fn complement(ranges: &[PathRange]) -> Vec<PathRange> {
    let mut gaps = Vec::new();
    let mut from = String::new();
    for range in ranges {
        if from < range.start {
            gaps.push(PathRange {
                start: from,
                end: Some(range.start.clone()),
            });
        }
        match &range.end {
            Some(end) => from = end.clone(),
            None => return gaps,
        }
    }
    gaps.push(PathRange {
        start: from,
        end: None,
    });
    gaps
}

/// The folders directly under `folder`, each with the files under it that
/// the caller may read and how many of those are held at `now`; a folder
/// with none is not listed.
pub fn folders(tx: &dyn Tx, me: &Participant, folder: &str, now: Timestamp) -> Result<FolderList> {
    let caller = Caller::of(tx, me)?;
    // A folder the caller sees nothing of answers as one where nothing is,
    // without a look at what is there: neither the answer nor its time
    // tells what it holds.
    if caller.sees_nothing_under(folder) {
        return Ok(FolderList {
            folders: Vec::new(),
            files: 0,
        });
    }
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
fn hidden_files(tx: &dyn Tx, hidden: &[Hidden], row: &FolderRow) -> Result<u64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: &str, end: Option<&str>) -> PathRange {
        PathRange {
            start: start.into(),
            end: end.map(Into::into),
        }
    }

    fn folder(path: &str) -> PathRange {
        range(path, folder_range_end(path).as_deref())
    }

    #[test]
    fn ranges_merge_cut_and_complement() {
        let hidden = merged(vec![
            folder("finance/"),
            folder("Finance/"),
            folder("finance/deals/"),
            folder("jobs/j2/"),
            range("jobs/j2/", Some("jobs/j3")),
        ]);
        assert_eq!(
            hidden,
            [
                folder("Finance/"),
                folder("finance/"),
                range("jobs/j2/", Some("jobs/j3"))
            ]
        );
        let left = less(hidden, &[folder("finance/public/"), folder("zz/")]);
        assert_eq!(
            left,
            [
                folder("Finance/"),
                range("finance/", Some("finance/public/")),
                range("finance/public0", Some("finance0")),
                range("jobs/j2/", Some("jobs/j3")),
            ]
        );
        assert_eq!(
            complement(&left),
            [
                range("", Some("Finance/")),
                range("Finance0", Some("finance/")),
                range("finance/public/", Some("finance/public0")),
                range("finance0", Some("jobs/j2/")),
                range("jobs/j3", None),
            ]
        );
        // The whole store hidden but one folder; nothing hidden.
        let everything = less(vec![folder("")], &[folder("brand/")]);
        assert_eq!(complement(&merged(everything)), [folder("brand/")]);
        assert_eq!(complement(&[]), [range("", None)]);
    }

    #[test]
    fn a_range_is_walked_only_where_the_page_may_be() {
        let brand = folder("brand/");
        assert!(may_hold(&brand, None, ""));
        assert!(may_hold(&brand, Some("brand/a.psd"), ""));
        assert!(!may_hold(&brand, Some("brand0"), ""));
        assert!(may_hold(&brand, None, "brand/2026/"));
        assert!(!may_hold(&brand, None, "exports/"));
        assert!(!may_hold(&brand, None, "a/"));
        assert!(may_hold(&range("a", None), None, "zz/"));
    }
}
