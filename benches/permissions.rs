//! `cargo xtask bench --only permissions` (issue 24): what folder permissions
//! cost. On one SQLite data folder of 10,000 artifacts in 100 folders
//! (`clients/c07/job0/file42.psd`), `user:bob` (a member of group `team`)
//! checks out and cancels one artifact, and lists every artifact he can see,
//! in-process (the bundled backend) and over HTTP (a `Remote` client of
//! `leasedesk::server::run` on 127.0.0.1:0 in this process), under 0, 10 and
//! 1,000 rules. The admin replaces the rules between phases; the phases take
//! turns over several rounds, so that the load of this shared machine falls
//! on every set alike. Also measured once, first: the store before any group
//! or rule was written (no permissions document at all). `--quick`: 1,000
//! artifacts and fewer samples.

#[path = "common/mod.rs"]
#[allow(dead_code)] // the big-file helpers and the served CLI are other benches'
mod common;
#[path = "common/figures.rs"]
mod figures;
#[path = "common/pairs.rs"]
#[allow(dead_code)] // the served CLI, etcd and the concurrent pairs are other benches'
mod pairs;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use leasedesk::model::*;
use leasedesk::{Backend, Bundled, Options, Remote, Studio, Upload};

use common::median;
use figures::{row, value, Data};
use pairs::{ms, percentile};

struct Sizes {
    /// Files in each of the 100 folders.
    files_per_folder: usize,
    rounds: usize,
    /// Check-out + cancel pairs per set, backend and round.
    pairs: usize,
    /// Listings per set, backend and round.
    listings: usize,
}

/// `clients/c00/` … `clients/c24/`, each with `job0/` … `job3/`: 100 folders.
const CLIENTS: usize = 25;
const JOBS: usize = 4;
/// The folder of the artifact bob checks out and cancels, and that artifact.
const LEASE_FOLDER: &str = "clients/c07/job0/";
const LEASE_FILE: &str = "clients/c07/job0/file0.psd";
/// Other people in the studio, named by some of the 1,000 rules; and their groups.
const OTHER_USERS: usize = 40;
const OTHER_GROUPS: usize = 20;

/// The rule sets, in the order of the report.
const SETS: [&str; 3] = ["0 rules", "10 rules", "1,000 rules"];

fn main() {
    let Some(flags) = common::Flags::for_part("permissions") else {
        return;
    };
    let sizes = if flags.quick {
        Sizes {
            files_per_folder: 10,
            rounds: 3,
            pairs: 50,
            listings: 2,
        }
    } else {
        Sizes {
            files_per_folder: 100,
            rounds: 25,
            pairs: 200,
            listings: 3,
        }
    };
    let work = common::work_dir("bench-permissions");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(run(&work, &sizes));
    let _ = std::fs::remove_dir_all(&work);
}

/// One backend's samples under one rule set.
#[derive(Default, Clone)]
struct Samples {
    /// Each check-out + cancel pair.
    pairs: Vec<Duration>,
    /// Each listing of every artifact.
    listings: Vec<Duration>,
    /// Per round: the median pair and the median listing.
    round_pairs: Vec<Duration>,
    round_listings: Vec<Duration>,
    /// How many artifacts bob's listing held.
    listed: usize,
}

/// Bob through both backends, and the artifact he checks out.
struct Bob {
    bundled: Bundled,
    http: Remote,
    artifact: ArtifactId,
}

async fn run(work: &std::path::Path, sizes: &Sizes) {
    let store = Bundled::open_with(&work.join("data"), Options::default()).unwrap();
    let admin = participant("user:admin");
    let bob = participant("user:bob");
    store.add_account(&admin, true).unwrap();
    let (_, bob_token) = store.add_account(&bob, false).unwrap();
    for u in 0..OTHER_USERS {
        store.add_account(&other_user(u), false).unwrap();
    }

    let count = CLIENTS * JOBS * sizes.files_per_folder;
    let started = Instant::now();
    let artifact = seed(&store.acting_as(admin.clone()), sizes.files_per_folder).await;
    println!(
        "<!-- {count} artifacts imported in {:.1} s -->",
        started.elapsed().as_secs_f64()
    );

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(leasedesk::server::run(listener, store.clone(), async {
        let _ = stopped.await;
    }));
    let bob = Bob {
        bundled: store.acting_as(bob),
        http: Remote::new(&base, &bob_token).unwrap(),
        artifact,
    };

    // The store as it was before permissions: no document, no stamp.
    let never = measure_set(&bob, sizes, sizes.rounds).await;

    let admin = store.acting_as(admin);
    put_groups(&admin).await;
    let sets = [vec![], ten_rules(), thousand_rules()];
    assert_eq!(sets[1].len(), 10);
    assert_eq!(sets[2].len(), 1000);
    let mut samples = vec![[Samples::default(), Samples::default()]; SETS.len()];
    for round in 0..sizes.rounds {
        // Each set goes first in turn.
        for turn in 0..SETS.len() {
            let set = (round + turn) % SETS.len();
            admin.put_permission_rules(sets[set].clone()).await.unwrap();
            let measured = measure_set(&bob, sizes, 1).await;
            for (into, from) in samples[set].iter_mut().zip(measured) {
                into.pairs.extend(from.pairs);
                into.listings.extend(from.listings);
                into.round_pairs.extend(from.round_pairs);
                into.round_listings.extend(from.round_listings);
                into.listed = from.listed;
            }
        }
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    report(count, sizes, &never, &samples);
}

fn participant(name: &str) -> Participant {
    name.parse().unwrap()
}

fn other_user(u: usize) -> Participant {
    participant(&format!("user:u{u:02}"))
}

fn client_folder(c: usize) -> String {
    format!("clients/c{c:02}/")
}

/// The 100 folders that hold files, `clients/cCC/jobJ/`, in order.
fn folders() -> impl Iterator<Item = String> {
    (0..CLIENTS).flat_map(|c| (0..JOBS).map(move |j| format!("{}job{j}/", client_folder(c))))
}

/// Imports `per_folder` small files (each its own bytes) into each folder,
/// many at once so that their writes share commits; the id of the file bob
/// checks out.
async fn seed(admin: &Bundled, per_folder: usize) -> ArtifactId {
    let paths: Vec<String> = folders()
        .flat_map(|folder| (0..per_folder).map(move |k| format!("{folder}file{k}.psd")))
        .collect();
    let mut imports = futures_util::stream::iter(paths)
        .map(|path| async move {
            let bytes = format!("content of {path}").into_bytes();
            let artifact = admin
                .import(
                    &path.parse().unwrap(),
                    Upload::stream(std::io::Cursor::new(bytes)),
                )
                .await
                .unwrap();
            (path, artifact.id)
        })
        .buffer_unordered(64);
    let mut lease = None;
    while let Some((path, id)) = imports.next().await {
        if path == LEASE_FILE {
            lease = Some(id);
        }
    }
    lease.expect("the leased file is imported")
}

/// Group `team` (bob and ten others) and the other people's groups.
async fn put_groups(admin: &Bundled) {
    let team = std::iter::once(participant("user:bob")).chain((0..10).map(other_user));
    admin
        .put_group(Group {
            name: "team".parse().unwrap(),
            members: team.collect(),
        })
        .await
        .unwrap();
    for g in 0..OTHER_GROUPS {
        let members = (0..3).map(|m| other_user(10 + (g + m * 7) % (OTHER_USERS - 10)));
        admin
            .put_group(Group {
                name: format!("g{g:02}").parse().unwrap(),
                members: members.collect(),
            })
            .await
            .unwrap();
    }
}

fn rule(folder: &str, who: &str, level: &str) -> Rule {
    Rule::parse(folder, who, level).unwrap()
}

/// Ten rules as a small studio writes them: everyone may read, bob's group
/// may write the clients; bob may not see one job, nor may his group see
/// another (2 % of the files); bob may only read one job, his group one
/// client, everyone another; nobody sees the archive; one rule for someone
/// else. Bob writes the leased file's folder by a rule naming him.
fn ten_rules() -> Vec<Rule> {
    vec![
        rule("", "everyone", "read"),
        rule("clients/", "group:team", "write"),
        rule("clients/c03/job1/", "user:bob", "none"),
        rule("clients/c05/", "group:team", "read"),
        rule(LEASE_FOLDER, "user:bob", "write"),
        rule("clients/c10/job2/", "group:team", "none"),
        rule("clients/c12/", "user:u00", "none"),
        rule("clients/c15/job3/", "user:bob", "read"),
        rule("clients/c20/", "everyone", "read"),
        rule("archive/", "everyone", "none"),
    ]
}

/// A rule that applies to bob, naming him, his group or everyone, by `n`.
fn bobs(n: usize) -> &'static str {
    ["user:bob", "group:team", "everyone"][n % 3]
}

/// A thousand rules: 328 that apply to bob at every depth (the store,
/// `clients/`, each client, each job, and `refs/` and `final/` under each
/// job), naming him, his group or everyone; two jobs he may not see (2 % of
/// the files, as with ten rules), a quarter of the others he may only read;
/// and 672 for other people and groups on the same folders.
fn thousand_rules() -> Vec<Rule> {
    let mut rules = vec![
        rule("", "everyone", "read"),
        rule("clients/", "group:team", "write"),
        rule("archive/", "everyone", "none"),
    ];
    for c in 0..CLIENTS {
        rules.push(rule(&client_folder(c), bobs(c), "write"));
    }
    for (n, folder) in folders().enumerate() {
        let (who, level) = if folder == LEASE_FOLDER {
            ("user:bob", "write")
        } else if n % 50 == 3 {
            (bobs(n), "none")
        } else if n % 4 == 1 {
            (bobs(n), "read")
        } else {
            (bobs(n), "write")
        };
        rules.push(rule(&folder, who, level));
        rules.push(rule(&format!("{folder}refs/"), bobs(n + 1), "read"));
        rules.push(rule(&format!("{folder}final/"), bobs(n + 2), "none"));
    }
    let places: Vec<String> = (0..CLIENTS)
        .map(client_folder)
        .chain(folders())
        .chain(folders().map(|f| format!("{f}refs/")))
        .chain(folders().map(|f| format!("{f}final/")))
        .collect();
    let others: Vec<String> = (0..OTHER_USERS)
        .map(|u| other_user(u).to_string())
        .chain((0..OTHER_GROUPS).map(|g| format!("group:g{g:02}")))
        .collect();
    // (i mod 325, i mod 60) repeats only after 3,900: no folder gets two
    // rules for one person.
    for i in 0..1000 - rules.len() {
        let level = ["write", "read", "none"][i % 3];
        rules.push(rule(
            &places[i % places.len()],
            &others[i % others.len()],
            level,
        ));
    }
    rules
}

/// Bob's samples on the bundled backend and over HTTP, `rounds` times: a
/// listing and a pair first, untimed (the first request after a rule change
/// compiles the rules and resolves bob's folders, once per process), then
/// the pairs and the listings of each backend.
async fn measure_set(bob: &Bob, sizes: &Sizes, rounds: usize) -> [Samples; 2] {
    let backends: [&dyn Backend; 2] = [&bob.bundled, &bob.http];
    let mut samples = [Samples::default(), Samples::default()];
    for (backend, samples) in backends.into_iter().zip(&mut samples) {
        let seen = backend.artifact(bob.artifact).await.unwrap();
        assert_eq!(seen.access, Access::Write, "bob may write the leased file");
        pair(backend, bob.artifact).await;
        samples.listed = backend.artifacts().await.unwrap().len();
    }
    for _ in 0..rounds {
        for (backend, samples) in backends.into_iter().zip(&mut samples) {
            let mut pairs = Vec::with_capacity(sizes.pairs);
            for _ in 0..sizes.pairs {
                let started = Instant::now();
                pair(backend, bob.artifact).await;
                pairs.push(started.elapsed());
            }
            let mut listings = Vec::with_capacity(sizes.listings);
            for _ in 0..sizes.listings {
                let started = Instant::now();
                let listed = backend.artifacts().await.unwrap();
                listings.push(started.elapsed());
                assert_eq!(listed.len(), samples.listed);
            }
            samples.round_pairs.push(median(pairs.clone()));
            samples.round_listings.push(median(listings.clone()));
            samples.pairs.extend(pairs);
            samples.listings.extend(listings);
        }
    }
    samples
}

/// Bob's lease acquire + release: a check-out of `artifact`, then its cancel.
async fn pair(backend: &dyn Backend, artifact: ArtifactId) {
    let checkout = backend
        .check_out(artifact, CheckoutRequest::default())
        .await
        .unwrap();
    backend.cancel(checkout.id).await.unwrap();
}

fn report(count: usize, sizes: &Sizes, never: &[Samples; 2], sets: &[[Samples; 2]]) {
    let how = ["bundled", "over HTTP"];
    let (rounds, pairs, listings) = (sizes.rounds, sizes.pairs, sizes.listings);
    common::table_head();
    let millis = |d: Duration| d.as_secs_f64() * 1e3;
    // A set's pairs: p50 and p99, in ms.
    let pair_times = |s: &Samples| {
        let mut sorted = s.pairs.clone();
        sorted.sort();
        (
            millis(percentile(&sorted, 0.5)),
            millis(percentile(&sorted, 0.99)),
        )
    };
    let listing_time = |s: &Samples| millis(median(s.listings.clone()));
    for backend in 0..2 {
        let pair_figure = |s: &Samples| {
            let mut sorted = s.pairs.clone();
            sorted.sort();
            format!(
                "{} / {}",
                ms(percentile(&sorted, 0.5)),
                ms(percentile(&sorted, 0.99))
            )
        };
        let set = |n: usize| pair_times(&sets[n][backend]);
        let never_pairs = pair_times(&never[backend]);
        row(
            &format!(
                "bob's check-out + cancel of one file, {}, median / p99 of {} pairs per set ({rounds} rounds of {pairs}, the sets taking turns)",
                how[backend],
                thousands(rounds * pairs)
            ),
            figures(sets, backend, pair_figure, |s| &s.pairs, |s| &s.round_pairs),
            "1,000 rules at most 1.10x 0 rules",
            against_sets(value(set(2).0, "ms"), set(0).0, set(1).0)
                .and("p99", set(2).1, "ms")
                .against(SETS[0], set(0).1, "ms"),
        );
        row(
            &format!(
                "(the same before any permissions document: no stamp, {} pairs first)",
                thousands(rounds * pairs)
            ),
            pair_figure(&never[backend]),
            "",
            value(never_pairs.0, "ms").and("p99", never_pairs.1, "ms"),
        );
    }
    for backend in 0..2 {
        let listing_figure = |s: &Samples| {
            format!(
                "{} ({} listed)",
                ms(median(s.listings.clone())),
                thousands(s.listed)
            )
        };
        row(
            &format!(
                "bob's list of the {} artifacts, {}, median of {} per set ({rounds} rounds of {listings})",
                thousands(count),
                how[backend],
                rounds * listings
            ),
            figures(
                sets,
                backend,
                listing_figure,
                |s| &s.listings,
                |s| &s.round_listings,
            ),
            "1,000 rules at most 1.10x 0 rules",
            against_sets(
                value(listing_time(&sets[2][backend]), "ms"),
                listing_time(&sets[0][backend]),
                listing_time(&sets[1][backend]),
            ),
        );
        row(
            "(the same before any permissions document)",
            listing_figure(&never[backend]),
            "",
            value(listing_time(&never[backend]), "ms"),
        );
    }
}

/// 1,000 rules' figure (`thousand`) against 0 rules', with 10 rules' beside.
fn against_sets(thousand: Data, zero: f64, ten: f64) -> Data {
    thousand
        .against(SETS[0], zero, "ms")
        .and(SETS[1], ten, "ms")
}

/// Each set's figure, then the median's ratio of 1,000 rules to 0 rules,
/// with the spread of the rounds' ratios.
fn figures(
    sets: &[[Samples; 2]],
    backend: usize,
    figure: impl Fn(&Samples) -> String,
    all: impl Fn(&Samples) -> &Vec<Duration>,
    rounds: impl Fn(&Samples) -> &Vec<Duration>,
) -> String {
    let each: Vec<String> = SETS
        .iter()
        .zip(sets)
        .map(|(name, set)| format!("{name}: {}", figure(&set[backend])))
        .collect();
    let (zero, thousand) = (&sets[0][backend], &sets[2][backend]);
    let ratio =
        median(all(thousand).clone()).as_secs_f64() / median(all(zero).clone()).as_secs_f64();
    let mut per_round: Vec<f64> = rounds(thousand)
        .iter()
        .zip(rounds(zero))
        .map(|(t, z)| t.as_secs_f64() / z.as_secs_f64())
        .collect();
    per_round.sort_by(f64::total_cmp);
    let quartile = |q: usize| per_round[(per_round.len() - 1) * q / 4];
    format!(
        "{}; **1,000 / 0 = {ratio:.3}x** (the rounds' ratios: median {:.2}x, middle half {:.2}x–{:.2}x)",
        each.join("; "),
        quartile(2),
        quartile(1),
        quartile(3),
    )
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
