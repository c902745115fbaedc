//! End to end: the real app in a real window, driven through WebDriver
//! (`tauri-driver` in front of WebKitWebDriver), on the bundled backend and on
//! a real `leasedesk serve` on 127.0.0.1:0. A second user and an admin act
//! through the `leasedesk` CLI. `cargo xtask test` installs tauri-driver and
//! runs this under Xvfb and a session bus with an unlocked keyring; it tells
//! the test where the tools are (`TAURI_DRIVER`, `LEASEDESK_BIN`).
//!
//! One module a scenario (`asking`: requests to a holder; `inbox`: news of
//! review), over the shared harness (`../window/`); a module never holds a
//! helper another could use (that goes to the harness). Each step saves a
//! screenshot in `target/e2e-screenshots/`.

#[path = "../window/mod.rs"]
mod window;

mod asking;
mod changes;
mod daily;
mod editor;
mod elsewhere;
mod following;
mod inbox;
mod joining;
mod many;
mod offline;
mod review;
mod seeing;
mod servers;
mod settings;
mod sorting;
mod steady;
mod studio;
mod tray;
mod zoom;
