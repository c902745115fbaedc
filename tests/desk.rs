//! What the desktop app shows and does, without the desktop (`Desk`): the
//! scenarios are its submodules, each run on every backend (`contract!`);
//! this module holds only what they share.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::TimeDelta;
use leasedesk::desk::{self, CheckoutEnd, Desk, HistoryEntry, Reminder};
use leasedesk::model::*;
use leasedesk::workspace::{self, LocalState};

use crate::harness::*;

mod changes;
mod history;
mod inbox;
mod listing;
mod mirror;
mod overview;
mod previews;
mod reminders;
mod review;

/// Every file's row as the window lists it: the picture read first (which
/// brings the mirror up to date), then the list from its first place.
async fn rows_listed(desk: &Desk) -> Vec<desk::FileRow> {
    desk.overview().await.unwrap();
    desk.folder_rows("", 0, 1000).await.unwrap().rows
}

fn desk_for(f: &Fixture, backend: &Arc<dyn leasedesk::Backend>, name: &str) -> Desk {
    desk_in(&f.dir.path().join(name), backend.clone(), f.clock.clone())
}
