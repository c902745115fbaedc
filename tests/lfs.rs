//! The Git LFS locking API (`docs/API.md`, "Git LFS") against the real
//! `git lfs` client (Debian's `git-lfs`, a test package of `cargo xtask`)
//! and a real `leasedesk serve`: each repository a temp folder with its
//! own HOME, the token given by a credential helper, and no prompt ever.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use testkit::ServeProcess;

/// A studio's server with an admin (`boss`) and two users, and a file
/// `art/hero.psd` in it (its bytes [`HERO`]).
struct Studio {
    server: ServeProcess,
    boss: String,
    alice: String,
    bob: String,
    /// The folder of the studio's blobs, when they are in one.
    blobs: Option<PathBuf>,
    /// The bucket a team's blobs are in, kept while the server runs.
    _bucket: Option<crate::harness::S3>,
    _dir: tempfile::TempDir,
}

/// The bytes of the studio's `art/hero.psd`.
const HERO: &[u8] = b"8BPS layers";

/// That `text` says each of `parts`.
#[track_caller]
fn assert_says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{text}");
    }
}

fn studio() -> Studio {
    studio_on(crate::harness::cli_in_temp_dir(), None)
}

/// A team's studio: rows in PostgreSQL, blobs in S3.
#[cfg(target_os = "linux")]
fn team_studio() -> Studio {
    let bucket = crate::harness::s3();
    let cli = crate::harness::cli_in_temp_dir()
        .database(&crate::harness::postgres_database())
        .blobs(&bucket.url("team"));
    studio_on(cli, Some(bucket))
}

fn studio_on(cli: testkit::Cli, bucket: Option<crate::harness::S3>) -> Studio {
    let boss = last_line(&cli.ok(&["user", "add", "boss", "--admin"]));
    let alice = cli.add_user("alice");
    let bob = cli.add_user("bob");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hero.psd");
    std::fs::write(&file, HERO).unwrap();
    cli.ok(&["import", "art/hero.psd", file.to_str().unwrap()]);
    let blobs = match bucket {
        None => cli.data_dir().map(|d| d.join("blobs")),
        Some(_) => None,
    };
    let server = cli.serve().spawn();
    Studio {
        server,
        blobs,
        boss,
        alice,
        bob,
        _bucket: bucket,
        _dir: dir,
    }
}

fn last_line(text: &str) -> String {
    text.lines().last().unwrap().trim().to_owned()
}

impl Studio {
    /// A repository of the studio's, for the holder of `token`.
    fn repo(&self, token: &str) -> Repo {
        Repo::new(&self.server.url, Some(token))
    }
}

/// A Git repository whose `lfs.url` is the studio's `/lfs/art`, for the
/// holder of `token` (none: no credentials at all).
struct Repo {
    dir: tempfile::TempDir,
    home: PathBuf,
}

impl Repo {
    fn new(url: &str, token: Option<&str>) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let repo = Repo { dir, home };
        std::fs::create_dir_all(repo.work()).unwrap();
        repo.ok(&["init", "-q"]);
        repo.ok(&["lfs", "install", "--local"]);
        // The file the tests lock: git lfs sets its mode after a lock or unlock.
        std::fs::write(repo.work().join("hero.psd"), b"pixels").unwrap();
        repo.ok(&["config", "user.email", "t@example.com"]);
        repo.ok(&["config", "user.name", "t"]);
        repo.ok(&["config", "lfs.locksverify", "true"]);
        if let Some(token) = token {
            repo.ok(&["config", "credential.helper", &helper(token)]);
        }
        std::fs::write(
            repo.work().join(".lfsconfig"),
            format!("[lfs]\n\turl = {url}/lfs/art\n"),
        )
        .unwrap();
        std::fs::write(
            repo.work().join(".gitattributes"),
            "*.psd filter=lfs diff=lfs merge=lfs -text lockable\n",
        )
        .unwrap();
        repo
    }

    /// A clone of the repository at `origin` (a bare one), its LFS
    /// objects fetched from the studio, for the holder of `token`.
    fn clone_of(origin: &Path, token: &str) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let repo = Repo { dir, home };
        let home_config = |args: &[&str]| {
            let mut all = vec!["config", "--global"];
            all.extend(args);
            let out = repo.git_in(repo.dir.path(), &all);
            assert!(out.status.success(), "{}", text(&out));
        };
        home_config(&["credential.helper", &helper(token)]);
        home_config(&["user.email", "t@example.com"]);
        home_config(&["user.name", "t"]);
        let out = repo.git_in(repo.dir.path(), &["lfs", "install"]);
        assert!(out.status.success(), "{}", text(&out));
        let out = repo.git_in(
            repo.dir.path(),
            &["clone", "-q", origin.to_str().unwrap(), "work"],
        );
        assert!(out.status.success(), "clone: {}", text(&out));
        repo
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn git(&self, args: &[&str]) -> Output {
        self.git_in(&self.work(), args)
    }

    fn git_in(&self, dir: &Path, args: &[&str]) -> Output {
        testkit::git::git(dir, &self.home, args)
    }

    fn ok(&self, args: &[&str]) -> String {
        testkit::git::git_ok(&self.work(), &self.home, args)
    }

    fn locks(&self, extra: &[&str]) -> serde_json::Value {
        let mut args = vec!["lfs", "locks", "--json"];
        args.extend(extra);
        serde_json::from_str(&self.ok(&args)).unwrap()
    }
}

/// A credential helper that gives `token` as the password, as git's
/// stores do.
fn helper(token: &str) -> String {
    format!("!f() {{ echo username=x; echo password={token}; }}; f")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn writable(path: &Path) -> bool {
    !std::fs::metadata(path).unwrap().permissions().readonly()
}

#[test]
fn a_git_lock_is_a_check_out_and_a_check_out_is_a_git_lock() {
    let studio = studio();
    let alice = studio.repo(&studio.alice);
    let bob = studio.repo(&studio.bob);

    let locked = alice.ok(&["lfs", "lock", "--json", "hero.psd"]);
    let locked: serde_json::Value = serde_json::from_str(&locked).unwrap();
    let lock = &locked[0];
    assert_eq!(lock["path"], "hero.psd");
    assert_eq!(lock["owner"]["name"], "alice");

    // The app's and the CLI's view: a check-out by alice, noted so.
    let held = studio
        .server
        .client_cli(&studio.bob)
        .ok(&["--json", "ls", "--held"]);
    assert_says(&held, &["Locked from Git", "user:alice"]);

    // Bob's Git is refused, with who and until when.
    let refused = bob.git(&["lfs", "lock", "hero.psd"]);
    assert!(!refused.status.success());
    let said = text(&refused);
    assert_says(&said, &["locked by alice until", "UTC: Locked from Git"]);

    // Bob sees it as theirs, alice as ours.
    let listed = bob.locks(&[]);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["id"], lock["id"]);
    let verified = alice.locks(&["--verify"]);
    assert_eq!(verified["ours"][0]["owner"]["name"], "alice", "{verified}");
    assert_eq!(verified["theirs"], serde_json::json!([]), "{verified}");
    let verified = bob.locks(&["--verify"]);
    assert_eq!(verified["theirs"][0]["id"], lock["id"], "{verified}");

    // Relocking is the same lock.
    let again: serde_json::Value =
        serde_json::from_str(&alice.ok(&["lfs", "lock", "--json", "hero.psd"])).unwrap();
    assert_eq!(again[0]["id"], lock["id"]);

    // Unlocked: nothing held, for Git and for the CLI.
    alice.ok(&["lfs", "unlock", "--id", lock["id"].as_str().unwrap()]);
    assert_eq!(bob.locks(&[]), serde_json::json!([]));

    // The reverse: a check-out from the CLI is a lock to Git.
    studio
        .server
        .client_cli(&studio.bob)
        .ok(&["checkout", "art/hero.psd", "--note", "retouching"]);
    let listed = alice.locks(&[]);
    assert_eq!(listed[0]["owner"]["name"], "bob", "{listed}");
    let said = text(&alice.git(&["lfs", "lock", "hero.psd"]));
    assert_says(&said, &["locked by bob until", ": retouching"]);
}

#[test]
fn force_unlock_is_an_admins_break_and_refused_to_anyone_else() {
    let studio = studio();
    let alice = studio.repo(&studio.alice);
    let bob = studio.repo(&studio.bob);
    let boss = studio.repo(&studio.boss);
    alice.ok(&["lfs", "lock", "hero.psd"]);
    let id = alice.locks(&[])[0]["id"].as_str().unwrap().to_owned();

    let plain = bob.git(&["lfs", "unlock", "--id", &id]);
    assert!(!plain.status.success());
    assert!(
        text(&plain).contains("locked by user:alice"),
        "{}",
        text(&plain)
    );
    let forced = bob.git(&["lfs", "unlock", "--force", "--id", &id]);
    assert!(!forced.status.success());
    assert!(text(&forced).contains("only an admin"), "{}", text(&forced));
    assert_eq!(bob.locks(&[]).as_array().unwrap().len(), 1);

    boss.ok(&["lfs", "unlock", "--force", "--id", &id]);
    assert_eq!(bob.locks(&[]), serde_json::json!([]));
    // A break, as the API's: recorded with its reason and where it came from.
    let events = studio
        .server
        .client_cli(&studio.boss)
        .ok(&["--json", "events"]);
    assert_says(&events, &["lease.broken", "\"via\": \"git\""]);
}

#[test]
fn lockable_files_are_read_only_until_locked_and_a_page_is_passed() {
    let studio = studio();
    let alice = studio.repo(&studio.alice);
    // Several paths with no file in the studio yet: each held all the same.
    for name in ["a.psd", "b.psd", "c.psd", "hero.psd"] {
        std::fs::write(alice.work().join(name), b"pixels").unwrap();
    }
    alice.ok(&["add", "."]);
    alice.ok(&["commit", "-qm", "art"]);
    alice.ok(&["checkout", "-q", "--", "."]);
    let hero = alice.work().join("hero.psd");
    // git lfs makes lockable files read-only on checkout (post-checkout).
    std::fs::remove_file(&hero).unwrap();
    alice.ok(&["checkout", "-q", "--", "hero.psd"]);
    assert!(
        !writable(&hero),
        "a lockable file is read-only until locked"
    );
    alice.ok(&["lfs", "lock", "hero.psd"]);
    assert!(writable(&hero), "locked, it is writable");
    for name in ["a.psd", "b.psd", "c.psd"] {
        alice.ok(&["lfs", "lock", name]);
    }
    let all = alice.locks(&[]);
    let paths: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.psd", "b.psd", "c.psd", "hero.psd"]);
    // --limit: git lfs asks for pages of that size and stops there.
    assert_eq!(alice.locks(&["--limit", "2"]).as_array().unwrap().len(), 2);
    alice.ok(&["lfs", "unlock", "hero.psd"]);
    assert!(!writable(&hero), "unlocked, it is read-only again");

    // A path held with no file: an import there by someone else is busy.
    let bob = studio.server.client_cli(&studio.bob);
    let file = alice.work().join("a.psd");
    let refused = bob.output(&["import", "art/a.psd", file.to_str().unwrap()]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("user:alice"), "{said}");
    // Alice's own import turns her hold into a check-out of the file.
    let mine = studio.server.client_cli(&studio.alice);
    mine.ok(&["import", "art/a.psd", file.to_str().unwrap()]);
    let listed = alice.locks(&["--path", "a.psd"]);
    assert_eq!(listed[0]["owner"]["name"], "alice", "{listed}");
    let held = mine.ok(&["--json", "ls", "--held"]);
    assert!(held.contains("art/a.psd"), "{held}");
}

#[test]
fn a_missing_token_fails_fast_with_no_prompt() {
    let studio = studio();
    let nobody = Repo::new(&studio.server.url, None);
    let started = std::time::Instant::now();
    let out = nobody.git(&["lfs", "locks"]);
    assert!(!out.status.success());
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!text(&out).contains(&studio.alice));
}

/// Bad input over HTTP: each a 4xx in Git LFS's JSON, nothing stored.
#[test]
fn bad_input_is_a_clear_4xx_in_git_lfs_json() {
    let studio = studio();
    let url = &studio.server.url;
    let token = &studio.alice;
    let curl = |args: &[&str]| -> (u16, String, String) {
        let out = Command::new("curl")
            .args([
                "-s",
                "-D",
                "-",
                "-H",
                &format!("Authorization: Bearer {token}"),
            ])
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let status: u16 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        (status, head.to_lowercase(), body.to_owned())
    };
    let post = |path: &str, body: &str| {
        curl(&[
            "-X",
            "POST",
            "-H",
            "Content-Type: application/vnd.git-lfs+json",
            "--data-binary",
            body,
            &format!("{url}{path}"),
        ])
    };
    for (status, head, body) in [
        post("/lfs/art/locks", r#"{"path": "con.psd"}"#),
        post("/lfs/art/locks", r#"{"path": "a/../b.psd"}"#),
        post("/lfs/art/locks", r#"{"path": "#),
        curl(&[&format!(
            "{url}/lfs/art/locks?cursor=6172742f.0011223344556677"
        )]),
        curl(&[&format!("{url}/lfs/art/locks?limit=0")]),
        curl(&[&format!("{url}/lfs/art/locks?limit=1001")]),
        post("/lfs/art/locks/verify", r#"{"limit": 5000}"#),
    ] {
        assert!((400..500).contains(&status), "{status} {body}");
        assert!(head.contains("application/vnd.git-lfs+json"), "{head}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(
            json["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
    }
    let (_, _, body) = curl(&[&format!("{url}/lfs/art/locks")]);
    assert_eq!(body, r#"{"locks":[]}"#);
    // A wrong token: 401 with LFS-Authenticate, and the token never said.
    let out = Command::new("curl")
        .args(["-s", "-D", "-", "-u", "x:not-a-token"])
        .arg(format!("{url}/lfs/art/locks"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("HTTP/1.1 401"), "{said}");
    assert!(
        said.to_lowercase()
            .contains("lfs-authenticate: basic realm=\"leasedesk\""),
        "{said}"
    );
    assert!(!said.contains("not-a-token"), "{said}");
}

/// The blobs in a folder of them: `XX/HEX` files, not what is on its way.
fn blob_count(root: &Path) -> usize {
    std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|d| d.file_name().len() == 2)
        .map(|d| std::fs::read_dir(d.path()).unwrap().count())
        .sum()
}

/// A bare repository for pushes, its branch `main`.
fn origin() -> tempfile::TempDir {
    let origin = tempfile::tempdir().unwrap();
    let out = Command::new("git")
        .args(["init", "-q", "--bare", "--initial-branch=main"])
        .arg(origin.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    origin
}

/// `n` bytes that do not repeat in any short stretch.
fn varied(n: usize) -> Vec<u8> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// Alice pushes LFS objects through the batch API and bob clones them
/// back, byte for byte; bytes the studio keeps already are not kept twice.
fn objects_go_up_and_come_back(studio: &Studio) {
    let origin = origin();
    let alice = studio.repo(&studio.alice);
    alice.ok(&["remote", "add", "origin", origin.path().to_str().unwrap()]);
    let big = varied(3 << 20);
    std::fs::write(alice.work().join("big.psd"), &big).unwrap();
    std::fs::write(alice.work().join("hero.psd"), HERO).unwrap();
    alice.ok(&["add", "."]);
    alice.ok(&["commit", "-qm", "art"]);
    let before = studio.blobs.as_deref().map(blob_count);
    alice.ok(&["push", "-q", "origin", "HEAD:main"]);
    if let (Some(root), Some(before)) = (&studio.blobs, before) {
        assert_eq!(
            blob_count(root),
            before + 1,
            "the hero's bytes are the studio's version's blob"
        );
    }
    // Pushed again: nothing to send (the batch has no actions for them).
    let again = alice.git(&["push", "origin", "HEAD:main"]);
    assert!(again.status.success(), "{}", text(&again));

    let bob = Repo::clone_of(origin.path(), &studio.bob);
    assert_eq!(std::fs::read(bob.work().join("big.psd")).unwrap(), big);
    assert_eq!(std::fs::read(bob.work().join("hero.psd")).unwrap(), HERO);
    let listed = bob.ok(&["lfs", "ls-files"]);
    assert!(
        listed.contains("* big.psd"),
        "fetched, not a pointer: {listed}"
    );
}

#[test]
fn objects_go_up_and_come_back_on_a_bundled_server() {
    objects_go_up_and_come_back(&studio());
}

#[cfg(target_os = "linux")]
#[test]
fn objects_go_up_and_come_back_on_a_team_server() {
    objects_go_up_and_come_back(&team_studio());
}

#[test]
fn a_push_that_changes_a_file_someone_else_locked_is_refused() {
    let studio = studio();
    let origin = origin();
    let alice = studio.repo(&studio.alice);
    alice.ok(&["remote", "add", "origin", origin.path().to_str().unwrap()]);
    alice.ok(&["add", "."]);
    alice.ok(&["commit", "-qm", "art"]);
    alice.ok(&["push", "-q", "origin", "HEAD:main"]);
    // Bob checks the hero out in Leasedesk: a lock to Git.
    studio
        .server
        .client_cli(&studio.bob)
        .ok(&["checkout", "art/hero.psd", "--note", "retouching"]);
    std::fs::write(alice.work().join("hero.psd"), b"alice's pixels").unwrap();
    alice.ok(&["commit", "-qam", "mine"]);
    let refused = alice.git(&["push", "origin", "HEAD:main"]);
    assert!(!refused.status.success(), "{}", text(&refused));
    let said = text(&refused);
    assert_says(&said, &["hero.psd", "bob"]);
    // Bob's lease ends: the same push goes.
    studio
        .server
        .client_cli(&studio.bob)
        .ok(&["cancel", "art/hero.psd"]);
    alice.ok(&["push", "-q", "origin", "HEAD:main"]);
}

/// SHA-256 of `bytes`, as Git LFS names them.
fn oid(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Bad objects over HTTP: each a 4xx in Git LFS's JSON, nothing kept.
#[test]
fn bad_objects_are_refused_and_nothing_is_kept() {
    let studio = studio();
    let url = &studio.server.url;
    let dir = tempfile::tempdir().unwrap();
    let curl = |auth: &str, args: &[&str]| -> (u16, serde_json::Value) {
        let out = Command::new("curl")
            .args(["-s", "-w", "\n%{http_code}", "-H"])
            .arg(format!("Authorization: {auth}"))
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').unwrap();
        let json = serde_json::from_str(body).unwrap_or(serde_json::Value::Null);
        (status.parse().unwrap(), json)
    };
    let token = format!("Bearer {}", studio.alice);
    let batch = |body: &str| {
        let file = dir.path().join("batch.json");
        std::fs::write(&file, body).unwrap();
        curl(
            &token,
            &[
                "-X",
                "POST",
                "-H",
                "Content-Type: application/vnd.git-lfs+json",
                "--data-binary",
                &format!("@{}", file.display()),
                &format!("{url}/lfs/art/objects/batch"),
            ],
        )
    };
    let refused = |(status, json): (u16, serde_json::Value), wanted: u16| {
        assert_eq!(status, wanted, "{json}");
        assert!(
            json["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{json}"
        );
    };
    let upload = |size: usize, oid: &str| {
        format!(r#"{{"operation":"upload","objects":[{{"oid":"{oid}","size":{size}}}]}}"#)
    };
    // An oid that is not 64 lower-case hex, and an unknown operation.
    refused(batch(&upload(5, "xyz")), 422);
    refused(batch(&upload(5, &"A".repeat(64))), 422);
    refused(batch(r#"{"operation":"delete","objects":[]}"#), 422);
    refused(
        batch(r#"{"operation":"upload","objects":[],"hash_algo":"md5"}"#),
        422,
    );
    // Larger than the server takes: that object's error, no action.
    let (status, answer) = batch(&upload(1 << 50, &oid(b"huge")));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["objects"][0]["error"]["code"], 422, "{answer}");
    assert!(answer["objects"][0].get("actions").is_none(), "{answer}");
    // 100,000 objects: refused unread past the limit.
    let many: Vec<String> = (0..100_000u32)
        .map(|i| format!(r#"{{"oid":"{}","size":{i}}}"#, oid(&i.to_le_bytes())))
        .collect();
    let body = format!(r#"{{"operation":"upload","objects":[{}]}}"#, many.join(","));
    refused(batch(&body), 413);

    // The credential of one object's upload, used for its bytes wrongly.
    let right = b"right";
    let (status, answer) = batch(&upload(5, &oid(right)));
    assert_eq!(status, 200, "{answer}");
    let actions = &answer["objects"][0]["actions"];
    let put = |auth: &str, href: &str, bytes: &[u8]| {
        let file = dir.path().join("bytes");
        std::fs::write(&file, bytes).unwrap();
        curl(
            auth,
            &[
                "-X",
                "PUT",
                "--data-binary",
                &format!("@{}", file.display()),
                href,
            ],
        )
    };
    let href = actions["upload"]["href"].as_str().unwrap();
    let auth = actions["upload"]["header"]["Authorization"]
        .as_str()
        .unwrap();
    assert!(!auth.contains(&studio.alice), "a credential of its own");
    refused(put(auth, href, b"wrong"), 422);
    refused(put(auth, href, b"right!"), 422);
    // For another object, or another operation: 403.
    let other = format!("{url}/lfs/art/objects/{}", oid(b"other"));
    refused(put(auth, &other, b"other"), 403);
    refused(curl(auth, &[href]), 403);
    refused(curl("Bearer ldlfs.00.00", &[href]), 401);
    // Nothing was kept: a download finds no object.
    let (status, answer) = batch(&format!(
        r#"{{"operation":"download","objects":[{{"oid":"{}","size":5}}]}}"#,
        oid(right)
    ));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["objects"][0]["error"]["code"], 404, "{answer}");
    // The right bytes are kept, and come back.
    let (status, _) = put(auth, href, right);
    assert_eq!(status, 200);
    let verify = &actions["verify"];
    let (status, said) = curl(
        verify["header"]["Authorization"].as_str().unwrap(),
        &[
            "-X",
            "POST",
            "--data-binary",
            &format!(r#"{{"oid":"{}","size":5}}"#, oid(right)),
            verify["href"].as_str().unwrap(),
        ],
    );
    assert_eq!(status, 200, "{said}");
    let out = Command::new("curl")
        .args(["-s", "-H"])
        .arg(format!("Authorization: {token}"))
        .arg(href)
        .output()
        .unwrap();
    assert_eq!(out.stdout, right);
}
