//! Folder permissions, decided in the operation's own transaction: the
//! caller's level for a path comes from the rules the transaction reads, so
//! a rule change takes effect for the next request on every server, and no
//! request is answered under a mix of old and new rules.
//!
//! The rules and groups are one document in the store, with a stamp that
//! changes on every edit. A transaction reads the stamp (one small row) and
//! reads the document only when this process has not compiled that stamp
//! yet; each caller's folders are resolved once per stamp. A stamp is a new
//! UUID per edit, so a compiled document is never confused with another
//! store's.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::model::*;
use crate::store::{Hidden, Tx};

/// A document made ready for lookups.
struct Compiled {
    /// Each folder's rules, by folder key.
    by_folder: HashMap<String, Vec<Rule>>,
    /// The groups each participant is in.
    groups_of: HashMap<Participant, Vec<GroupName>>,
    /// Each caller's folders, resolved once (see [`Compiled::resolve`]).
    callers: Mutex<HashMap<Participant, Arc<Folders>>>,
}

/// One caller's level in each folder that has a rule for them, by folder
/// key, with the folder as its rule wrote it (for messages).
type Folders = HashMap<String, (Level, String)>;

impl Compiled {
    fn new(document: Permissions) -> Self {
        let mut by_folder: HashMap<String, Vec<Rule>> = HashMap::new();
        for rule in document.rules {
            by_folder
                .entry(folder_key(&rule.folder))
                .or_default()
                .push(rule);
        }
        let mut groups_of: HashMap<Participant, Vec<GroupName>> = HashMap::new();
        for group in document.groups {
            for member in group.members {
                groups_of
                    .entry(member)
                    .or_default()
                    .push(group.name.clone());
            }
        }
        Self {
            by_folder,
            groups_of,
            callers: Mutex::default(),
        }
    }

    fn folders_of(&self, participant: &Participant) -> Arc<Folders> {
        let mut callers = self.callers.lock().expect("permission callers");
        callers
            .entry(participant.clone())
            .or_insert_with(|| Arc::new(self.resolve(participant)))
            .clone()
    }

    /// On one folder, a rule naming the participant beats one naming a
    /// group, which beats `everyone`; among groups the highest level wins.
    fn resolve(&self, participant: &Participant) -> Folders {
        let groups = self
            .groups_of
            .get(participant)
            .map_or(&[][..], Vec::as_slice);
        let mut folders = Folders::new();
        for (key, rules) in &self.by_folder {
            let mut direct = None;
            let mut by_group: Option<Level> = None;
            let mut everyone = None;
            for rule in rules {
                match &rule.who {
                    Who::Participant(p) if p == participant => direct = Some(rule.level),
                    Who::Group(g) if groups.contains(g) => {
                        by_group = by_group.max(Some(rule.level));
                    }
                    Who::Everyone => everyone = Some(rule.level),
                    _ => {}
                }
            }
            if let Some(level) = direct.or(by_group).or(everyone) {
                folders.insert(key.clone(), (level, rules[0].folder.clone()));
            }
        }
        folders
    }
}

/// The compiled documents this process has read lately, by stamp.
type Cache = Mutex<Vec<(String, Arc<Compiled>)>>;

fn compiled_cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// How many stamps the cache keeps (several stores in one process: tests).
const CACHED_STAMPS: usize = 16;

fn compiled(tx: &dyn Tx, stamp: &str) -> Result<Arc<Compiled>> {
    let cache = compiled_cache();
    if let Some((_, found)) = cache
        .lock()
        .expect("permissions cache")
        .iter()
        .find(|(s, _)| s == stamp)
    {
        return Ok(found.clone());
    }
    // Read with its own stamp: on PostgreSQL each statement sees the latest
    // commit, so the document may be newer than the stamp read before it.
    let Some((stamp, document)) = tx.permissions()? else {
        return Ok(Arc::new(Compiled::new(Permissions::default())));
    };
    let compiled = Arc::new(Compiled::new(document));
    let mut cache = cache.lock().expect("permissions cache");
    if cache.len() >= CACHED_STAMPS {
        cache.remove(0);
    }
    cache.push((stamp, compiled.clone()));
    Ok(compiled)
}

/// What one caller may do, in one transaction.
pub struct Caller {
    /// `None`: no rule names them; they may write everywhere.
    folders: Option<Arc<Folders>>,
    /// The decisions made so far in this transaction, by the folder part of
    /// the path (all before its last `/`): a listing of 10,000 files in 100
    /// folders computes 100 collision keys, not 10,000.
    decided: RefCell<HashMap<String, DecidingRule>>,
}

/// The deciding rule for a path: the level, and the folder its rule names.
#[derive(Clone)]
pub struct DecidingRule {
    pub level: Level,
    pub folder: Option<String>,
}

impl Caller {
    /// The caller's rules as of this transaction.
    pub fn of(tx: &dyn Tx, participant: &Participant) -> Result<Caller> {
        let Some(stamp) = tx.permissions_stamp()? else {
            return Ok(Caller::with(None));
        };
        if super::is_admin(tx, participant)? {
            return Ok(Caller::with(None));
        }
        let folders = compiled(tx, &stamp)?.folders_of(participant);
        Ok(Caller::with((!folders.is_empty()).then_some(folders)))
    }

    fn with(folders: Option<Arc<Folders>>) -> Caller {
        Caller {
            folders,
            decided: RefCell::default(),
        }
    }

    /// Whether no rule limits the caller anywhere.
    pub fn unlimited(&self) -> bool {
        self.folders.is_none()
    }

    /// The deepest folder with a rule for the caller decides; with none, `write`.
    pub fn decide(&self, path: &RepoPath) -> DecidingRule {
        self.on_decision(path, DecidingRule::clone)
    }

    pub fn level(&self, path: &RepoPath) -> Level {
        self.on_decision(path, |decision| decision.level)
    }

    /// `what` of the decision for `path`.
    fn on_decision<T>(&self, path: &RepoPath, what: impl FnOnce(&DecidingRule) -> T) -> T {
        let Some(folders) = &self.folders else {
            return what(&WRITE);
        };
        // The folder keys of a path depend on its folder part alone (all
        // before its last `/`): case folding and upper-casing map each
        // character by itself, NFC never composes a character with the `/`
        // before it, and nothing folds or normalizes into a `/`. So the
        // files of one folder share their decision, made once.
        let folder = path
            .as_str()
            .rsplit_once('/')
            .map_or("", |(folder, _)| folder);
        if let Some(decision) = self.decided.borrow().get(folder) {
            return what(decision);
        }
        let decision = deepest(folders, path);
        let answer = what(&decision);
        self.decided
            .borrow_mut()
            .insert(folder.to_owned(), decision);
        answer
    }

    /// The level for the files directly in `folder` (`brand/`, or `""`).
    pub fn level_in(&self, folder: &str) -> Level {
        let Some(folders) = &self.folders else {
            return Level::Write;
        };
        let key = folder_key(folder);
        let above = key.match_indices('/').map(|(at, _)| &key[..at]);
        let deepest_first = std::iter::once(key.as_str())
            .filter(|key| !key.is_empty())
            .chain(above.rev())
            .chain([""]);
        for key in deepest_first {
            if let Some((level, _)) = folders.get(key) {
                return *level;
            }
        }
        Level::Write
    }

    /// Whether the caller may see nothing under `folder` (`brand/`, or
    /// `""`): its files' rule for them is `none`, and no folder beneath it
    /// has a rule of another level for them.
    pub fn sees_nothing_under(&self, folder: &str) -> bool {
        let Some(folders) = &self.folders else {
            return false;
        };
        if self.level_in(folder) != Level::None {
            return false;
        }
        let key = folder_key(folder);
        !folders
            .iter()
            .any(|(k, (level, _))| *level != Level::None && *k != key && key_within(k, &key))
    }

    /// What the caller may not see, as parts of the store for a query:
    /// each folder whose rule for them is `none`, less the nearest folders
    /// beneath it with rules of their own, which decide for their files.
    pub fn hidden(&self) -> Vec<Hidden> {
        let Some(folders) = &self.folders else {
            return Vec::new();
        };
        let mut hidden: Vec<Hidden> = folders
            .iter()
            .filter(|(_, (level, _))| *level == Level::None)
            .map(|(key, _)| Hidden {
                key: key.clone(),
                except: nearest_beneath(folders.keys(), key),
            })
            .collect();
        hidden.sort_by(|a, b| a.key.cmp(&b.key));
        hidden
    }

    /// Whether the artifact exists for the caller.
    pub fn sees(&self, artifact: &Artifact) -> bool {
        self.level(&artifact.path) != Level::None
    }

    /// The artifact as the caller sees it (with its `access`), or
    /// `not_found` as for an id that never was.
    pub fn see(&self, mut artifact: Artifact) -> Result<Artifact> {
        artifact.access = match self.level(&artifact.path) {
            Level::None => return Err(Error::NotFound(format!("no artifact {}", artifact.id))),
            Level::Read => Access::Read,
            Level::Write => Access::Write,
        };
        Ok(artifact)
    }

    /// Refuses a change to `path` unless the caller may write there: a file
    /// they cannot see is `not_found` (`unknown`: the refusal for an id that
    /// never was), one they may only read is `forbidden`, naming the folder.
    pub fn require_write(&self, path: &RepoPath, unknown: impl FnOnce() -> Error) -> Result<()> {
        let decision = self.decide(path);
        match decision.level {
            Level::Write => Ok(()),
            Level::None => Err(unknown()),
            Level::Read => Err(read_only(&decision)),
        }
    }

    /// Refuses a new file at `path` unless the caller may write there. The
    /// answer is the same whether or not a file the caller cannot see is
    /// there (`Finance/Q3.xlsx` beside a hidden `finance/q3.xlsx`): the
    /// folder decides, never the file.
    ///
    /// A folder the caller cannot see at the path or under it refuses it
    /// too: a file named `finance` would be that folder on a computer.
    pub fn require_write_new(&self, path: &RepoPath) -> Result<()> {
        let decision = self.decide(path);
        if decision.level != Level::Write {
            return Err(read_only(&decision));
        }
        if let Some(folders) = &self.folders {
            let key = path.collision_key();
            let beneath = format!("{key}/");
            let hidden = folders.iter().find(|(folder, (level, _))| {
                *level == Level::None && (**folder == key || folder.starts_with(&beneath))
            });
            if let Some((_, (level, folder))) = hidden {
                return Err(read_only(&DecidingRule {
                    level: *level,
                    folder: Some(folder.clone()),
                }));
            }
        }
        Ok(())
    }
}

/// The decision where no rule limits the caller.
const WRITE: DecidingRule = DecidingRule {
    level: Level::Write,
    folder: None,
};

/// The deepest folder above `path` with a rule in `folders` decides; with
/// none, `write`.
fn deepest(folders: &Folders, path: &RepoPath) -> DecidingRule {
    let deepest_first = path.folder_keys().into_iter().rev().chain([String::new()]);
    for key in deepest_first {
        if let Some((level, folder)) = folders.get(&key) {
            return DecidingRule {
                level: *level,
                folder: Some(folder.clone()),
            };
        }
    }
    WRITE
}

/// Whether the folder key `key` is `folder`'s or lies beneath it.
pub fn key_within(key: &str, folder: &str) -> bool {
    folder.is_empty()
        || key == folder
        || key
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The keys among `keys` strictly beneath `folder` with none of the others
/// between them and `folder`.
fn nearest_beneath<'a>(
    keys: impl Iterator<Item = &'a String> + Clone,
    folder: &str,
) -> Vec<String> {
    let beneath = |key: &str, of: &str| key != of && key_within(key, of);
    let mut nearest: Vec<String> = keys
        .clone()
        .filter(|key| beneath(key, folder))
        .filter(|key| {
            !keys
                .clone()
                .any(|between| beneath(between, folder) && beneath(key, between))
        })
        .cloned()
        .collect();
    nearest.sort();
    nearest
}

fn read_only(decision: &DecidingRule) -> Error {
    let folder = decision.folder.as_deref().unwrap_or_default();
    let folder = if folder.is_empty() {
        "this store"
    } else {
        folder
    };
    match decision.level {
        Level::Read => Error::Forbidden(format!("you can view {folder}, not change it")),
        _ => Error::Forbidden(format!("you may not add or change files in {folder}")),
    }
}

/// Checks a document before it is stored: folders (checked when parsed),
/// levels, and that each group a rule names exists.
pub fn check_permissions(tx: &dyn Tx, document: &Permissions) -> Result<()> {
    if document.rules.len() > MAX_RULES {
        return Err(Error::Invalid(format!(
            "{} rules is over the limit of {MAX_RULES}",
            document.rules.len()
        )));
    }
    for rule in &document.rules {
        match &rule.who {
            Who::Group(name) if !document.groups.iter().any(|g| &g.name == name) => {
                return Err(Error::Invalid(format!(
                    "the rule on {:?} names group {name}, which does not exist: add it first",
                    rule.folder
                )));
            }
            Who::Participant(p) if tx.account(p)?.is_none() => {
                return Err(Error::Invalid(format!(
                    "the rule on {:?} names {p}, who is not a participant",
                    rule.folder
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What `participant` would find under `permissions` (the rules being
/// edited, say), for each of `paths`: the same decision an operation makes.
/// An admin is never limited.
pub fn preview_levels(
    permissions: &Permissions,
    participant: &Participant,
    admin: bool,
    paths: &[RepoPath],
) -> Vec<Level> {
    let folders = Arc::new(Compiled::new(permissions.clone()).resolve(participant));
    let caller = Caller::with((!admin && !folders.is_empty()).then_some(folders));
    paths.iter().map(|path| caller.level(path)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folders whose keys fold, compose or change case, and names that
    /// start with a combining mark or fold to several characters.
    const FOLDERS: &[&str] = &[
        "",
        "brand",
        "Brand",
        "BRAND/Approved",
        "brand/approved",
        "Cafe\u{301}",
        "Café",
        "straße",
        "STRASSE",
        "ı/İ",
        "i/I",
        "ΣΊΣΥΦΟΣ",
        "σίσυφος",
        "a\u{338}",
        "=\u{338}",
    ];
    const NAMES: &[&str] = &["x.psd", "\u{301}e.psd", "\u{338}.psd", "ß", "ς", "Ǆ.psd"];

    fn path(folder: &str, name: &str) -> RepoPath {
        let path = match folder {
            "" => name.to_owned(),
            folder => format!("{folder}/{name}"),
        };
        RepoPath::stored(&path).unwrap()
    }

    /// What `Caller::decide` keeps per folder is what every path of that
    /// folder would have been decided alone.
    #[test]
    fn the_files_of_a_folder_share_their_folder_keys_and_their_decision() {
        let mut folders = Folders::new();
        let levels = [Level::None, Level::Read, Level::Write];
        for (n, folder) in FOLDERS.iter().enumerate().step_by(2) {
            let rule = format!("{folder}/").trim_start_matches('/').to_owned();
            folders.insert(folder_key(&rule), (levels[n % 3], rule));
        }
        let caller = Caller::with(Some(Arc::new(folders.clone())));
        for name in NAMES {
            for folder in FOLDERS {
                let path = path(folder, name);
                assert_eq!(
                    path.folder_keys(),
                    self::path(folder, "x.psd").folder_keys(),
                    "{path}"
                );
                let (remembered, alone) = (caller.decide(&path), deepest(&folders, &path));
                assert_eq!(remembered.level, alone.level, "{path}");
                assert_eq!(remembered.folder, alone.folder, "{path}");
                assert_eq!(caller.level(&path), alone.level, "{path}");
            }
        }
    }
}
