//! Seeing the work: descriptions of versions and proposals, one file's
//! history paged either way, a proposal's bytes for every reviewer, and the
//! preview endpoints (their errors and cache; each format's reader has its
//! own tests). The scenarios are its submodules; this module holds what
//! they share.

use leasedesk::model::*;
use leasedesk::Error;
use reqwest::StatusCode;
use tokio::io::AsyncReadExt;

use crate::harness::*;

mod descriptions;
mod previews;
