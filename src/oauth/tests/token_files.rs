//! Token files: private, written atomically, bound to issuer, resource and client, and locked.

use super::*;

/// A token file written for `fake` in a fresh scratch directory `name`, two directories
/// down: the fake, the directory, the file and its binding.
fn written(name: &str) -> (Fake, PathBuf, PathBuf, Binding) {
    let fake = Fake::start(good);
    let dir = scratch(name);
    let path = dir.join("new/sub/token.json");
    let b = binding(&fake);
    store::write(&path, &token("a1", Some("r1"), 60), &b).expect("write");
    (fake, dir, path, b)
}

#[test]
fn a_token_file_is_written_private_and_whole_and_read_back() {
    let (_fake, dir, path, b) = written("files");
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.join("new")), 0o700);
    assert_eq!(mode(&dir.join("new/sub")), 0o700);
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("new/sub"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    let secrets = SecretLog::new();
    let read = store::read(&path, &b, &secrets)
        .expect("read")
        .expect("present");
    assert_eq!(read.access.expose(), "a1");
    assert_eq!(read.refresh.as_ref().map(Secret::expose), Some("r1"));
    assert_eq!(secrets.values().len(), 2);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let doc: Value = serde_json::from_str(&text).unwrap_or_default();
    for key in [
        "access_token",
        "refresh_token",
        "expires_at",
        "issuer",
        "resource",
        "client_id",
        "scope",
    ] {
        assert!(doc.get(key).is_some(), "{key}");
    }
    assert!(text.ends_with('\n'));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_token_file_bound_to_another_issuer_resource_or_client_is_refused() {
    let (fake, dir, path, b) = written("binding");
    let others = [
        Binding {
            issuer: "https://other.example".into(),
            ..b.clone()
        },
        Binding {
            resource: format!("{}/other", fake.root),
            ..b.clone()
        },
        Binding {
            client_id: Some("another-client".into()),
            ..b.clone()
        },
    ];
    for other in &others {
        assert_file(
            store::read(&path, other, &SecretLog::new()),
            TokenFileProblem::Binding,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_token_file_others_may_read_or_a_symlink_to_one_is_refused() {
    let (_fake, dir, path, b) = written("exposed");
    let secrets = SecretLog::new();
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644));
    assert_file(
        store::read(&path, &b, &secrets),
        TokenFileProblem::Permissions,
    );
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    // A symlink to a valid file: refused to read and to write through.
    let link = dir.join("link.json");
    let _ = std::os::unix::fs::symlink(&path, &link);
    assert_file(store::read(&link, &b, &secrets), TokenFileProblem::Symlink);
    let written = store::write(&link, &token("a2", None, 60), &b);
    assert!(matches!(
        written,
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(TokenFileProblem::Symlink),
            ..
        })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_token_file_is_never_written_where_others_may_write() {
    let (_fake, dir, _, b) = written("parent");
    let open = dir.join("open");
    let _ = std::fs::create_dir(&open);
    let _ = std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777));
    let written = store::write(&open.join("t.json"), &token("a3", None, 60), &b);
    assert!(matches!(
        written,
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(TokenFileProblem::ParentWritable),
            ..
        })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_that_is_not_ours_is_malformed_and_a_missing_one_is_none() {
    let (_fake, dir, _, b) = written("junk");
    let secrets = SecretLog::new();
    let junk = dir.join("junk.json");
    let _ = std::fs::write(&junk, "{}");
    let _ = std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o600));
    assert_file(
        store::read(&junk, &b, &secrets),
        TokenFileProblem::Malformed,
    );
    assert!(matches!(
        store::read(&dir.join("missing.json"), &b, &secrets),
        Ok(None)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_held_lock_is_waited_for_until_the_deadline_only() {
    let dir = scratch("lock");
    let path = dir.join("token.json");
    let held = store::lock(&path, std::time::Instant::now() + LONG).expect("lock");
    let started = std::time::Instant::now();
    let second = store::lock(&path, started + Duration::from_millis(200));
    assert!(matches!(
        second,
        Err(OAuthError::Step {
            step: OAuthStep::TokenFile(TokenFileProblem::Locked),
            ..
        })
    ));
    assert!(started.elapsed() < Duration::from_secs(1));
    drop(held);
    assert!(store::lock(&path, std::time::Instant::now() + LONG).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client `login --register` registered is saved with the tokens (its secret only here)
/// and read back; with no client configured, only such a file binds, whatever its id; a
/// configured id still binds to that id alone.
#[test]
fn a_registered_client_is_saved_with_the_tokens_and_binds_when_none_is_configured() {
    use crate::contract::AuthMethod;
    use crate::oauth::registration::Registered;
    let fake = Fake::start(good);
    let dir = scratch("registered");
    let path = dir.join("token.json");
    let unnamed = Binding {
        client_id: None,
        ..binding(&fake)
    };
    let mut t = token("a1", Some("r1"), 60);
    t.registered = Some(Registered {
        client_id: "dyn-7".into(),
        secret: Some(Secret::new("registered-secret-value".into())),
        method: AuthMethod::ClientSecretPost,
        secret_expires_at: Some(0),
        redirect_uri: "http://127.0.0.1:5555/callback".into(),
    });
    store::write(&path, &t, &unnamed).expect("write");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
        .unwrap_or_default();
    assert_eq!(doc["client_id"], "dyn-7");
    assert_eq!(doc["registered"], true);
    assert_eq!(doc["token_endpoint_auth_method"], "client_secret_post");
    assert_eq!(doc["client_secret"], "registered-secret-value");
    let secrets = SecretLog::new();
    let read = store::read(&path, &unnamed, &secrets)
        .expect("read")
        .expect("present");
    assert_eq!(read.registered, t.registered);
    assert!(
        secrets
            .values()
            .iter()
            .any(|s| s.expose() == "registered-secret-value"),
        "the registered secret is recorded for redaction"
    );
    let named = Binding {
        client_id: Some("dyn-7".into()),
        ..binding(&fake)
    };
    assert!(store::read(&path, &named, &secrets).is_ok());
    let other = Binding {
        client_id: Some("someone-else".into()),
        ..binding(&fake)
    };
    assert_eq!(
        step_of(&store::read(&path, &other, &secrets).map(|_| String::new())),
        Some(OAuthStep::TokenFile(TokenFileProblem::Binding))
    );
    // A file of a configured client is no registered client's.
    let plain = dir.join("plain.json");
    store::write(&plain, &token("a2", None, 60), &binding(&fake)).expect("write");
    assert_eq!(
        step_of(&store::read(&plain, &unnamed, &secrets).map(|_| String::new())),
        Some(OAuthStep::TokenFile(TokenFileProblem::Binding))
    );
    let _ = std::fs::remove_dir_all(&dir);
}
