//! An agent's `edit`: committed on success, always released (failure,
//! deadline, busy file), and run without the caller's token or server.

use super::{stop, Cli, SHELL};
use testkit::WithEnvironment;

// A command line that names no `{}` gets the copy's path as one more
// argument: `sh -c` takes it as `$0`, cmd would run it, so there `rem {}`
// takes it.
/// Half a minute of waiting (ping waits a second a ping: Windows' `timeout`
/// needs a console).
const SLEEP_30: &str = if cfg!(windows) {
    "ping -n 31 127.0.0.1 >NUL & rem {}"
} else {
    "sleep 30"
};
/// Prints the environment, a NAME=value a line.
const PRINT_ENV: &str = if cfg!(windows) { "set & rem {}" } else { "env" };

#[test]
fn an_agents_edit_commits_on_success_and_always_releases_its_lease() {
    let cli = Cli::new();
    cli.import("a.txt", b"hello\n");

    let done = cli.ok(
        "agent:bot",
        &["edit", "a.txt", "--", SHELL[0], SHELL[1], "echo more>> {}"],
    );
    assert!(done.contains("committed a.txt as version 2"), "{done}");

    let failed = cli.run(
        "agent:bot",
        &["edit", "a.txt", "--", SHELL[0], SHELL[1], "exit 1"],
    );
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("nothing was committed"));

    let started = std::time::Instant::now();
    let slow = cli.run(
        "agent:bot",
        &[
            "edit",
            "a.txt",
            "--deadline",
            "1",
            "--",
            SHELL[0],
            SHELL[1],
            SLEEP_30,
        ],
    );
    assert_eq!(slow.status.code(), Some(1));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the deadline stopped the command"
    );
    assert!(
        String::from_utf8_lossy(&slow.stderr).contains("ran longer than 1 s"),
        "{}",
        String::from_utf8_lossy(&slow.stderr)
    );

    // After success, failure and timeout alike the file is free, at version 2.
    let who = cli.ok("user:bob", &["who", "a.txt"]);
    assert!(who.contains("is free (version 2 by agent:bot)"), "{who}");

    cli.ok("user:alice", &["checkout", "a.txt", "--note", "proofing"]);
    let busy = cli.run(
        "agent:bot",
        &["edit", "a.txt", "--", SHELL[0], SHELL[1], "exit 0"],
    );
    assert_eq!(busy.status.code(), Some(75), "a busy file exits with 75");
    assert!(String::from_utf8_lossy(&busy.stderr).contains("user:alice"));
}

#[test]
fn an_agents_command_runs_without_the_token_and_server_in_its_environment() {
    let local = Cli::new();
    let token = local.add_participant(&["resizer", "--agent"]);
    local.import("a.txt", b"hello\n");
    let server = local.serve();
    // The command prints its environment, one NAME=value per line, then leaves the file be.
    let printed = crate::harness::cli_on()
        .env("LEASEDESK_SERVER", &server.url)
        .env("LEASEDESK_TOKEN", &token)
        .env("LEASEDESK_TEST_KEPT", "kept")
        .ok(&["edit", "a.txt", "--", SHELL[0], SHELL[1], PRINT_ENV]);
    let names: Vec<&str> = printed
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    assert!(
        names.contains(&"LEASEDESK_TEST_KEPT"),
        "the rest is kept: {printed}"
    );
    assert!(names.contains(&"PATH"), "{printed}");
    for secret in ["LEASEDESK_TOKEN", "LEASEDESK_SERVER"] {
        assert!(!names.contains(&secret), "{secret} reached the command");
    }
    let secret = token.rsplit('_').next().unwrap();
    assert!(!printed.contains(secret), "the token reached the command");
    assert!(printed.contains("a.txt is unchanged"), "{printed}");
    assert!(stop(server) || !crate::harness::GRACEFUL_STOP);
}
