//! The tray: its menu and tooltip as plain functions of your check-outs and
//! what waits for you (requests to answer, unread inbox items), so they are
//! tested without a tray host, and the Tauri menu built from them.
//! The tray's handle holds an `Rc`: it is touched on the main thread only, and
//! a background task asks for a refresh through `run_on_main_thread`.

use std::collections::HashSet;

use chrono::{Local, TimeDelta};
use leasedesk_model::model::{Checkout, CheckoutId, Timestamp};
use tauri::menu::{IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu};
use tauri::{AppHandle, Runtime};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// One of your check-outs: its file, time left, and its three actions;
    /// for one that cannot be checked in here (`elsewhere`: made on another
    /// device, or its copy not here), Extend and Download to edit, never a
    /// Check in that can only fail.
    Checkout {
        id: CheckoutId,
        label: String,
        elsewhere: bool,
    },
    Separator,
    /// "2 requests waiting": opens My check-outs, where they are answered.
    Requests {
        count: usize,
    },
    /// "3 unread in your inbox": opens the inbox.
    Inbox {
        unread: u64,
    },
    CheckOutFile,
    Open,
    Quit,
}

/// What a click on a menu item asks for, parsed back from its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Extend(CheckoutId),
    CheckIn(CheckoutId),
    Reveal(CheckoutId),
    /// Brings the version checked out here to edit (the lease untouched).
    GetCopy(CheckoutId),
    ShowRequests,
    ShowInbox,
    CheckOutFile,
    Open,
    Quit,
}

/// What waits for you: requests to answer, and unread items in your inbox.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    pub requests: usize,
    pub unread: u64,
}

/// The menu: what waits for you (the requests for your answer, your
/// unread inbox items: each when any), your check-outs (those in
/// `elsewhere` cannot be checked in here: `desk::held_elsewhere`), then the
/// fixed items.
pub fn entries(
    checkouts: &[Checkout],
    elsewhere: &HashSet<CheckoutId>,
    waiting: Waiting,
    now: Timestamp,
) -> Vec<Entry> {
    let mut entries = Vec::new();
    if waiting.requests > 0 {
        entries.push(Entry::Requests {
            count: waiting.requests,
        });
    }
    if waiting.unread > 0 {
        entries.push(Entry::Inbox {
            unread: waiting.unread,
        });
    }
    if waiting != Waiting::default() {
        entries.push(Entry::Separator);
    }
    entries.extend(checkouts.iter().map(|c| {
        let elsewhere = elsewhere.contains(&c.id);
        let mut label = format!("{} — {}", c.path.file_name(), time_left(c.expires_at - now));
        if let Some(device) = c.device.as_ref().filter(|_| elsewhere) {
            label.push_str(&format!(" — checked out on {}", device.name));
        }
        Entry::Checkout {
            id: c.id,
            label,
            elsewhere,
        }
    }));
    if !checkouts.is_empty() {
        entries.push(Entry::Separator);
    }
    entries.extend([
        Entry::CheckOutFile,
        Entry::Open,
        Entry::Separator,
        Entry::Quit,
    ]);
    entries
}

/// "Leasedesk: 2 files checked out; the next lease ends at 17:30
/// (hero.psd). 2 requests waiting. 3 unread in your inbox" (each of the
/// last parts when any wait for you).
pub fn tooltip(checkouts: &[Checkout], waiting: Waiting, now: Timestamp) -> String {
    let mut said = held_tooltip(checkouts, now);
    if waiting.requests > 0 {
        said = format!("{said}. {}", requests_waiting(waiting.requests));
    }
    if waiting.unread > 0 {
        said = format!("{said}. {}", unread_in_inbox(waiting.unread));
    }
    said
}

/// "3 unread in your inbox".
pub fn unread_in_inbox(unread: u64) -> String {
    format!("{unread} unread in your inbox")
}

/// "1 request waiting", "2 requests waiting": for your answer.
pub fn requests_waiting(count: usize) -> String {
    match count {
        1 => "1 request waiting".into(),
        n => format!("{n} requests waiting"),
    }
}

fn held_tooltip(checkouts: &[Checkout], now: Timestamp) -> String {
    let Some(next) = checkouts.iter().min_by_key(|c| c.expires_at) else {
        return "Leasedesk: no files checked out".into();
    };
    let at = if next.expires_at <= now {
        "has lapsed".to_owned()
    } else {
        format!(
            "ends at {}",
            next.expires_at.with_timezone(&Local).format("%H:%M")
        )
    };
    match checkouts.len() {
        1 => format!(
            "Leasedesk: 1 file checked out ({}); its lease {at}",
            next.path.file_name()
        ),
        n => format!(
            "Leasedesk: {n} files checked out; the next lease {at} ({})",
            next.path.file_name()
        ),
    }
}

/// "1 h 05 min left", "12 min left", "40 s left", "lapsed".
pub fn time_left(left: TimeDelta) -> String {
    if left.num_seconds() <= 0 {
        return "lapsed".into();
    }
    format!("{} left", leasedesk_desk::time_left(left))
}

pub fn action(menu_id: &str) -> Option<Action> {
    match menu_id {
        "check-out-file" => return Some(Action::CheckOutFile),
        "requests" => return Some(Action::ShowRequests),
        "inbox" => return Some(Action::ShowInbox),
        "open" => return Some(Action::Open),
        "quit" => return Some(Action::Quit),
        _ => {}
    }
    let (verb, id) = menu_id.split_once(':')?;
    let id: CheckoutId = id.parse().ok()?;
    match verb {
        "extend" => Some(Action::Extend(id)),
        "checkin" => Some(Action::CheckIn(id)),
        "reveal" => Some(Action::Reveal(id)),
        "get-copy" => Some(Action::GetCopy(id)),
        _ => None,
    }
}

/// The Tauri menu for `entries`.
pub fn menu<R: Runtime>(app: &AppHandle<R>, entries: &[Entry]) -> tauri::Result<Menu<R>> {
    let item = |id: String, text: &str| MenuItem::with_id(app, id, text, true, None::<&str>);
    let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
    for entry in entries {
        match entry {
            Entry::Checkout {
                id,
                label,
                elsewhere,
            } => {
                let extend = item(format!("extend:{id}"), "Extend")?;
                let submenu = if *elsewhere {
                    let get = item(format!("get-copy:{id}"), "Download to edit")?;
                    Submenu::with_items(app, label, true, &[&extend, &get])?
                } else {
                    let check_in = item(format!("checkin:{id}"), "Check in")?;
                    let reveal = item(format!("reveal:{id}"), "Reveal in folder")?;
                    Submenu::with_items(app, label, true, &[&extend, &check_in, &reveal])?
                };
                items.push(Box::new(submenu));
            }
            Entry::Separator => items.push(Box::new(PredefinedMenuItem::separator(app)?)),
            Entry::Requests { count } => items.push(Box::new(item(
                "requests".into(),
                &format!("{}…", requests_waiting(*count)),
            )?)),
            Entry::Inbox { unread } => items.push(Box::new(item(
                "inbox".into(),
                &format!("{}…", unread_in_inbox(*unread)),
            )?)),
            Entry::CheckOutFile => items.push(Box::new(item(
                "check-out-file".into(),
                "Check out a file…",
            )?)),
            Entry::Open => items.push(Box::new(item("open".into(), "Open Leasedesk")?)),
            Entry::Quit => items.push(Box::new(item("quit".into(), "Quit")?)),
        }
    }
    let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(|i| i.as_ref()).collect();
    Menu::with_items(app, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use leasedesk_model::model::*;

    /// An open check-out of alice's, read as the API gives one (fields the
    /// tray does not look at are left to their defaults).
    fn checkout(path: &str, expires_in: TimeDelta, now: Timestamp) -> Checkout {
        serde_json::from_value(serde_json::json!({
            "id": CheckoutId::new(),
            "artifact_id": ArtifactId::new(),
            "path": path,
            "version": 1,
            "digest": "blake3:0000000000000000000000000000000000000000000000000000000000000000",
            "actor": "user:alice",
            "holder": "checkout:x:user:alice",
            "created_at": now,
            "expires_at": now + expires_in,
            "state": "open",
        }))
        .unwrap()
    }

    fn requests(count: usize) -> Waiting {
        Waiting {
            requests: count,
            unread: 0,
        }
    }

    #[test]
    fn the_menu_lists_each_check_out_with_time_left_then_the_fixed_items() {
        let now = chrono::Utc::now();
        let held = [
            checkout("brand/hero.psd", TimeDelta::minutes(80), now),
            checkout("shot.blend", TimeDelta::minutes(4), now),
        ];
        let entries = entries(&held, &HashSet::new(), Waiting::default(), now);
        assert_eq!(
            entries[0],
            Entry::Checkout {
                id: held[0].id,
                label: "hero.psd — 1 h 20 min left".into(),
                elsewhere: false,
            }
        );
        assert_eq!(
            entries[1],
            Entry::Checkout {
                id: held[1].id,
                label: "shot.blend — 4 min left".into(),
                elsewhere: false,
            }
        );
        assert_eq!(
            &entries[2..],
            &[
                Entry::Separator,
                Entry::CheckOutFile,
                Entry::Open,
                Entry::Separator,
                Entry::Quit
            ]
        );
    }

    #[test]
    fn with_nothing_checked_out_the_menu_has_only_the_fixed_items() {
        let now = chrono::Utc::now();
        assert_eq!(
            entries(&[], &HashSet::new(), Waiting::default(), now),
            vec![
                Entry::CheckOutFile,
                Entry::Open,
                Entry::Separator,
                Entry::Quit
            ]
        );
        assert_eq!(
            tooltip(&[], Waiting::default(), now),
            "Leasedesk: no files checked out"
        );
    }

    #[test]
    fn the_tooltip_counts_files_and_names_the_next_lease_to_end() {
        let now = chrono::Utc::now();
        let held = [
            checkout("a.psd", TimeDelta::hours(3), now),
            checkout("b.psd", TimeDelta::minutes(30), now),
        ];
        let tip = tooltip(&held, Waiting::default(), now);
        let at = held[1]
            .expires_at
            .with_timezone(&Local)
            .format("%H:%M")
            .to_string();
        assert_eq!(
            tip,
            format!("Leasedesk: 2 files checked out; the next lease ends at {at} (b.psd)")
        );
        let lapsed = [checkout("a.psd", TimeDelta::minutes(-1), now)];
        assert!(tooltip(&lapsed, Waiting::default(), now).ends_with("its lease has lapsed"));
    }

    #[test]
    fn menu_ids_parse_back_to_their_actions() {
        let id = CheckoutId::new();
        assert_eq!(action(&format!("extend:{id}")), Some(Action::Extend(id)));
        assert_eq!(action(&format!("checkin:{id}")), Some(Action::CheckIn(id)));
        assert_eq!(action(&format!("reveal:{id}")), Some(Action::Reveal(id)));
        assert_eq!(action(&format!("get-copy:{id}")), Some(Action::GetCopy(id)));
        assert_eq!(action("quit"), Some(Action::Quit));
        assert_eq!(action("requests"), Some(Action::ShowRequests));
        assert_eq!(action("inbox"), Some(Action::ShowInbox));
        assert_eq!(action("extend:not-a-uuid"), None);
        assert_eq!(action("explode:1"), None);
    }

    #[test]
    fn requests_waiting_come_first_in_the_menu_and_last_in_the_tooltip() {
        let now = chrono::Utc::now();
        let held = [checkout("brand/hero.psd", TimeDelta::hours(2), now)];
        let menu = entries(&held, &HashSet::new(), requests(2), now);
        assert_eq!(
            &menu[..3],
            &[
                Entry::Requests { count: 2 },
                Entry::Separator,
                Entry::Checkout {
                    id: held[0].id,
                    label: "hero.psd — 2 h 00 min left".into(),
                    elsewhere: false,
                }
            ]
        );
        let tip = tooltip(&held, requests(2), now);
        assert!(
            tip.starts_with("Leasedesk: 1 file checked out (hero.psd)"),
            "{tip}"
        );
        assert!(tip.ends_with(". 2 requests waiting"), "{tip}");
        assert!(tooltip(&held, requests(1), now).ends_with(". 1 request waiting"));
        assert!(!tooltip(&held, Waiting::default(), now).contains("request"));
        assert_eq!(requests_waiting(1), "1 request waiting");
    }

    #[test]
    fn unread_inbox_items_are_counted_in_the_menu_and_the_tooltip() {
        let now = chrono::Utc::now();
        let held = [checkout("brand/hero.psd", TimeDelta::hours(2), now)];
        let both = Waiting {
            requests: 1,
            unread: 3,
        };
        let menu = entries(&held, &HashSet::new(), both, now);
        assert_eq!(
            &menu[..3],
            &[
                Entry::Requests { count: 1 },
                Entry::Inbox { unread: 3 },
                Entry::Separator
            ]
        );
        let tip = tooltip(&held, both, now);
        assert!(
            tip.ends_with(". 1 request waiting. 3 unread in your inbox"),
            "{tip}"
        );
        let inbox_only = Waiting {
            requests: 0,
            unread: 1,
        };
        let menu = entries(&[], &HashSet::new(), inbox_only, now);
        assert_eq!(
            &menu[..3],
            &[
                Entry::Inbox { unread: 1 },
                Entry::Separator,
                Entry::CheckOutFile
            ]
        );
        assert_eq!(
            tooltip(&[], inbox_only, now),
            "Leasedesk: no files checked out. 1 unread in your inbox"
        );
        assert!(!tooltip(&held, Waiting::default(), now).contains("inbox"));
    }

    /// A check-out made on another device offers Download to edit, never
    /// a Check in that can only fail, and says which device holds the work.
    #[test]
    fn a_check_out_held_elsewhere_says_where_and_is_not_checked_in_here() {
        let now = chrono::Utc::now();
        let mut laptop = checkout("brand/hero.psd", TimeDelta::hours(2), now);
        laptop.device = Some(DeviceRef {
            id: "0123456789abcdef".into(),
            name: "alice-laptop".into(),
        });
        let here = checkout("shot.blend", TimeDelta::hours(1), now);
        let elsewhere = HashSet::from([laptop.id]);
        let menu = entries(
            &[laptop.clone(), here.clone()],
            &elsewhere,
            Waiting::default(),
            now,
        );
        assert_eq!(
            &menu[..2],
            &[
                Entry::Checkout {
                    id: laptop.id,
                    label: "hero.psd — 2 h 00 min left — checked out on alice-laptop".into(),
                    elsewhere: true,
                },
                Entry::Checkout {
                    id: here.id,
                    label: "shot.blend — 1 h 00 min left".into(),
                    elsewhere: false,
                }
            ]
        );
        // Held elsewhere with no device recorded (its copy is not here): no name to give.
        let old = checkout("old.psd", TimeDelta::hours(1), now);
        let menu = entries(
            std::slice::from_ref(&old),
            &HashSet::from([old.id]),
            Waiting::default(),
            now,
        );
        assert_eq!(
            menu[0],
            Entry::Checkout {
                id: old.id,
                label: "old.psd — 1 h 00 min left".into(),
                elsewhere: true,
            }
        );
    }

    #[test]
    fn time_left_reads_like_a_person_would_say_it() {
        assert_eq!(time_left(TimeDelta::seconds(40)), "40 s left");
        assert_eq!(time_left(TimeDelta::minutes(12)), "12 min left");
        assert_eq!(time_left(TimeDelta::minutes(65)), "1 h 05 min left");
        assert_eq!(time_left(TimeDelta::zero()), "lapsed");
    }
}
