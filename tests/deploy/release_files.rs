//! The release files: a scratch image of one static binary, a LICENSE that matches
//! Cargo.toml, completions that complete.

use super::*;

#[test]
fn the_image_is_one_static_binary_in_scratch_as_65532() {
    let dockerfile = read("Dockerfile");
    let instructions: Vec<&str> = dockerfile
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.starts_with(' '))
        .collect();
    let stages: Vec<&&str> = instructions
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert!(stages.len() >= 2, "multi-stage: {stages:?}");
    assert_eq!(**stages.last().expect("a stage"), "FROM scratch");
    let last = instructions
        .iter()
        .position(|l| *l == "FROM scratch")
        .expect("the final stage");
    let final_stage = &instructions[last..];
    assert!(final_stage.contains(&"USER 65532:65532"), "{final_stage:?}");
    assert!(
        final_stage.contains(&r#"ENTRYPOINT ["/usr/local/bin/agenthealth"]"#),
        "{final_stage:?}"
    );
    // What the build copies from its context is in the context (.dockerignore lets it in).
    let ignore = read(".dockerignore");
    let allowed: Vec<&str> = ignore
        .lines()
        .filter_map(|l| l.strip_prefix('!'))
        .map(|l| l.trim_end_matches('/'))
        .collect();
    for dockerfile in [
        "Dockerfile",
        "deploy/docker/stdio.Dockerfile",
        "deploy/docker/app.Dockerfile",
    ] {
        for line in read(dockerfile)
            .lines()
            .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
        {
            let parts: Vec<&str> = line.split_whitespace().collect();
            for source in &parts[1..parts.len() - 1] {
                assert!(
                    Path::new(ROOT).join(source).exists(),
                    "{dockerfile}: {source}"
                );
                assert!(
                    allowed.contains(source),
                    "{dockerfile}: .dockerignore keeps out {source}"
                );
            }
        }
    }
    for derived in [
        "deploy/docker/stdio.Dockerfile",
        "deploy/docker/app.Dockerfile",
    ] {
        assert!(
            read(derived).contains(
                "COPY --from=agenthealth /usr/local/bin/agenthealth /usr/local/bin/agenthealth\n"
            ),
            "{derived} copies the binary from the image"
        );
    }
}

#[test]
fn the_license_is_the_one_cargo_toml_declares() {
    let cargo = read("Cargo.toml");
    assert!(
        cargo.contains("\nlicense = \"Apache-2.0\"\n"),
        "Cargo.toml's license"
    );
    let license = read("LICENSE");
    assert!(
        license
            .trim_start()
            .starts_with("Apache License\n                           Version 2.0, January 2004")
    );
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
}

#[test]
fn bash_completes_verbs_flags_and_values() {
    let script = agenthealth::reference::completion(agenthealth::reference::Shell::Bash);
    let dir = TempDir::new("deploy-bash");
    let file = dir.file("agenthealth.bash", &script);
    let complete = |words: &[&str]| {
        let words = words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ");
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _agenthealth; echo \"${{COMPREPLY[*]}}\"",
                file.display()
            ))
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(complete(&["agenthealth", "se"]), "serve");
    assert_eq!(complete(&["agenthealth", "serve", "--l"]), "--listen");
    assert_eq!(
        complete(&["agenthealth", "check", "--format", "o"]),
        "openmetrics"
    );
    assert_eq!(complete(&["agenthealth", "ping", "--st"]), "--stdio");
    assert_eq!(
        complete(&["agenthealth", "check", "--st"]),
        "",
        "--stdio is ping's and doctor's"
    );
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&file)
        .status()
        .expect("bash -n");
    assert!(syntax.success());
}
