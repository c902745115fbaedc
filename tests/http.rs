//! The HTTP contract of docs/API.md, checked with a plain HTTP client against
//! a real server: statuses, error codes and bodies, headers, and what bad or
//! broken requests leave behind. This module holds what its scenarios, its
//! submodules, share; the plain client is the harness's (`Http`).

use std::io::Write;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::*;
use leasedesk::Backend;

mod listing;
mod permissions;
mod requests;
mod statuses;

/// Asserts an error answer: its status, its code, a message, and no-store.
fn refused(answer: &Answer, status: StatusCode, code: &str) {
    assert_eq!(answer.status, status, "{}", answer.body);
    assert_eq!(answer.body["error"], code, "{}", answer.body);
    assert!(!answer.message().is_empty(), "{}", answer.body);
    assert_eq!(answer.cache_control.as_deref(), Some("no-store"));
}
