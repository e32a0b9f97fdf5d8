//! `DiskWorkspace` against real directories: reads, listings, searches,
//! edits and new files, including the races the atomic write guards against.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use expect_test::expect;
use pretty_assertions::assert_eq;
use rein_core::os::disk::{ConfirmChange, DiskWorkspace, MAX_HIT_CHARS, Resolver};
use rein_core::{
    CreateRequest, EditOutcome, EditRequest, ReadVersion, SearchHit, Workspace, WorkspaceError,
};
use tempfile::TempDir;

fn put(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn tree(files: &[(&str, &str)]) -> (TempDir, DiskWorkspace) {
    let dir = tempfile::tempdir().unwrap();
    for (rel, content) in files {
        put(dir.path(), rel, content);
    }
    let ws = DiskWorkspace::new(dir.path()).unwrap();
    (dir, ws)
}

fn edit(path: &str, base: &ReadVersion, old: &str, new: &str) -> EditRequest {
    EditRequest {
        label: "Rein: test".into(),
        description: "a test edit".into(),
        reason: String::new(),
        path: path.into(),
        base: base.clone(),
        old_text: old.into(),
        new_text: new.into(),
        replace_all: false,
        needs_confirmation: false,
    }
}

fn create(path: &str, content: &str) -> CreateRequest {
    CreateRequest {
        label: "Rein: test".into(),
        description: "a new file".into(),
        reason: String::new(),
        path: path.into(),
        content: content.into(),
        needs_confirmation: false,
    }
}

fn err_text<T: std::fmt::Debug>(r: Result<T, WorkspaceError>) -> String {
    r.unwrap_err().to_string()
}

const CART: &str = "\
class Cart:
    def __init__(self):
        self.items = []

    def total(self):
        total = 0
        for item in self.items:
            total += item.price
        return total
";

// ---------------------------------------------------------------- new

#[test]
fn the_root_must_be_an_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "f", "x");
    assert!(matches!(
        DiskWorkspace::new(dir.path().join("missing")),
        Err(WorkspaceError::NotFound { .. })
    ));
    assert!(matches!(
        DiskWorkspace::new(dir.path().join("f")),
        Err(WorkspaceError::Io { .. })
    ));
    let ws = DiskWorkspace::new(dir.path().join(".")).unwrap();
    assert_eq!(ws.root(), dir.path().canonicalize().unwrap());
}

// ---------------------------------------------------------------- read_file

#[tokio::test]
async fn reads_text_with_its_disk_version() {
    let (_dir, ws) = tree(&[("src/cart.py", CART)]);
    let read = ws.read_file("src/cart.py").await.unwrap();
    assert_eq!(read.path, "src/cart.py");
    assert_eq!(read.text, CART);
    assert_eq!(read.version, ReadVersion::of_disk(CART));
    assert_eq!(read.version.buffer_version, None);
    // `./` and doubled slashes are normalized.
    let read = ws.read_file("./src//cart.py").await.unwrap();
    assert_eq!(read.path, "src/cart.py");
}

#[tokio::test]
async fn a_missing_file_comes_with_suggestions() {
    let (_dir, ws) = tree(&[
        ("cart.py", ""),
        ("tests/test_cart.py", ""),
        ("src/shop/cart.py", ""),
        ("src/shop/catalog.py", ""),
        ("README.md", ""),
        ("ignored/carts.py", ""),
        (".gitignore", "ignored/\n"),
    ]);
    let cases = [
        (
            "carts.py",
            expect!["carts.py not found; did you mean one of cart.py, src/shop/cart.py?"],
        ),
        (
            "test_cart.py",
            expect!["test_cart.py not found; did you mean tests/test_cart.py?"],
        ),
        (
            "lib/cart.py",
            expect!["lib/cart.py not found; did you mean one of cart.py, src/shop/cart.py?"],
        ),
        (
            "src/cart.py",
            expect!["src/cart.py not found; did you mean one of src/shop/cart.py, cart.py?"],
        ),
        (
            "src/shop/cart",
            expect!["src/shop/cart not found; did you mean one of src/shop/cart.py, cart.py?"],
        ),
        (
            "Cart.py",
            expect!["Cart.py not found; did you mean one of cart.py, src/shop/cart.py?"],
        ),
        (
            "nothing/like/it.rs",
            expect!["nothing/like/it.rs not found"],
        ),
        // A missing directory on the way is just "not found".
        (
            "README.md/x",
            expect!["README.md/x not found; did you mean README.md?"],
        ),
    ];
    for (path, expected) in cases {
        expected.assert_eq(&err_text(ws.read_file(path).await));
    }
}

#[tokio::test]
async fn directories_binary_files_and_large_files_are_not_read() {
    let (dir, ws) = tree(&[("src/a.py", "x = 1\n"), ("big.txt", &"x".repeat(100))]);
    put(dir.path(), "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    put(dir.path(), "latin1.txt", b"caf\xe9\n");
    put(
        dir.path(),
        "late_nul.txt",
        format!("{}\0", "a".repeat(9000)),
    );

    expect!["src is a directory, not a file"].assert_eq(&err_text(ws.read_file("src").await));
    expect![". is a directory, not a file"].assert_eq(&err_text(ws.read_file(".").await));
    expect!["logo.png is not text (binary or not UTF-8)"]
        .assert_eq(&err_text(ws.read_file("logo.png").await));
    expect!["latin1.txt is not text (binary or not UTF-8)"]
        .assert_eq(&err_text(ws.read_file("latin1.txt").await));
    // A NUL past the first 8 KiB is valid UTF-8 text.
    assert!(ws.read_file("late_nul.txt").await.is_ok());

    let ws = ws.with_read_limit(50);
    expect!["big.txt is 100 bytes, over the 50-byte limit for reading at once; read a line range"]
        .assert_eq(&err_text(ws.read_file("big.txt").await));
    assert!(ws.read_file("src/a.py").await.is_ok());
}

#[tokio::test]
async fn escapes_are_denied() {
    escapes_are_denied_by(Resolver::Kernel).await;
}

/// The same on a kernel without `openat2` (< 5.6): the walk by handles.
#[tokio::test]
async fn escapes_are_denied_without_openat2() {
    escapes_are_denied_by(Resolver::Walk).await;
}

async fn escapes_are_denied_by(resolver: Resolver) {
    let outside = tempfile::tempdir().unwrap();
    put(outside.path(), "secret.txt", "s3cret");
    let (dir, ws) = tree(&[("a.txt", "a"), ("real/cfg.toml", "a = 1\n")]);
    let ws = ws.with_resolver(resolver);
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        dir.path().join("link.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("outdir")).unwrap();
    std::os::unix::fs::symlink("../../outside", dir.path().join("real/up")).unwrap();

    for path in ["/etc/passwd", "../x", "a/../../x"] {
        assert!(
            matches!(ws.read_file(path).await, Err(WorkspaceError::Denied(_))),
            "{path}"
        );
    }
    expect!["link.txt is a symbolic link to a place outside the workspace; Rein does not read through it"]
        .assert_eq(&err_text(ws.read_file("link.txt").await));
    expect![
        "outdir is a symbolic link to a place outside the workspace; Rein does not write through it"
    ]
    .assert_eq(&err_text(
        ws.create_file(create("outdir/new.txt", "x")).await,
    ));
    expect!["real/up is a symbolic link to a place outside the workspace; Rein does not write through it"]
        .assert_eq(&err_text(ws.create_file(create("real/up/new.txt", "x")).await));
    assert!(!outside.path().join("new.txt").exists());
    expect![
        "outdir is a symbolic link to a place outside the workspace; Rein does not read through it"
    ]
    .assert_eq(&err_text(ws.list_files("outdir", None, 10).await));
    assert!(!ws.exists("link.txt").await);
    // Neither listed nor searched from the root.
    let listing = ws.list_files("", None, 10).await.unwrap();
    assert_eq!(listing.paths, vec!["a.txt", "real/cfg.toml"]);
    let found = ws.search("s3cret", "", None, 10).await.unwrap();
    assert_eq!(found.hits, vec![]);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "s3cret"
    );
}

/// Printed by the check below once it has run, so a parent that ran it as
/// `nobody` knows it did not pass by running nothing.
const CHECKED_UNREADABLE: &str = "REIN-CHECKED-AN-UNREADABLE-FILE";

/// Permission bits do not stop root (CI runs as root): there, the test runs
/// itself again as `nobody` (`setpriv`) and passes only if that run made
/// the check. A root that cannot do so fails, saying why, rather than pass
/// having checked nothing.
#[tokio::test]
async fn unreadable_files_are_io_errors_with_the_os_message() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (dir, ws) = tree(&[("locked.txt", "x")]);
    let path = dir.path().join("locked.txt");
    // The file is owned by whoever this process runs as.
    if fs::metadata(&path).unwrap().uid() == 0 {
        return check_as_nobody("unreadable_files_are_io_errors_with_the_os_message");
    }
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    expect!["locked.txt: Permission denied (os error 13)"]
        .assert_eq(&err_text(ws.read_file("locked.txt").await));
    // The workspace's lints deny println!; this marker is all it prints.
    use std::io::Write;
    writeln!(std::io::stdout(), "{CHECKED_UNREADABLE}").unwrap();
}

/// Runs the test `name` of this binary as `nobody` (uid and gid 65534, no
/// supplementary groups) and fails unless it passed having made its check.
fn check_as_nobody(name: &str) {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "running as root, where file permissions do not apply; dropping to nobody \
                 needs setpriv (util-linux), which did not start: {e}"
            )
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(CHECKED_UNREADABLE),
        "the check, run as nobody through setpriv ({}), did not pass:\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn special_files_are_not_read() {
    let (dir, ws) = tree(&[]);
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .is_ok_and(|s| s.success());
    // coreutils' mkfifo is everywhere this runs: without it, fail rather
    // than pass having checked nothing.
    assert!(made, "mkfifo could not make a pipe to test with");
    // Would block forever if opened.
    expect!["pipe: not a regular file (a device, socket or pipe)"]
        .assert_eq(&err_text(ws.read_file("pipe").await));
    // And a listing skips it.
    assert_eq!(
        ws.list_files("", None, 10).await.unwrap().paths,
        Vec::<String>::new()
    );
}

#[test]
fn it_is_a_workspace_object() {
    let (_dir, ws) = tree(&[]);
    let ws: Arc<dyn Workspace> = Arc::new(ws);
    assert!(ws.root().is_absolute());
}

// ---------------------------------------------------------------- list_files

fn listing_tree() -> (TempDir, DiskWorkspace) {
    let (dir, ws) = tree(&[
        (".gitignore", "target/\n*.log\n/build\n"),
        ("Cargo.toml", ""),
        ("src/main.rs", ""),
        ("src/lib.rs", ""),
        ("src/a/deep.rs", ""),
        ("src/build/keep.rs", ""),
        ("src/debug.log", ""),
        ("src/.ignore", "generated.rs\n"),
        ("src/generated.rs", ""),
        ("target/debug/app", ""),
        ("build/out.txt", ""),
        (".env", "SECRET=1"),
        (".github/workflows/ci.yml", ""),
        ("docs/guide.md", ""),
        ("docs/.gitignore", "/drafts\n"),
        ("docs/drafts/wip.md", ""),
        ("a.py", ""),
        ("a/b.py", ""),
        (".git/config", ""),
        (".git/HEAD", ""),
    ]);
    std::os::unix::fs::symlink("missing-target", dir.path().join("broken-link")).unwrap();
    std::os::unix::fs::symlink("Cargo.toml", dir.path().join("manifest-link")).unwrap();
    (dir, ws)
}

#[tokio::test]
async fn lists_respect_ignore_files_and_skip_hidden_and_git() {
    let (_dir, ws) = listing_tree();
    let listing = ws.list_files("", None, 100).await.unwrap();
    assert_eq!(
        listing.paths,
        vec![
            "Cargo.toml",
            "a/b.py",
            "a.py",
            "docs/guide.md",
            "manifest-link",
            "src/a/deep.rs",
            "src/build/keep.rs",
            "src/lib.rs",
            "src/main.rs",
        ]
    );
    assert_eq!(listing.truncated, 0);
}

#[tokio::test]
async fn listing_a_subdirectory_keeps_the_ignore_files_above_it() {
    let (dir, ws) = listing_tree();
    put(dir.path(), "docs/drafts/sub/more.md", "");
    put(dir.path(), "docs/api.log", "");
    let listing = ws.list_files("docs", None, 100).await.unwrap();
    assert_eq!(listing.paths, vec!["docs/guide.md"]);
    let listing = ws.list_files("src/", None, 100).await.unwrap();
    assert_eq!(
        listing.paths,
        vec![
            "src/a/deep.rs",
            "src/build/keep.rs",
            "src/lib.rs",
            "src/main.rs"
        ]
    );
}

#[tokio::test]
async fn ignore_files_count_from_the_git_repository_root() {
    // The workspace is a subdirectory of a repository whose root ignores
    // `*.tmp`: the rule applies; an ignore file above the repository does not.
    let top = tempfile::tempdir().unwrap();
    put(top.path(), ".gitignore", "*.md\n");
    put(top.path(), "repo/.git/HEAD", "");
    put(top.path(), "repo/.gitignore", "*.tmp\n");
    put(top.path(), "repo/pkg/x.tmp", "");
    put(top.path(), "repo/pkg/x.md", "");
    put(top.path(), "repo/pkg/sub/y.tmp", "");
    put(top.path(), "repo/pkg/sub/y.rs", "");
    let ws = DiskWorkspace::new(top.path().join("repo/pkg")).unwrap();
    assert_eq!(
        ws.list_files("", None, 100).await.unwrap().paths,
        vec!["sub/y.rs", "x.md"]
    );
    assert_eq!(
        ws.list_files("sub", None, 100).await.unwrap().paths,
        vec!["sub/y.rs"]
    );

    // Outside git, nothing above the workspace root counts.
    fs::remove_dir_all(top.path().join("repo/.git")).unwrap();
    let ws = DiskWorkspace::new(top.path().join("repo/pkg")).unwrap();
    assert_eq!(
        ws.list_files("", None, 100).await.unwrap().paths,
        vec!["sub/y.rs", "sub/y.tmp", "x.md", "x.tmp"]
    );
}

#[tokio::test]
async fn a_hidden_directory_named_explicitly_is_listed() {
    let (_dir, ws) = listing_tree();
    let listing = ws.list_files(".github", None, 100).await.unwrap();
    assert_eq!(listing.paths, vec![".github/workflows/ci.yml"]);
    // An ignored directory named explicitly too.
    let listing = ws.list_files("target", None, 100).await.unwrap();
    assert_eq!(listing.paths, vec!["target/debug/app"]);
    // `.git` never.
    expect![".git: the .git directory is never listed or searched"]
        .assert_eq(&err_text(ws.list_files(".git", None, 100).await));
}

#[tokio::test]
async fn list_globs_limits_and_errors() {
    let (_dir, ws) = listing_tree();
    let paths = |l: rein_core::Listing| (l.paths, l.truncated);
    assert_eq!(
        paths(ws.list_files("", Some("*.rs"), 100).await.unwrap()),
        (
            vec![
                "src/a/deep.rs".to_string(),
                "src/build/keep.rs".into(),
                "src/lib.rs".into(),
                "src/main.rs".into()
            ],
            0
        )
    );
    assert_eq!(
        paths(ws.list_files("", Some("src/*.rs"), 100).await.unwrap()),
        (vec!["src/lib.rs".to_string(), "src/main.rs".into()], 0)
    );
    assert_eq!(
        paths(ws.list_files("", Some("**/*.py"), 100).await.unwrap()),
        (vec!["a/b.py".to_string(), "a.py".into()], 0)
    );
    assert_eq!(
        paths(ws.list_files("src", Some("*.{rs,toml}"), 2).await.unwrap()),
        (
            vec!["src/a/deep.rs".to_string(), "src/build/keep.rs".into()],
            2
        )
    );
    assert_eq!(
        paths(ws.list_files("", None, 0).await.unwrap()),
        (vec![], 9)
    );
    // A file given as the directory lists itself.
    assert_eq!(
        paths(ws.list_files("src/lib.rs", None, 10).await.unwrap()),
        (vec!["src/lib.rs".to_string()], 0)
    );
    expect![[r#"invalid pattern "src/[": unclosed character class; missing ']'"#]]
        .assert_eq(&err_text(ws.list_files("", Some("src/["), 10).await));
    expect!["nope not found"].assert_eq(&err_text(ws.list_files("nope", None, 10).await));
}

// ---------------------------------------------------------------- search

#[tokio::test]
async fn search_finds_lines_sorted_by_path_and_line() {
    let (dir, ws) = tree(&[
        ("src/cart.py", CART),
        ("src/a/util.py", "def total_of(xs):\n    return sum(xs)\n"),
        (
            "tests/test_cart.py",
            "def test_total():\n    assert Cart().total() == 0\n",
        ),
        ("notes.txt", "total recall\r\nsubtotal\r\n"),
        (".gitignore", "out/\n"),
        ("out/cart.py", "total = 1\n"),
    ]);
    put(dir.path(), "data.bin", b"total\0\x01\x02");
    put(
        dir.path(),
        "late.bin",
        [b"total\n".repeat(20_000), b"\0".to_vec()].concat(),
    );

    let found = ws.search(r"total\b", "", None, 100).await.unwrap();
    let hits: Vec<String> = found
        .hits
        .iter()
        .map(|h| format!("{}:{}: {}", h.path, h.line, h.text))
        .collect();
    expect![[r#"
        [
            "notes.txt:1: total recall",
            "notes.txt:2: subtotal",
            "src/cart.py:5:     def total(self):",
            "src/cart.py:6:         total = 0",
            "src/cart.py:8:             total += item.price",
            "src/cart.py:9:         return total",
            "tests/test_cart.py:1: def test_total():",
            "tests/test_cart.py:2:     assert Cart().total() == 0",
        ]
    "#]]
    .assert_debug_eq(&hits);
    assert_eq!(found.truncated, 0);

    // `$` works with CRLF line endings; the `\r` is not part of the text.
    let found = ws.search("subtotal$", "", None, 100).await.unwrap();
    assert_eq!(
        found.hits,
        vec![SearchHit {
            path: "notes.txt".into(),
            line: 2,
            text: "subtotal".into()
        }]
    );

    // Glob and directory.
    let found = ws.search("total", "src", Some("*.py"), 2).await.unwrap();
    assert_eq!(
        found
            .hits
            .iter()
            .map(|h| (h.path.as_str(), h.line))
            .collect::<Vec<_>>(),
        vec![("src/a/util.py", 1), ("src/cart.py", 5)]
    );
    assert_eq!(found.truncated, 3);
    let found = ws.search("total", "", Some("tests/**"), 10).await.unwrap();
    assert_eq!(found.hits.len(), 2);
}

#[tokio::test]
async fn search_errors_and_caps() {
    let (dir, ws) = tree(&[("a.txt", "x\n")]);
    expect![[r#"invalid pattern "fn (": unclosed group"#]]
        .assert_eq(&err_text(ws.search("fn (", "", None, 10).await));
    assert!(matches!(
        ws.search("a\nb", "", None, 10).await,
        Err(WorkspaceError::BadPattern { .. })
    ));
    assert!(matches!(
        ws.search("x", "", Some("["), 10).await,
        Err(WorkspaceError::BadPattern { .. })
    ));

    // Long lines are cut.
    put(
        dir.path(),
        "long.txt",
        format!("{}needle{}\n", "a".repeat(10), "b".repeat(2000)),
    );
    let found = ws.search("needle", "", None, 10).await.unwrap();
    assert_eq!(found.hits[0].text.chars().count(), MAX_HIT_CHARS + 1);
    assert!(found.hits[0].text.ends_with('…'));

    // Every hit is counted, only `limit` are kept: the first by path, then
    // line, whichever thread found them.
    for i in 0..20 {
        put(
            dir.path(),
            &format!("d{i:02}/many.txt"),
            "hit\n".repeat(1_000),
        );
    }
    let found = ws.search("hit", "", None, 3).await.unwrap();
    assert_eq!(
        found
            .hits
            .iter()
            .map(|h| (h.path.as_str(), h.line))
            .collect::<Vec<_>>(),
        vec![
            ("d00/many.txt", 1),
            ("d00/many.txt", 2),
            ("d00/many.txt", 3)
        ]
    );
    assert_eq!(found.truncated, 20_000 - 3);
    let found = ws.search("hit", "", None, 0).await.unwrap();
    assert_eq!((found.hits.len(), found.truncated), (0, 20_000));
}

// ---------------------------------------------------------------- edit_file

/// What a `ConfirmChange` was shown: path, old text, new text, description.
type Shown = (String, Option<String>, String, String);

/// Says yes or no, and records what it was shown.
#[derive(Default)]
struct Answer {
    yes: bool,
    shown: Mutex<Vec<Shown>>,
}

#[async_trait]
impl ConfirmChange for Answer {
    async fn confirm(&self, path: &str, old: Option<&str>, new: &str, description: &str) -> bool {
        self.shown.lock().unwrap().push((
            path.into(),
            old.map(str::to_string),
            new.into(),
            description.into(),
        ));
        self.yes
    }
}

/// Changes the file on disk while "asking", then says yes.
struct Meddler {
    file: PathBuf,
    text: String,
}

#[async_trait]
impl ConfirmChange for Meddler {
    async fn confirm(&self, _: &str, _: Option<&str>, _: &str, _: &str) -> bool {
        fs::write(&self.file, &self.text).unwrap();
        true
    }
}

#[tokio::test]
async fn a_unique_edit_is_written() {
    let (dir, ws) = tree(&[("src/cart.py", CART)]);
    let base = ws.read_file("src/cart.py").await.unwrap().version;
    let out = ws
        .edit_file(edit(
            "src/cart.py",
            &base,
            "            total += item.price\n",
            "            total += item.price * item.qty\n",
        ))
        .await
        .unwrap();
    let now = fs::read_to_string(dir.path().join("src/cart.py")).unwrap();
    assert_eq!(now, CART.replace("item.price", "item.price * item.qty"));
    assert_eq!(
        out,
        EditOutcome::Applied {
            version: ReadVersion::of_disk(&now),
            rebased_from: None
        }
    );
    // No temporary file left behind.
    let names: Vec<_> = fs::read_dir(dir.path().join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["cart.py"]);
}

#[tokio::test]
async fn match_errors_are_no_match_with_a_message() {
    let (dir, ws) = tree(&[("src/cart.py", CART)]);
    let base = ws.read_file("src/cart.py").await.unwrap().version;
    let cases = [
        (
            edit("src/cart.py", &base, "total", "sum"),
            expect![
                "old_text matches 4 places in src/cart.py (lines 5, 6, 8, 9); include more surrounding lines to make it unique, or set replace_all"
            ],
        ),
        (
            edit(
                "src/cart.py",
                &base,
                "        for item in items:\n            total += item.price\n",
                "x",
            ),
            expect![[r#"
                old_text was not found in src/cart.py. The most similar text is at lines 7-8:
                    7	        for item in self.items:
                    8	            total += item.price
                Copy old_text exactly from the file (read it again if it may have changed)."#]],
        ),
        (
            edit(
                "src/cart.py",
                &base,
                "total = 0\n  for item in self.items:",
                "x",
            ),
            expect![[r#"
                old_text matches lines 6-7 of src/cart.py except for whitespace; copy its exact whitespace and indentation:
                    6	        total = 0
                    7	        for item in self.items:"#]],
        ),
        (
            edit("src/cart.py", &base, "", "x"),
            expect![
                "old_text is empty; to create a file use create_file, to insert, include the neighbouring line in old_text"
            ],
        ),
        (
            edit("src/cart.py", &base, "x", "x"),
            expect!["old_text and new_text are identical; there is nothing to change"],
        ),
    ];
    for (request, expected) in cases {
        let err = ws.edit_file(request).await.unwrap_err();
        assert!(matches!(err, WorkspaceError::NoMatch(_)), "{err:?}");
        expected.assert_eq(&err.to_string());
    }
    assert_eq!(
        fs::read_to_string(dir.path().join("src/cart.py")).unwrap(),
        CART
    );

    // replace_all takes them all.
    let mut request = edit("src/cart.py", &base, "total", "sum");
    request.replace_all = true;
    ws.edit_file(request).await.unwrap();
    let now = fs::read_to_string(dir.path().join("src/cart.py")).unwrap();
    assert_eq!(now, CART.replace("total", "sum"));

    // Missing files and directories.
    expect!["src/carts.py not found; did you mean src/cart.py?"].assert_eq(&err_text(
        ws.edit_file(edit("src/carts.py", &base, "a", "b")).await,
    ));
    assert!(matches!(
        ws.edit_file(edit("src", &base, "a", "b")).await,
        Err(WorkspaceError::IsADirectory { .. })
    ));
}

#[tokio::test]
async fn crlf_files_take_lf_edits_and_stay_crlf() {
    let crlf = CART.replace('\n', "\r\n");
    let (dir, ws) = tree(&[("cart.py", &crlf)]);
    let base = ws.read_file("cart.py").await.unwrap().version;
    let out = ws
        .edit_file(edit(
            "cart.py",
            &base,
            "        total = 0\n        for item in self.items:\n",
            "        total = 0\n        # every item\n        for item in self.items:\n",
        ))
        .await
        .unwrap();
    let now = fs::read_to_string(dir.path().join("cart.py")).unwrap();
    assert_eq!(
        now,
        CART.replace("        for item", "        # every item\n        for item")
            .replace('\n', "\r\n")
    );
    assert!(matches!(out, EditOutcome::Applied { .. }));
}

#[tokio::test]
async fn an_edit_is_rebased_over_a_change_elsewhere() {
    let (dir, ws) = tree(&[("cart.py", CART)]);
    let base = ws.read_file("cart.py").await.unwrap().version;
    // The user edits the top of the file.
    let theirs = CART.replace("class Cart:", "class Cart(object):");
    fs::write(dir.path().join("cart.py"), &theirs).unwrap();

    let out = ws
        .edit_file(edit(
            "cart.py",
            &base,
            "        return total\n",
            "        return round(total, 2)\n",
        ))
        .await
        .unwrap();
    let now = fs::read_to_string(dir.path().join("cart.py")).unwrap();
    assert_eq!(
        now,
        theirs.replace("return total", "return round(total, 2)")
    );
    assert_eq!(
        out,
        EditOutcome::Applied {
            version: ReadVersion::of_disk(&now),
            rebased_from: Some(base)
        }
    );
}

#[tokio::test]
async fn an_edit_whose_text_changed_is_stale() {
    let (dir, ws) = tree(&[("cart.py", CART)]);
    let base = ws.read_file("cart.py").await.unwrap().version;
    let theirs = CART.replace("return total", "return float(total)");
    fs::write(dir.path().join("cart.py"), &theirs).unwrap();

    let out = ws
        .edit_file(edit(
            "cart.py",
            &base,
            "        return total\n",
            "        return round(total, 2)\n",
        ))
        .await
        .unwrap();
    assert_eq!(
        out,
        EditOutcome::Stale {
            current: ReadVersion::of_disk(&theirs)
        }
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("cart.py")).unwrap(),
        theirs
    );
}

#[tokio::test]
async fn confirmation_is_asked_and_can_be_refused() {
    let (dir, ws) = tree(&[("cart.py", CART)]);
    let no = Arc::new(Answer::default());
    let ws = ws.with_confirm(no.clone());
    let base = ws.read_file("cart.py").await.unwrap().version;
    let mut request = edit("cart.py", &base, "class Cart:", "class Basket:");

    // Not needed: not asked.
    request.needs_confirmation = false;
    let mut undo = request.clone();
    ws.edit_file(request.clone()).await.unwrap();
    assert!(no.shown.lock().unwrap().is_empty());
    undo.base = ReadVersion::of_disk(&CART.replace("class Cart:", "class Basket:"));
    std::mem::swap(&mut undo.old_text, &mut undo.new_text);
    ws.edit_file(undo).await.unwrap();

    request.needs_confirmation = true;
    let out = ws.edit_file(request).await.unwrap();
    assert_eq!(
        out,
        EditOutcome::Rejected {
            reason: String::new()
        }
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("cart.py")).unwrap(),
        CART
    );
    let shown = no.shown.lock().unwrap().clone();
    assert_eq!(
        shown,
        vec![(
            "cart.py".to_string(),
            Some(CART.to_string()),
            CART.replace("class Cart:", "class Basket:"),
            "a test edit".to_string()
        )]
    );

    // Without a ConfirmChange, a change needing confirmation is applied.
    let ws = DiskWorkspace::new(dir.path()).unwrap();
    let mut request = edit("cart.py", &base, "class Cart:", "class Basket:");
    request.needs_confirmation = true;
    assert!(matches!(
        ws.edit_file(request).await.unwrap(),
        EditOutcome::Applied { .. }
    ));
}

#[tokio::test]
async fn a_change_made_while_asking_is_never_clobbered() {
    let (dir, ws) = tree(&[("cart.py", CART)]);
    let file = dir.path().join("cart.py");
    let theirs = CART.replace("class Cart:", "class Cart:  # edited meanwhile");
    let ws = ws.with_confirm(Arc::new(Meddler {
        file: file.clone(),
        text: theirs.clone(),
    }));
    let base = ws.read_file("cart.py").await.unwrap().version;
    let mut request = edit(
        "cart.py",
        &base,
        "        return total\n",
        "        return 0\n",
    );
    request.needs_confirmation = true;
    let out = ws.edit_file(request).await.unwrap();
    assert_eq!(
        out,
        EditOutcome::Stale {
            current: ReadVersion::of_disk(&theirs)
        }
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), theirs);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[tokio::test]
async fn edits_keep_permissions_and_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, ws) = tree(&[
        ("run.sh", "#!/bin/sh\necho hi\n"),
        ("real/cfg.toml", "a = 1\n"),
    ]);
    let script = dir.path().join("run.sh");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o751)).unwrap();
    std::os::unix::fs::symlink("real/cfg.toml", dir.path().join("cfg.toml")).unwrap();

    let base = ws.read_file("run.sh").await.unwrap().version;
    ws.edit_file(edit("run.sh", &base, "echo hi", "echo hello"))
        .await
        .unwrap();
    assert_eq!(
        fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o751
    );

    let base = ws.read_file("cfg.toml").await.unwrap().version;
    ws.edit_file(edit("cfg.toml", &base, "a = 1", "a = 2"))
        .await
        .unwrap();
    assert!(
        fs::symlink_metadata(dir.path().join("cfg.toml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("real/cfg.toml")).unwrap(),
        "a = 2\n"
    );
}

// ---------------------------------------------------------------- create_file

#[tokio::test]
async fn creates_new_files_with_their_directories() {
    let (dir, ws) = tree(&[("cart.py", CART)]);
    let out = ws
        .create_file(create("tests/unit/test_cart.py", "def test():\n    pass\n"))
        .await
        .unwrap();
    assert_eq!(
        out,
        EditOutcome::Applied {
            version: ReadVersion::of_disk("def test():\n    pass\n"),
            rebased_from: None
        }
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("tests/unit/test_cart.py")).unwrap(),
        "def test():\n    pass\n"
    );
    assert_eq!(
        fs::read_dir(dir.path().join("tests/unit")).unwrap().count(),
        1
    );
    // Then it can be read back.
    let read = ws.read_file("tests/unit/test_cart.py").await.unwrap();
    assert_eq!(
        read.version,
        ReadVersion::of_disk("def test():\n    pass\n")
    );
    // An empty file is fine.
    ws.create_file(create("empty.txt", "")).await.unwrap();
    assert_eq!(fs::read(dir.path().join("empty.txt")).unwrap(), b"");
}

#[tokio::test]
async fn create_refuses_existing_paths() {
    let (dir, ws) = tree(&[("cart.py", CART), ("src/x.py", "")]);
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).unwrap();
    expect!["cart.py already exists"]
        .assert_eq(&err_text(ws.create_file(create("cart.py", "x")).await));
    expect!["src already exists"].assert_eq(&err_text(ws.create_file(create("src", "x")).await));
    expect!["dangling already exists"]
        .assert_eq(&err_text(ws.create_file(create("dangling", "x")).await));
    expect!["cart.py/inner.py: cart.py is a file, not a directory"].assert_eq(&err_text(
        ws.create_file(create("cart.py/inner.py", "x")).await,
    ));
    assert_eq!(
        fs::read_to_string(dir.path().join("cart.py")).unwrap(),
        CART
    );
}

#[tokio::test]
async fn create_asks_when_needed() {
    let (dir, ws) = tree(&[]);
    let no = Arc::new(Answer::default());
    let ws = ws.with_confirm(no.clone());
    let mut request = create("new/file.txt", "hello\n");
    request.needs_confirmation = true;
    let out = ws.create_file(request).await.unwrap();
    assert_eq!(
        out,
        EditOutcome::Rejected {
            reason: String::new()
        }
    );
    assert!(
        !dir.path().join("new").exists(),
        "no directory created when refused"
    );
    assert_eq!(
        no.shown.lock().unwrap().clone(),
        vec![(
            "new/file.txt".to_string(),
            None,
            "hello\n".to_string(),
            "a new file".to_string()
        )]
    );
}

#[tokio::test]
async fn flush_to_disk_has_nothing_to_do() {
    let (_dir, ws) = tree(&[]);
    ws.flush_to_disk().await.unwrap();
}

/// `exists` answers guesses without a failed read's "did you mean" walk,
/// and never says yes to what a read would refuse.
#[tokio::test]
async fn exists_is_true_only_for_files_a_read_would_give() {
    let (dir, ws) = tree(&[("src/cart.py", "x = 1\n")]);
    let outside = tempfile::tempdir().unwrap();
    put(outside.path(), "secret.py", "KEY = 1\n");
    std::os::unix::fs::symlink(outside.path().join("secret.py"), dir.path().join("link.py"))
        .unwrap();
    assert!(ws.exists("src/cart.py").await);
    for no in ["src/missing.py", "src", "link.py", "../x.py", "/etc/passwd"] {
        assert!(!ws.exists(no).await, "{no}");
        assert!(ws.read_file(no).await.is_err(), "{no}");
    }
}
