//! A designer's files and our own folders as each system lets us touch them:
//! where things live per system (`places`), folders and files private to
//! their owner (`owner_only`), files another program may hold on Windows
//! (`local_file`), Windows paths past 260 characters (`long_path`), and
//! files written once, kept out of the page cache behind the writing
//! (`writeback`).
//!
//! Plain functions over paths and the file system: it never knows a lease,
//! a store or the network.

pub mod local_file;
pub mod long_path;
pub mod owner_only;
pub mod places;
pub mod writeback;

// The crates below this one, by the names this crate's code uses for them.
use leasedesk_model::error;
