//! The primitive against every way out: absolute links, `..` links,
//! linked parents, a link as the last component, magic links, loops; each
//! operation, under both resolvers, which must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use expect_test::expect;
use pretty_assertions::assert_eq;
use rein_fsroot::{Committed, Links, Reason, Resolver, Root, refusal};
use tempfile::TempDir;

/// A workspace and a folder outside it, with links of every kind.
struct Fixture {
    _dir: TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let dir = TempDir::new().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    fs::create_dir_all(ws.join("sub")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "secret").unwrap();
    fs::write(ws.join("a.txt"), "a").unwrap();
    fs::write(ws.join("sub/b.txt"), "b").unwrap();
    let links: &[(&str, String)] = &[
        ("file-link", "sub/b.txt".into()),
        ("dir-link", "sub".into()),
        ("sub/back", "../a.txt".into()),
        ("sub/up-dir", "..".into()),
        ("dot", ".".into()),
        ("up", "../outside".into()),
        ("sub/climb", "../../outside/secret.txt".into()),
        ("abs", outside.display().to_string()),
        ("abs-file", outside.join("secret.txt").display().to_string()),
        ("inside-abs", ws.join("a.txt").display().to_string()),
        ("proc", "/proc/self/root".into()),
        ("loop1", "loop2".into()),
        ("loop2", "loop1".into()),
        ("dangling", "nowhere.txt".into()),
        ("chain", "dir-link/climb".into()),
    ];
    for (name, target) in links {
        symlink(target, ws.join(name)).unwrap();
    }
    Fixture {
        _dir: dir,
        ws,
        outside,
    }
}

/// What an operation came to, in one line.
fn outcome<T: std::fmt::Debug>(result: std::io::Result<T>) -> String {
    match result {
        Ok(value) => format!("ok {value:?}"),
        Err(e) => match refusal(&e) {
            Some(refused) => format!("refused: {refused}"),
            None => format!("error: {:?}", e.kind()),
        },
    }
}

fn read(root: &Root, rel: &str) -> String {
    outcome(root.read_to_string(rel))
}

/// Every case, under `resolver`, one line each.
fn table(resolver: Resolver) -> String {
    let f = fixture();
    let root = Root::open(&f.ws, Links::Within)
        .unwrap()
        .with_resolver(resolver);
    let mut lines = Vec::new();
    let mut line = |what: &str, result: String| lines.push(format!("{what:<34} {result}"));
    for rel in [
        "a.txt",
        "file-link",
        "dir-link/b.txt",
        "sub/back",
        "sub/up-dir/a.txt",
        "dot/a.txt",
        "up/secret.txt",
        "sub/climb",
        "abs/secret.txt",
        "abs-file",
        "inside-abs",
        "proc/etc/hostname",
        "loop1",
        "dangling",
        "chain",
        "dir-link/climb",
        "../outside/secret.txt",
        "/etc/hostname",
        "missing/x.txt",
        "a.txt/x",
    ] {
        line(&format!("read {rel}"), read(&root, rel));
    }
    for rel in [
        "new.txt",
        "sub/deeper/new.txt",
        "dir-link/via-link.txt",
        "up/planted.txt",
        "abs/planted.txt",
        "sub/climb",
        "abs-file",
        "file-link",
        "dangling",
        "a.txt/x",
    ] {
        line(
            &format!("replace {rel}"),
            outcome(root.replace(rel, b"new", None)),
        );
    }
    for rel in [
        "made.txt",
        "a.txt",
        "up/planted.txt",
        "abs/x/y.txt",
        "dangling",
        "dir-link/made.txt",
    ] {
        line(
            &format!("create_new {rel}"),
            outcome(root.create_new(rel, b"new", None)),
        );
    }
    for rel in ["log.txt", "abs-file", "file-link", "up/log.txt"] {
        line(
            &format!("append {rel}"),
            outcome(root.append(rel).map(drop)),
        );
        line(
            &format!("create {rel}"),
            outcome(root.create(rel).map(drop)),
        );
    }
    for rel in ["up", "abs-file", "dir-link/back", "dir-link/gone"] {
        line(
            &format!("remove_file {rel}"),
            outcome(root.remove_file(rel)),
        );
    }
    for (from, to) in [("made.txt", "renamed.txt"), ("renamed.txt", "abs/x.txt")] {
        line(
            &format!("rename {from} {to}"),
            outcome(root.rename(from, to)),
        );
    }
    for rel in ["sub", "dir-link", "up", "abs"] {
        line(
            &format!("dir {rel}"),
            outcome(root.dir(rel, false).map(drop)),
        );
    }
    line(
        "symlink_metadata abs",
        outcome(
            root.symlink_metadata("abs")
                .map(|m| m.file_type().is_symlink()),
        ),
    );
    line(
        "metadata abs",
        outcome(root.metadata("abs").map(|m| m.is_dir())),
    );
    // The state after it all: nothing outside changed.
    let mut outside: Vec<String> = fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    lines.push(format!("outside holds {outside:?}"));
    lines.push(format!(
        "secret.txt holds {:?}",
        fs::read_to_string(f.outside.join("secret.txt")).unwrap()
    ));
    lines.push(format!(
        "a.txt holds {:?}",
        fs::read_to_string(f.ws.join("a.txt")).unwrap()
    ));
    lines.push(format!(
        "sub/b.txt holds {:?}, a link still: {}",
        fs::read_to_string(f.ws.join("sub/b.txt")).unwrap(),
        fs::symlink_metadata(f.ws.join("file-link"))
            .unwrap()
            .file_type()
            .is_symlink()
    ));
    let mut all = lines.join("\n");
    all.push('\n');
    all.replace(&f.outside.display().to_string(), "$OUTSIDE")
}

#[test]
fn every_way_out_is_refused_and_every_way_within_works() {
    let kernel = table(Resolver::Kernel);
    expect![[r#"
        read a.txt                         ok "a"
        read file-link                     ok "b"
        read dir-link/b.txt                ok "b"
        read sub/back                      ok "a"
        read sub/up-dir/a.txt              ok "a"
        read dot/a.txt                     ok "a"
        read up/secret.txt                 refused: up is a symbolic link to a place outside the workspace; Rein does not read through it
        read sub/climb                     refused: sub/climb is a symbolic link to a place outside the workspace; Rein does not read through it
        read abs/secret.txt                refused: abs is a symbolic link to a place outside the workspace; Rein does not read through it
        read abs-file                      refused: abs-file is a symbolic link to a place outside the workspace; Rein does not read through it
        read inside-abs                    refused: inside-abs is a symbolic link to a place outside the workspace; Rein does not read through it
        read proc/etc/hostname             refused: proc is a symbolic link to a place outside the workspace; Rein does not read through it
        read loop1                         error: FilesystemLoop
        read dangling                      error: NotFound
        read chain                         refused: sub/climb is a symbolic link to a place outside the workspace; Rein does not read through it
        read dir-link/climb                refused: sub/climb is a symbolic link to a place outside the workspace; Rein does not read through it
        read ../outside/secret.txt         refused: ../outside/secret.txt: not a path inside the folder; use a relative path without `..`
        read /etc/hostname                 refused: /etc/hostname: not a path inside the folder; use a relative path without `..`
        read missing/x.txt                 error: NotFound
        read a.txt/x                       error: NotADirectory
        replace new.txt                    ok ()
        replace sub/deeper/new.txt         ok ()
        replace dir-link/via-link.txt      ok ()
        replace up/planted.txt             refused: up is a symbolic link to a place outside the workspace; Rein does not write through it
        replace abs/planted.txt            refused: abs is a symbolic link to a place outside the workspace; Rein does not write through it
        replace sub/climb                  refused: sub/climb is a symbolic link to a place outside the workspace; Rein does not write through it
        replace abs-file                   refused: abs-file is a symbolic link to a place outside the workspace; Rein does not write through it
        replace file-link                  ok ()
        replace dangling                   ok ()
        replace a.txt/x                    error: NotADirectory
        create_new made.txt                ok ()
        create_new a.txt                   error: AlreadyExists
        create_new up/planted.txt          refused: up is a symbolic link to a place outside the workspace; Rein does not write through it
        create_new abs/x/y.txt             refused: abs is a symbolic link to a place outside the workspace; Rein does not write through it
        create_new dangling                error: AlreadyExists
        create_new dir-link/made.txt       ok ()
        append log.txt                     ok ()
        create log.txt                     ok ()
        append abs-file                    refused: abs-file is a symbolic link; Rein does not write through it
        create abs-file                    refused: abs-file is a symbolic link; Rein does not write through it
        append file-link                   refused: file-link is a symbolic link; Rein does not write through it
        create file-link                   refused: file-link is a symbolic link; Rein does not write through it
        append up/log.txt                  refused: up is a symbolic link to a place outside the workspace; Rein does not write through it
        create up/log.txt                  refused: up is a symbolic link to a place outside the workspace; Rein does not write through it
        remove_file up                     ok ()
        remove_file abs-file               ok ()
        remove_file dir-link/back          ok ()
        remove_file dir-link/gone          error: NotFound
        rename made.txt renamed.txt        ok ()
        rename renamed.txt abs/x.txt       refused: abs is a symbolic link to a place outside the workspace; Rein does not write through it
        dir sub                            ok ()
        dir dir-link                       ok ()
        dir up                             error: NotFound
        dir abs                            refused: abs is a symbolic link to a place outside the workspace; Rein does not read through it
        symlink_metadata abs               ok true
        metadata abs                       refused: abs is a symbolic link to a place outside the workspace; Rein does not read through it
        outside holds ["secret.txt"]
        secret.txt holds "secret"
        a.txt holds "a"
        sub/b.txt holds "new", a link still: true
    "#]]
    .assert_eq(&kernel);
    assert_eq!(
        table(Resolver::Walk),
        kernel,
        "the walk and the kernel agree"
    );
}

/// Rein's own folders follow no link at all, even one that stays inside.
#[test]
fn a_root_that_refuses_links_refuses_every_one() {
    for resolver in [Resolver::Kernel, Resolver::Walk] {
        let f = fixture();
        let root = Root::open(&f.ws, Links::Refuse)
            .unwrap()
            .with_resolver(resolver)
            .with_hint("remove it");
        let lines: Vec<String> = [
            outcome(root.read_to_string("file-link")),
            outcome(root.read_to_string("dir-link/b.txt")),
            outcome(root.replace("file-link", b"x", None)),
            outcome(root.append("dir-link/log.txt").map(drop)),
            outcome(root.read_to_string("sub/b.txt")),
        ]
        .into();
        expect![[r#"
            refused: file-link is a symbolic link; Rein does not read through it (remove it)
            refused: dir-link is a symbolic link; Rein does not read through it (remove it)
            refused: file-link is a symbolic link; Rein does not write through it (remove it)
            refused: dir-link is a symbolic link; Rein does not write through it (remove it)
            ok "b""#]]
        .assert_eq(&lines.join("\n"));
        // A folder beneath names its paths from the first root.
        let state = root.dir("sub", false).unwrap();
        let error = state.replace("back", b"x", None).unwrap_err();
        assert_eq!(
            refusal(&error).map(|r| (r.path.as_str(), r.reason)),
            Some(("sub/back", Reason::Link)),
            "{resolver:?}"
        );
    }
}

/// The kernel's magic links: `/proc/self/root` is `/` whatever the path
/// says; a root in `/proc/self` must not reach through it.
#[test]
fn magic_links_are_never_followed() {
    for resolver in [Resolver::Kernel, Resolver::Walk] {
        let root = Root::open("/proc/self", Links::Within)
            .unwrap()
            .with_resolver(resolver);
        for rel in ["root/etc/hostname", "cwd", "exe", "fd/0"] {
            let result = root.read(rel);
            let refused = result.as_ref().err().and_then(refusal);
            assert!(
                refused.is_some_and(|r| r.reason == Reason::LinkOutside),
                "{resolver:?} {rel}: {:?}",
                result.map(|b| b.len())
            );
        }
        // What is really beneath is read.
        assert!(root.read("status").is_ok(), "{resolver:?}");
    }
}

/// The folder is swapped for a link to the outside after Rein resolved
/// it, right before the rename: the file lands in the folder Rein
/// resolved (now moved aside), never outside.
#[test]
fn a_folder_swapped_mid_write_takes_the_write_with_it() {
    for resolver in [Resolver::Kernel, Resolver::Walk] {
        let f = fixture();
        fs::create_dir(f.ws.join("d")).unwrap();
        fs::write(f.ws.join("d/config.toml"), "mode = \"ask\"\n").unwrap();
        let root = Root::open(&f.ws, Links::Within)
            .unwrap()
            .with_resolver(resolver);
        let swap = || {
            fs::rename(f.ws.join("d"), f.ws.join("d.real")).unwrap();
            symlink(&f.outside, f.ws.join("d")).unwrap();
            fs::write(f.outside.join("config.toml"), "mode = \"ask\"\n").unwrap();
        };
        let done = root
            .replace_if("d/config.toml", b"mode = \"off\"\n", |_| {
                swap();
                None::<()>
            })
            .unwrap();
        assert_eq!(done, Committed::Written);
        assert_eq!(
            fs::read_to_string(f.outside.join("config.toml")).unwrap(),
            "mode = \"ask\"\n",
            "{resolver:?}"
        );
        assert_eq!(
            fs::read_to_string(f.ws.join("d.real/config.toml")).unwrap(),
            "mode = \"off\"\n"
        );
        // And the next write sees the link.
        let error = root.replace("d/config.toml", b"x", None).unwrap_err();
        assert!(refusal(&error).is_some(), "{error}");
        assert_eq!(names(&f.ws.join("d.real")), ["config.toml"]);
    }
}

#[test]
fn replacing_keeps_permissions_and_leaves_no_temporary_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("run.sh"), "old").unwrap();
    fs::set_permissions(dir.path().join("run.sh"), fs::Permissions::from_mode(0o750)).unwrap();
    let root = Root::open(dir.path(), Links::Within).unwrap();
    root.replace("run.sh", b"new", None).unwrap();
    let mode = fs::metadata(dir.path().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750);
    root.replace("secret.json", b"{}", Some(0o600)).unwrap();
    let mode = fs::metadata(dir.path().join("secret.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let declined = root
        .replace_if("run.sh", b"newer", |now| (now == b"new").then_some("same"))
        .unwrap();
    assert_eq!(declined, Committed::Declined("same"));
    assert_eq!(
        fs::read_to_string(dir.path().join("run.sh")).unwrap(),
        "new"
    );
    assert_eq!(names(dir.path()), ["run.sh", "secret.json"]);
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The kernel's resolver is the one used wherever `openat2` answers (so
/// the cases above test it, not the walk twice).
#[test]
fn openat2_is_used_where_the_kernel_has_it() {
    let dir = TempDir::new().unwrap();
    let has_openat2 = rustix::fs::openat2(
        rustix::fs::CWD,
        dir.path(),
        rustix::fs::OFlags::PATH,
        rustix::fs::Mode::empty(),
        rustix::fs::ResolveFlags::empty(),
    )
    .is_ok();
    let root = Root::open(dir.path(), Links::Within).unwrap();
    let expected = if has_openat2 {
        Resolver::Kernel
    } else {
        Resolver::Walk
    };
    assert_eq!(root.resolver(), expected);
    assert_eq!(
        root.with_resolver(Resolver::Walk).resolver(),
        Resolver::Walk
    );
}
