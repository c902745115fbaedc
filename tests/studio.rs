//! A studio of its own (API.md "Joining a studio", "Folder permissions"), on
//! every backend: invites and the devices they make (`invites`), groups,
//! and folder permissions decided in each operation's transaction: a file
//! in a `none` folder does not exist for the caller, one in a `read` folder
//! cannot be changed, and a rule change is never half seen (`permissions`).

use leasedesk::model::*;

mod invites;
mod permissions;

fn rule(folder: &str, who: &str, level: &str) -> Rule {
    Rule::parse(folder, who, level).unwrap()
}

fn invite_for(name: &str) -> InviteRequest {
    InviteRequest {
        name: name.into(),
        ..InviteRequest::default()
    }
}
