//! The harness of the window tests: the real app under tauri-driver, a real
//! `leasedesk serve`, the CLI acting as other people, the desktop's services,
//! screenshots. One set of helpers for both test binaries (`e2e`, `designer`);
//! it holds no scenario and claims nothing of the app beyond what a step waits for.
//!
//! `session` starts the app and its WebDriver session (`World`); `page` looks
//! at and works the window; `steps` are what the people do; `server` a real
//! `serve`; `process` the children and tools, `group` a process group killed whole; `files` what is saved and
//! checked in; `screens` screenshots; `desktop` dunst and the tray over D-Bus.
#![allow(dead_code)]

mod desktop;
mod files;
mod group;
mod on_this_bus;
mod page;
mod process;
mod screens;
mod server;
mod session;
mod steps;

// Each binary uses a part of the harness: what one leaves unused is no fault.
#[allow(unused_imports)]
pub use {
    desktop::*, files::*, group::*, page::*, process::*, screens::*, server::*, session::*,
    steps::*,
};
