//! Lists by page, folder and search (API.md, "A million files"), on every
//! backend: pages that walk every file once in path order, wherever they
//! start; a folder, a text and `held` that narrow them together; folder
//! counts kept through imports, renames and leases; and folder permissions
//! applied to every answer and every count.

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use crate::harness::*;

/// The files of these tests, in no order: folders at several depths, case
/// and accents, and the characters a LIKE pattern would take for wildcards.
const FILES: &[&str] = &[
    "brand/Hero.psd",
    "brand/logo.ai",
    "brand/superhero/cape.psd",
    "brand/Été/affiche.psd",
    "brand/2026/q1/banner.psd",
    "brand/2026/q2/banner.psd",
    "exports/hero-small.png",
    "exports/a_b.png",
    "exports/axb.png",
    "exports/100%.png",
    "finance/q3.xlsx",
    "finance/public/summary.pdf",
    "readme.txt",
    "zz/last.psd",
];

async fn import_all(f: &Fixture) -> Vec<Artifact> {
    let mut imported = Vec::new();
    for p in FILES {
        imported.push(f.import(p, p.as_bytes()).await);
    }
    imported
}

/// Every page of `query` (with `limit`), in order, and the `seq` of each.
async fn walk(backend: &dyn Backend, query: ArtifactQuery) -> (Vec<String>, Vec<u64>) {
    let mut query = query;
    let (mut paths, mut seqs) = (Vec::new(), Vec::new());
    loop {
        let page = backend.artifact_page(query.clone()).await.unwrap();
        let limit = query.limit.unwrap() as usize;
        assert!(page.artifacts.len() <= limit, "a page over its limit");
        if let Some(next) = &page.next {
            assert_eq!(
                page.artifacts.len(),
                limit,
                "a page short of its limit before the end"
            );
            assert_eq!(
                Some(next),
                page.artifacts.last().map(|a| a.path.to_string()).as_ref()
            );
        }
        paths.extend(page.artifacts.iter().map(|a| a.path.to_string()));
        seqs.push(page.seq);
        match page.next {
            Some(next) => query.after = Some(next),
            None => return (paths, seqs),
        }
    }
}

fn sorted(paths: impl IntoIterator<Item = impl ToString>) -> Vec<String> {
    let mut paths: Vec<String> = paths.into_iter().map(|p| p.to_string()).collect();
    paths.sort(); // bytewise, as the API sorts
    paths
}

fn query() -> ArtifactQuery {
    ArtifactQuery::page(3)
}

async fn pages_walk_every_file_once_in_path_order(f: Fixture) {
    import_all(&f).await;
    let (walked, seqs) = walk(f.alice.as_ref(), query()).await;
    assert_eq!(walked, sorted(FILES));
    let everything = f.alice.artifacts().await.unwrap();
    assert_eq!(walked, sorted(everything.iter().map(|a| &a.path)));
    // Each page is as of the last event: nothing happened meanwhile.
    let last = f.last_seq().await;
    assert!(
        seqs.iter().all(|&seq| seq == last),
        "{seqs:?} against {last}"
    );
    // A page as large as the store has no next page.
    let one = f
        .alice
        .artifact_page(ArtifactQuery::page(MAX_PAGE))
        .await
        .unwrap();
    assert_eq!((one.artifacts.len(), one.next), (FILES.len(), None));
    // Many such pages at once, then one after another: each is answered,
    // in turn where a server bounds the pages it makes at once, whose room
    // each gives back.
    let at_once = (0..8).map(|_| {
        let alice = f.alice.clone();
        tokio::spawn(async move { alice.artifact_page(ArtifactQuery::page(MAX_PAGE)).await })
    });
    for page in futures_util::future::join_all(at_once).await {
        assert_eq!(page.unwrap().unwrap().artifacts.len(), FILES.len());
    }
    for _ in 0..8 {
        let page = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            f.alice.artifact_page(ArtifactQuery::page(MAX_PAGE)),
        )
        .await
        .expect("a page's room is given back");
        assert_eq!(page.unwrap().artifacts.len(), FILES.len());
    }
    // Without a limit, the whole list at once.
    let all = f
        .alice
        .artifact_page(ArtifactQuery::default())
        .await
        .unwrap();
    assert_eq!((all.artifacts.len(), all.next), (FILES.len(), None));
}

async fn after_a_path_that_does_not_exist_pages_from_the_next(f: Fixture) {
    import_all(&f).await;
    let from = |after: &str| ArtifactQuery {
        after: Some(after.into()),
        ..ArtifactQuery::page(2)
    };
    let page = f.alice.artifact_page(from("brand/Hf")).await.unwrap();
    let paths: Vec<_> = page.artifacts.iter().map(|a| a.path.to_string()).collect();
    assert_eq!(paths, ["brand/logo.ai", "brand/superhero/cape.psd"]);
    // Past every path: an empty last page.
    let page = f.alice.artifact_page(from("zzz")).await.unwrap();
    assert_eq!((page.artifacts.len(), page.next), (0, None));
    // Before every path: all of them, from the first.
    let (walked, _) = walk(f.alice.as_ref(), from("")).await;
    assert_eq!(walked, sorted(FILES));
    // `after` in another normal form sorts as its NFC form.
    let page = f
        .alice
        .artifact_page(from("brand/E\u{301}te\u{301}/"))
        .await
        .unwrap();
    assert_eq!(page.artifacts[0].path.as_str(), "brand/Été/affiche.psd");
}

async fn a_folder_a_search_and_held_narrow_the_list_together(f: Fixture) {
    let imported = import_all(&f).await;
    let id_of = |p: &str| imported.iter().find(|a| a.path.as_str() == p).unwrap().id;
    let find = |prefix: Option<&str>, text: Option<&str>, held: bool| ArtifactQuery {
        prefix: prefix.map(Into::into),
        text: text.map(Into::into),
        held,
        ..query()
    };
    let found = |q: ArtifactQuery| async { walk(f.alice.as_ref(), q).await.0 };

    assert_eq!(
        found(find(Some("brand/2026/"), None, false)).await,
        ["brand/2026/q1/banner.psd", "brand/2026/q2/banner.psd"]
    );
    // A folder is a folder: `brand/20` is not one of `brand/2026/`'s.
    assert!(found(find(Some("brand/20/"), None, false)).await.is_empty());
    assert_eq!(found(find(Some(""), None, false)).await, sorted(FILES));
    // Case and accents are ignored; 2 characters are enough.
    let heroes = [
        "brand/Hero.psd",
        "brand/superhero/cape.psd",
        "exports/hero-small.png",
    ];
    assert_eq!(found(find(None, Some("HERO"), false)).await, heroes);
    assert_eq!(found(find(None, Some("hEr"), false)).await, heroes);
    let finds_one = [
        ("été/", "brand/Été/affiche.psd"),
        ("xl", "finance/q3.xlsx"),
        // A search's text is taken literally: `_` and `%` are no wildcards.
        ("a_b", "exports/a_b.png"),
        ("0%.", "exports/100%.png"),
    ];
    for (text, only) in finds_one {
        assert_eq!(found(find(None, Some(text), false)).await, [only], "{text}");
    }
    assert!(found(find(None, Some("nowhere"), false)).await.is_empty());

    // Held: a live lease, not a lapsed one nor one given back.
    assert!(found(find(None, None, true)).await.is_empty());
    let cape = f
        .bob
        .check_out(id_of("brand/superhero/cape.psd"), for_seconds(60))
        .await
        .unwrap();
    let small = f
        .alice
        .check_out(id_of("exports/hero-small.png"), for_seconds(600))
        .await
        .unwrap();
    f.check_out_and_cancel(id_of("brand/logo.ai")).await;
    assert_eq!(
        found(find(None, None, true)).await,
        ["brand/superhero/cape.psd", "exports/hero-small.png"]
    );
    assert_eq!(
        found(find(Some("brand/"), Some("hero"), true)).await,
        ["brand/superhero/cape.psd"]
    );
    let page = f
        .alice
        .artifact_page(find(None, Some("hero"), true))
        .await
        .unwrap();
    assert_eq!(
        page.artifacts[0].lease.as_ref().unwrap().checkout_id,
        Some(cape.id)
    );
    f.advance(std::time::Duration::from_secs(61));
    assert_eq!(
        found(find(None, Some("hero"), true)).await,
        ["exports/hero-small.png"]
    );
    let _ = small;
}

async fn folders_count_files_and_held_files_at_every_depth(f: Fixture) {
    let imported = import_all(&f).await;
    let id_of = |p: &str| imported.iter().find(|a| a.path.as_str() == p).unwrap().id;
    let top = f.alice.folders("").await.unwrap();
    let folders = [
        ("brand/", 6, 0),
        ("exports/", 4, 0),
        ("finance/", 2, 0),
        ("zz/", 1, 0),
    ];
    assert_eq!(top, listing(&folders, 1));
    f.bob
        .check_out(id_of("brand/2026/q2/banner.psd"), checkout_request())
        .await
        .unwrap();
    f.bob
        .check_out(id_of("brand/Hero.psd"), for_seconds(30))
        .await
        .unwrap();
    let brand = f.alice.folders("brand/").await.unwrap();
    let folders = [
        ("brand/2026/", 2, 1),
        ("brand/superhero/", 1, 0),
        ("brand/Été/", 1, 0),
    ];
    assert_eq!(brand, listing(&folders, 2));
    assert_eq!(
        f.alice.folders("").await.unwrap().folders[0],
        count("brand/", 6, 2)
    );
    // A lapsed lease is not held.
    f.advance(std::time::Duration::from_secs(31));
    assert_eq!(
        f.alice.folders("").await.unwrap().folders[0],
        count("brand/", 6, 1)
    );
    // A folder with no file is no folder.
    assert_eq!(
        f.alice.folders("nowhere/").await.unwrap(),
        FolderList::default()
    );

    // A rename moves the counts; a folder left empty is gone.
    f.admin
        .rename(id_of("zz/last.psd"), &path("brand/2026/q3/last.psd"))
        .await
        .unwrap();
    let top = f.alice.folders("").await.unwrap();
    assert_eq!(top.folders[0], count("brand/", 7, 1));
    assert!(top.folders.iter().all(|f| f.path != "zz/"), "{top:?}");
    let year = f.alice.folders("brand/2026/").await.unwrap();
    let paths: Vec<_> = year.folders.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["brand/2026/q1/", "brand/2026/q2/", "brand/2026/q3/"]
    );
    // The files a folder holds are the files a page of it lists.
    for folder in &f.alice.folders("").await.unwrap().folders {
        let (listed, _) = walk(
            f.alice.as_ref(),
            ArtifactQuery {
                prefix: Some(folder.path.clone()),
                ..query()
            },
        )
        .await;
        assert_eq!(listed.len() as u64, folder.files, "{}", folder.path);
    }
}

async fn what_a_caller_may_not_read_is_neither_listed_nor_counted(f: Fixture) {
    let imported = import_all(&f).await;
    let id_of = |p: &str| imported.iter().find(|a| a.path.as_str() == p).unwrap().id;
    f.alice
        .check_out(id_of("finance/q3.xlsx"), checkout_request())
        .await
        .unwrap();
    f.alice
        .check_out(id_of("finance/public/summary.pdf"), checkout_request())
        .await
        .unwrap();
    f.studio("user:admin")
        .put_permission_rules(vec![
            Rule::parse("finance/", "user:bob", "none").unwrap(),
            Rule::parse("finance/public/", "user:bob", "read").unwrap(),
            Rule::parse("brand/2026/", "everyone", "none").unwrap(),
            Rule::parse("brand/2026/q2/", "user:bob", "write").unwrap(),
        ])
        .await
        .unwrap();
    let (bob_sees, _) = walk(f.bob.as_ref(), query()).await;
    let hidden = ["finance/q3.xlsx", "brand/2026/q1/banner.psd"];
    let expected = sorted(FILES.iter().filter(|p| !hidden.contains(p)));
    assert_eq!(bob_sees, expected);
    // The pages' cursors never name a hidden file either.
    let mut after = None;
    loop {
        let page = f
            .bob
            .artifact_page(ArtifactQuery {
                after,
                ..ArtifactQuery::page(1)
            })
            .await
            .unwrap();
        if let Some(next) = &page.next {
            assert!(!hidden.contains(&next.as_str()), "{next}");
        }
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    let bob_finds = |text: &str| {
        f.bob.artifact_page(ArtifactQuery {
            text: Some(text.into()),
            ..ArtifactQuery::page(100)
        })
    };
    assert!(bob_finds("q3.x").await.unwrap().artifacts.is_empty());
    assert_eq!(bob_finds("finance").await.unwrap().artifacts.len(), 1);
    let bob_held = f
        .bob
        .artifact_page(ArtifactQuery {
            held: true,
            ..ArtifactQuery::page(100)
        })
        .await
        .unwrap();
    let held: Vec<_> = bob_held.artifacts.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(held, ["finance/public/summary.pdf"]);
    assert_eq!(bob_held.artifacts[0].access, Access::Read);

    // Counts: bob's leave out what he may not read; a folder of nothing
    // he may read is not listed.
    let folders = [
        ("brand/", 5, 0),
        ("exports/", 4, 0),
        ("finance/", 1, 1),
        ("zz/", 1, 0),
    ];
    let top = f.bob.folders("").await.unwrap();
    assert_eq!(top.folders, listing(&folders, 0).folders);
    let finance = f.bob.folders("finance/").await.unwrap();
    assert_eq!(finance, listing(&[("finance/public/", 1, 1)], 0));
    let year = f.bob.folders("brand/2026/").await.unwrap();
    assert_eq!(year.folders, [count("brand/2026/q2/", 1, 0)]);
    // Everyone's rule hides brand/2026/ from alice (bob's own rule opens
    // q2/ to him alone); the admin sees all.
    let top = f.alice.folders("").await.unwrap();
    assert_eq!(top.folders[0], count("brand/", 4, 0));
    assert_eq!(top.folders[2], count("finance/", 2, 2));
    let top = f.admin.folders("").await.unwrap();
    assert_eq!(top.folders[0], count("brand/", 6, 0));
    let (admin_sees, _) = walk(f.admin.as_ref(), query()).await;
    assert_eq!(admin_sees, sorted(FILES));
}

async fn many_hidden_folders_are_left_out_of_every_page(f: Fixture) {
    // More hidden folders than a query tests on every row: the rest are
    // left out as the pages are made, and the pages stay full and exact.
    let mut shown = Vec::new();
    for i in 0..24 {
        let p = format!("jobs/j{i:02}/cut.psd");
        f.import(&p, p.as_bytes()).await;
        if i % 2 == 1 {
            shown.push(p);
        }
    }
    let rules = (0..24)
        .step_by(2)
        .map(|i| Rule::parse(&format!("jobs/j{i:02}/"), "user:bob", "none").unwrap())
        .collect();
    f.studio("user:admin")
        .put_permission_rules(rules)
        .await
        .unwrap();
    for limit in [1, 2, 5] {
        let (walked, _) = walk(f.bob.as_ref(), ArtifactQuery::page(limit)).await;
        assert_eq!(walked, shown, "pages of {limit}");
    }
    let found = f
        .bob
        .artifact_page(ArtifactQuery {
            text: Some("cut".into()),
            ..ArtifactQuery::page(3)
        })
        .await
        .unwrap();
    let paths: Vec<_> = found.artifacts.iter().map(|a| a.path.to_string()).collect();
    assert_eq!(paths, shown[..3]);
    assert_eq!(found.next.as_deref(), Some(shown[2].as_str()));
}

async fn a_hidden_folder_is_walked_past_under_every_spelling(f: Fixture) {
    // One folder key, three spellings of its path, one of them with a
    // folder beneath it that bob may read; beside them, paths that sort
    // among them but lie outside the folder.
    for p in [
        "Finance/a.psd",
        "finance/b.psd",
        "FINANCE/sub/c.psd",
        "finance/open/d.psd",
        "finance.psd",
        "financeX/e.psd",
        "brand/x.psd",
        "zz/y.psd",
    ] {
        f.import(p, p.as_bytes()).await;
    }
    let admin = f.studio("user:admin");
    let rule = |folder: &str, level: &str| Rule::parse(folder, "user:bob", level).unwrap();
    admin
        .put_permission_rules(vec![
            rule("finance/", "none"),
            rule("finance/open/", "read"),
        ])
        .await
        .unwrap();
    let shown = [
        "brand/x.psd",
        "finance.psd",
        "finance/open/d.psd",
        "financeX/e.psd",
        "zz/y.psd",
    ];
    for limit in [1, 2, 10] {
        let (walked, _) = walk(f.bob.as_ref(), ArtifactQuery::page(limit)).await;
        assert_eq!(walked, shown, "pages of {limit}");
        let search = ArtifactQuery {
            text: Some("psd".into()),
            ..ArtifactQuery::page(limit)
        };
        let (found, _) = walk(f.bob.as_ref(), search).await;
        assert_eq!(found, shown, "search by pages of {limit}");
    }
    let under = ArtifactQuery {
        prefix: Some("finance/".into()),
        ..query()
    };
    let (walked, _) = walk(f.bob.as_ref(), under).await;
    assert_eq!(walked, ["finance/open/d.psd"]);
    for hidden in ["Finance/", "FINANCE/sub/"] {
        let under = ArtifactQuery {
            prefix: Some(hidden.into()),
            ..query()
        };
        assert_eq!(walk(f.bob.as_ref(), under).await.0, Vec::<String>::new());
        let listed = f.bob.folders(hidden).await.unwrap();
        assert_eq!((listed.folders.len(), listed.files), (0, 0), "{hidden}");
    }
    // The whole store hidden from bob but one folder.
    admin
        .put_permission_rules(vec![rule("", "none"), rule("brand/", "write")])
        .await
        .unwrap();
    let (walked, _) = walk(f.bob.as_ref(), query()).await;
    assert_eq!(walked, ["brand/x.psd"]);
    let all = f.bob.artifact_page(ArtifactQuery::default()).await.unwrap();
    assert_eq!(all.artifacts.len(), 1);
}

async fn a_query_out_of_bounds_is_invalid(f: Fixture) {
    import_all(&f).await;
    let bad = [
        ArtifactQuery::page(0),
        ArtifactQuery::page(MAX_PAGE + 1),
        ArtifactQuery {
            text: Some("h".into()),
            ..query()
        },
        ArtifactQuery {
            text: Some("h".repeat(201)),
            ..query()
        },
        ArtifactQuery {
            prefix: Some("brand".into()),
            ..query()
        },
    ];
    for q in bad {
        match f.alice.artifact_page(q.clone()).await {
            Err(Error::Invalid(_)) => {}
            other => panic!("{q:?}: {other:?}"),
        }
    }
    assert!(matches!(
        f.alice.folders("brand").await,
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        f.alice.folders("../").await,
        Err(Error::Invalid(_))
    ));
    // 200 characters are a search (that finds nothing).
    let long = ArtifactQuery {
        text: Some("é".repeat(200)),
        ..query()
    };
    assert!(f
        .alice
        .artifact_page(long)
        .await
        .unwrap()
        .artifacts
        .is_empty());
}

crate::contract!(
    pages_walk_every_file_once_in_path_order,
    after_a_path_that_does_not_exist_pages_from_the_next,
    a_folder_a_search_and_held_narrow_the_list_together,
    folders_count_files_and_held_files_at_every_depth,
    what_a_caller_may_not_read_is_neither_listed_nor_counted,
    many_hidden_folders_are_left_out_of_every_page,
    a_hidden_folder_is_walked_past_under_every_spelling,
    a_query_out_of_bounds_is_invalid,
);

/// A folder's counts: the files below it, and how many of those are held.
fn count(path: &str, files: u64, held: u64) -> FolderCount {
    FolderCount {
        path: path.into(),
        files,
        held,
    }
}

/// A folder's listing: its `folders` (path, files, held) and `files` of
/// its own.
fn listing(folders: &[(&str, u64, u64)], files: u64) -> FolderList {
    let folders = folders.iter().map(|&(p, n, held)| count(p, n, held));
    FolderList {
        folders: folders.collect(),
        files,
    }
}
