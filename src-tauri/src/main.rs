// A release on Windows is a window app: no console opens beside it.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Before anything else: the app may have been started to read one PDF
    // for a preview, in a process of its own.
    leasedesk_preview::isolated::serve_or_enable();
    // WebKitGTK's DMA-BUF renderer keeps large GPU-style buffers even where
    // there is no GPU (a VM, a remote desktop) and fails on some drivers; the
    // shared-memory path costs a third less memory here. A user's own
    // setting wins.
    #[cfg(target_os = "linux")]
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
    }
    // Warnings (no tray, no watcher, a window that would not open) to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    leasedesk_app::run()
}
