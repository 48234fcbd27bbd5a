//! The release files: a scratch image of one static binary, a LICENSE that matches
//! Cargo.toml, install lines that put each file where its tool looks (the completions
//! themselves are exercised in `tests/completions.rs`).

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

/// The air-gap install lines of docs/deployment.md, run as written on the archive's files
/// with every destination under a fresh root: they work on a system that has none of the
/// directories yet (`install -D`), and each file lands where its tool looks by default —
/// `man` finds the page, zsh's default `fpath`, fish's configuration directory and the
/// bash-completion directory hold the completions, and each shell loads its file from there.
#[test]
fn the_install_lines_work_on_a_bare_system_and_each_tool_finds_its_file() {
    let page = read("docs/deployment.md");
    let block = page
        .split("```sh\n")
        .map(|b| b.split("```").next().unwrap_or(""))
        .find(|b| b.contains("install -D -m 0644 agenthealth.1"))
        .expect("docs/deployment.md shows the install lines");
    let dir = TempDir::new("deploy-install");
    let (unpacked, root) = (dir.0.join("unpacked"), dir.0.join("root"));
    std::fs::create_dir_all(unpacked.join("completions")).expect("unpacked/");
    std::fs::copy(crate::util::bin(), unpacked.join("agenthealth")).expect("the binary");
    std::fs::write(
        unpacked.join("agenthealth.1"),
        agenthealth::reference::man_page(),
    )
    .expect("the man page");
    for (shell, file) in [
        (agenthealth::reference::Shell::Bash, "agenthealth.bash"),
        (agenthealth::reference::Shell::Zsh, "_agenthealth"),
        (agenthealth::reference::Shell::Fish, "agenthealth.fish"),
    ] {
        std::fs::write(
            unpacked.join("completions").join(file),
            agenthealth::reference::completion(shell),
        )
        .expect("a completion");
    }
    let mut installed = Vec::new();
    for line in block.lines().filter(|l| l.starts_with("install ")) {
        let (args, dest) = line.rsplit_once(' ').expect("install … DEST");
        assert!(dest.starts_with('/'), "{line}: an absolute destination");
        let under = root.join(&dest[1..]);
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{args} '{}'", under.display()))
            .current_dir(&unpacked)
            .status()
            .expect("sh");
        assert!(status.success(), "{line}");
        installed.push(dest.to_string());
    }
    let expect = [
        "/usr/local/bin/agenthealth",
        "/usr/local/share/man/man1/agenthealth.1",
        "/usr/share/bash-completion/completions/agenthealth",
        "/usr/local/share/zsh/site-functions/_agenthealth",
        "/etc/fish/completions/agenthealth.fish",
    ];
    assert_eq!(installed, expect);
    let mode = |p: &str| {
        std::fs::metadata(root.join(&p[1..]))
            .expect(p)
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(expect[0]), 0o755);
    assert!(expect[1..].iter().all(|p| mode(p) == 0o644));
    let sh = |program: &str, script: &str| {
        let out = Command::new(program)
            .args(["-c", script])
            .env("ROOT", &root)
            .output()
            .unwrap_or_else(|e| panic!("{program} ({e}): .ci/run installs man-db, zsh and fish"));
        assert!(
            out.status.success(),
            "{program} -c {script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // man-db searches /usr/local/share/man, and finds the page there.
    assert!(
        sh("sh", "env -u MANPATH manpath")
            .split(':')
            .any(|d| d.trim() == "/usr/local/share/man")
    );
    let found = sh(
        "sh",
        "MANPATH=\"$ROOT/usr/local/share/man\" man -w agenthealth",
    );
    assert_eq!(
        found.trim(),
        root.join(&expect[1][1..]).display().to_string()
    );
    // zsh's default fpath, and compinit registers the function found there.
    let zsh = "print -l $fpath; fpath=($ROOT/usr/local/share/zsh/site-functions $fpath); \
               autoload -Uz compinit; compinit -u -D; print ${_comps[agenthealth]}";
    let zsh = sh("zsh", &format!("emulate zsh; {zsh}"));
    assert!(
        zsh.lines()
            .any(|l| l == "/usr/local/share/zsh/site-functions"),
        "{zsh}"
    );
    assert_eq!(zsh.lines().last(), Some("_agenthealth"));
    // fish reads its configuration directory's completions (`$__fish_sysconf_dir` is
    // /etc/fish) for a command on PATH: the installed one.
    let fish = "echo $__fish_sysconf_dir; set fish_complete_path $ROOT/etc/fish/completions; \
                set -p PATH $ROOT/usr/local/bin; complete --do-complete 'agenthealth vali'";
    assert_eq!(
        sh("fish", fish).lines().take(2).collect::<Vec<_>>()[0],
        "/etc/fish"
    );
    assert!(sh("fish", fish).contains("validate"));
    let bash = sh(
        "bash",
        "source \"$ROOT/usr/share/bash-completion/completions/agenthealth\"; complete -p agenthealth",
    );
    assert!(bash.contains("_agenthealth"), "{bash}");
}
