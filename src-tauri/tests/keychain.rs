//! The remote token in a real Secret Service: `cargo xtask test` runs the
//! tests under a session bus with gnome-keyring-daemon unlocked.

use leasedesk_app::keychain;

#[test]
fn a_token_is_stored_read_back_replaced_and_forgotten_in_the_keychain() {
    let server = format!("http://127.0.0.1:7400/keychain-test-{}", std::process::id());
    assert_eq!(keychain::read(&server).unwrap(), None, "nothing stored yet");

    keychain::store(&server, "ld_first").unwrap();
    assert_eq!(
        keychain::read(&server).unwrap().as_deref(),
        Some("ld_first")
    );

    keychain::store(&server, "ld_second").unwrap();
    assert_eq!(
        keychain::read(&server).unwrap().as_deref(),
        Some("ld_second"),
        "a new token replaces the old one"
    );

    let other = format!("{server}/other");
    assert_eq!(
        keychain::read(&other).unwrap(),
        None,
        "tokens are kept per server"
    );

    keychain::forget(&server).unwrap();
    assert_eq!(keychain::read(&server).unwrap(), None);
    keychain::forget(&server).unwrap(); // forgetting twice is fine
}
