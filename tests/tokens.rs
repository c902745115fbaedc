//! Bearer tokens: shown once, kept hashed, revocable.

use leasedesk::Error;

use crate::harness::*;

#[tokio::test]
async fn a_token_names_its_participant_until_revoked() {
    let f = fixture();
    let token = f.add_carol();
    assert_eq!(
        f.store.authenticate(&token).await.unwrap(),
        participant("user:carol")
    );
    let second = f.store.new_token(&participant("user:carol")).unwrap();
    assert_ne!(second, token);
    assert_eq!(
        f.store.authenticate(&second).await.unwrap(),
        participant("user:carol")
    );

    assert_eq!(
        f.store.revoke_tokens(&participant("user:carol")).unwrap(),
        2
    );
    for revoked in [&token, &second] {
        assert!(matches!(
            f.store.authenticate(revoked).await,
            Err(Error::Unauthorized(_))
        ));
    }
    let unknown = f.store.revoke_tokens(&participant("user:nobody"));
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");
}

#[tokio::test]
async fn wrong_and_malformed_tokens_are_unauthorized() {
    let f = fixture();
    let token = f.add_carol();
    // Same id, another secret: found by id, refused by the hash.
    let mut forged = token.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == '0' { '1' } else { '0' });
    for bad in [
        forged.as_str(),
        "",
        "ld_",
        "Bearer x",
        "ld_zz_zz",
        &token[..token.len() - 1],
    ] {
        let refused = f.store.authenticate(bad).await;
        assert!(
            matches!(refused, Err(Error::Unauthorized(_))),
            "{bad:?}: {refused:?}"
        );
    }
}

#[tokio::test]
async fn tokens_are_stored_only_as_hashes() {
    let f = fixture();
    let token = f.add_carol();
    drop(f.store);
    let database = std::fs::read(f.dir.path().join("leasedesk.db")).unwrap();
    let wal = std::fs::read(f.dir.path().join("leasedesk.db-wal")).unwrap_or_default();
    let secret = token.rsplit('_').next().unwrap().as_bytes();
    for (name, bytes) in [("database", &database), ("log", &wal)] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret),
            "the {name} holds the token's secret"
        );
    }
}
