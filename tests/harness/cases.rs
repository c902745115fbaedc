//! One case on several configurations, each a module of its own tests:
//! the contract's three (the bundled backend, a served one over SQLite, a
//! team's over PostgreSQL and S3) and the HTTP API's two (served ones).

/// Runs each named `async fn(Fixture)` (with its attributes, such as a
/// `cfg`) three times: on the bundled backend, on
/// the remote one against a real server, and on the remote one against a
/// server on PostgreSQL and S3 (a team's). All must pass the same assertions.
#[macro_export]
macro_rules! contract {
    ($($cases:tt)*) => {
        $crate::contract_on!(team, team_fixture; $($cases)*);
    };
}

/// [`contract!`] for cases that look into the data folder's blobs (holds,
/// temp files, sweeps): the third configuration keeps its blobs there.
#[macro_export]
macro_rules! contract_with_blob_folder {
    ($($cases:tt)*) => {
        $crate::contract_on!(postgres, postgres_fixture; $($cases)*);
    };
}

/// The cases on the bundled backend, the remote one, and the remote one over
/// the third configuration: module `$third`, each case given `$fixture()`.
#[macro_export]
macro_rules! contract_on {
    ($third:ident, $fixture:ident; $($(#[$attr:meta])* $name:ident),* $(,)?) => {
        mod bundled {
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::fixture()).await
                }
            )*
        }
        mod remote {
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::remote_fixture().await).await
                }
            )*
        }
        // PostgreSQL and moto run beside the tests on Linux only.
        #[cfg(target_os = "linux")]
        mod $third {
            $(
                $(#[$attr])*
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::$fixture().await).await
                }
            )*
        }
    };
}

/// Runs each named `async fn(Fixture)` of the HTTP API twice: on a served
/// fixture over SQLite, and on one over PostgreSQL and S3 (a team's).
#[macro_export]
macro_rules! served {
    ($($name:ident),* $(,)?) => {
        mod served {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::remote_fixture().await).await
                }
            )*
        }
        #[cfg(target_os = "linux")]
        mod team_server {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::harness::team_fixture().await).await
                }
            )*
        }
    };
}

/// Runs the `async fn` case `$case` twice, as tests `on_sqlite` and (on
/// Linux, beside PostgreSQL) `on_postgres` of a module named after it:
/// given what `$sqlite` makes, and what `$postgres` makes. `$test` is the
/// test attribute both take.
#[macro_export]
macro_rules! on_sqlite_and_postgres {
    (#[$test:meta] $case:ident($sqlite:expr, $postgres:expr $(,)?)) => {
        mod $case {
            use super::*;

            #[$test]
            async fn on_sqlite() {
                super::$case($sqlite).await
            }

            #[cfg(target_os = "linux")]
            #[$test]
            async fn on_postgres() {
                super::$case($postgres).await
            }
        }
    };
}
