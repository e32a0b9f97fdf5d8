//! Turning a path the model gave into a workspace-relative path that is
//! guaranteed to stay inside the workspace.
//!
//! [`resolve`] is the only way a path from the model reaches the
//! [`Workspace`](crate::Workspace) and the permission policy. It works in two
//! steps:
//!
//! 1. **Lexically**: the input (relative to the root, or absolute) is split
//!    on `/`; empty components (duplicate or trailing slashes) and `.` are
//!    dropped, `..` removes the previous component. A `..` with nothing left
//!    to remove, or an absolute path not under the root, is
//!    [`PathError::Outside`].
//! 2. **Physically**: the components are followed on disk from the canonical
//!    root, one at a time, resolving every symbolic link on the way (also
//!    dangling ones, which `std::fs::canonicalize` cannot resolve), until a
//!    component does not exist; the rest is appended as written, so a file
//!    that is about to be created resolves too. The final path must be under
//!    the canonical root: a symlink inside the workspace that leads outside
//!    it is [`PathError::Outside`] as well.
//!
//! The result is the *physical* path relative to the canonical root, with
//! `/` separators and `""` for the root itself. A symlink that stays inside
//! the workspace therefore resolves to its target (`docs/a.md` →
//! `site/docs/a.md` when `docs → site/docs`): permissions are checked, and
//! edits applied, on the file that is really changed, so a link to `.git`
//! cannot be used to reach `.git/config`.
//!
//! A backslash is an ordinary file-name character here (Rein runs on Unix).

use std::path::{Component, Path, PathBuf};

/// How many symbolic links one resolution may follow (as Linux's `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;

/// Why a path was refused. Every message is written for the model: it says
/// what was wrong and what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty; give a path relative to the workspace root, or `.` for the root")]
    Empty,
    #[error("`{}` contains a NUL byte; give a plain path relative to the workspace root", escape(.input))]
    Nul { input: String },
    #[error(
        "`{input}`: `~` is not expanded (this is not a shell); give a path relative to the workspace root ({root})"
    )]
    Tilde { input: String, root: String },
    #[error(
        "`{input}` is outside the workspace ({root}){}; use a path inside it",
        through_symlink_note(.through_symlink)
    )]
    Outside {
        input: String,
        root: String,
        /// The symbolic link (workspace-relative) through which the path
        /// leaves the workspace, when it does so physically but not lexically.
        through_symlink: Option<String>,
    },
    #[error("`{input}`: too many levels of symbolic links (a link loop?); use the real path")]
    SymlinkLoop { input: String },
    #[error("`{input}` leads to a path that is not valid UTF-8; use another path")]
    NotUtf8 { input: String },
    #[error(
        "`{input}`: a part of it keeps changing between a symbolic link and a folder or file while Rein looks at it; Rein does not use such a path"
    )]
    Changing { input: String },
    #[error("the workspace root {root} cannot be opened: {reason}")]
    Root { root: String, reason: String },
}

fn through_symlink_note(link: &Option<String>) -> String {
    match link {
        Some(link) => format!(" through the symbolic link `{link}`"),
        None => String::new(),
    }
}

fn escape(input: &str) -> String {
    input.escape_debug().to_string()
}

/// Resolves `input` (relative to `root`, or absolute) to a normalized
/// workspace-relative path with `/` separators (`""` for the root).
///
/// See the [module documentation](self) for the rules.
pub fn resolve(root: &Path, input: &str) -> Result<String, PathError> {
    let root_display = root.display().to_string();
    if input.trim().is_empty() {
        return Err(PathError::Empty);
    }
    if input.contains('\0') {
        return Err(PathError::Nul {
            input: input.to_owned(),
        });
    }
    let canonical_root = root.canonicalize().map_err(|e| PathError::Root {
        root: root_display.clone(),
        reason: e.to_string(),
    })?;
    let outside = |through_symlink: Option<String>| PathError::Outside {
        input: input.to_owned(),
        root: root_display.clone(),
        through_symlink,
    };

    // Step 1: lexical, relative to the root.
    let relative: Vec<String> = if input.starts_with('/') {
        let absolute = normalize_absolute(input);
        let lexical_root = normalize_absolute(&root.to_string_lossy());
        let canonical = normalize_absolute(&canonical_root.to_string_lossy());
        match strip_components(&absolute, &lexical_root)
            .or_else(|| strip_components(&absolute, &canonical))
        {
            Some(rest) => rest,
            None => return Err(outside(None)),
        }
    } else {
        if is_tilde(root, input) {
            return Err(PathError::Tilde {
                input: input.to_owned(),
                root: root_display,
            });
        }
        normalize_relative(input).ok_or_else(|| outside(None))?
    };

    // Step 2: physical, following symlinks from the canonical root.
    let physical = follow(&canonical_root, relative).map_err(|e| match e {
        Follow::Loop => PathError::SymlinkLoop {
            input: input.to_owned(),
        },
        Follow::NotUtf8 => PathError::NotUtf8 {
            input: input.to_owned(),
        },
        Follow::Changing => PathError::Changing {
            input: input.to_owned(),
        },
    })?;
    match physical.path.strip_prefix(&canonical_root) {
        Ok(rest) => to_slash(rest).ok_or_else(|| PathError::NotUtf8 {
            input: input.to_owned(),
        }),
        Err(_) => Err(outside(physical.first_link)),
    }
}

/// `~`, `~/x`, or `~name/x` when the workspace has no such entry: the model
/// expected a shell to expand it.
fn is_tilde(root: &Path, input: &str) -> bool {
    let Some(first) = input.split('/').next() else {
        return false;
    };
    if first == "~" {
        return true;
    }
    first.starts_with('~')
        && first[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && std::fs::symlink_metadata(root.join(first)).is_err()
}

/// Components of an absolute path, lexically normalized (`..` at `/` stays at `/`).
fn normalize_absolute(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            other => out.push(other.to_owned()),
        }
    }
    out
}

/// Components of a relative path, lexically normalized; `None` when a `..`
/// leaves the root.
fn normalize_relative(path: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            other => out.push(other.to_owned()),
        }
    }
    Some(out)
}

fn strip_components(path: &[String], prefix: &[String]) -> Option<Vec<String>> {
    path.starts_with(prefix)
        .then(|| path[prefix.len()..].to_vec())
}

fn to_slash(path: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            // `strip_prefix` of a canonical path leaves only normal components.
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

enum Follow {
    Loop,
    NotUtf8,
    /// A link that was no longer one when read, again and again (someone
    /// is swapping it).
    Changing,
}

/// How often a component that stopped being a link between two looks is
/// looked at again.
const MAX_RETRIES: usize = 16;

struct Physical {
    path: PathBuf,
    /// The first symlink followed, relative to the root, for error messages.
    first_link: Option<String>,
}

/// Walks `components` from `root` (canonical), resolving symlinks as it
/// goes, until a component does not exist; the rest is appended lexically.
fn follow(root: &Path, components: Vec<String>) -> Result<Physical, Follow> {
    let mut current = root.to_path_buf();
    // Remaining components, in reverse order so `pop` yields the next one.
    let mut queue: Vec<String> = components.into_iter().rev().collect();
    let mut links = 0;
    let mut retries = 0;
    let mut first_link = None;
    let mut consumed: Vec<String> = Vec::new();
    while let Some(part) = queue.pop() {
        if part == ".." {
            // `current` is canonical here, so its parent is the physical parent.
            current.pop();
            consumed.pop();
            continue;
        }
        let next = current.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = match std::fs::read_link(&next) {
                    Ok(target) => target,
                    // Not a link any more (swapped or removed since):
                    // look again.
                    Err(_) => {
                        retries += 1;
                        if retries > MAX_RETRIES {
                            return Err(Follow::Changing);
                        }
                        queue.push(part);
                        continue;
                    }
                };
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(Follow::Loop);
                }
                if first_link.is_none() {
                    consumed.push(part.clone());
                    first_link = Some(consumed.join("/"));
                }
                let target = target.to_str().ok_or(Follow::NotUtf8)?;
                if target.starts_with('/') {
                    current = PathBuf::from("/");
                }
                for piece in target.split('/').rev() {
                    match piece {
                        "" | "." => {}
                        other => queue.push(other.to_owned()),
                    }
                }
            }
            Ok(_) => {
                current = next;
                consumed.push(part);
            }
            Err(_) => {
                // Does not exist (or cannot be looked into): the rest is new.
                let mut rest: Vec<String> = vec![part];
                while let Some(part) = queue.pop() {
                    rest.push(part);
                }
                for part in rest {
                    if part == ".." {
                        current.pop();
                    } else {
                        current.push(part);
                    }
                }
                break;
            }
        }
    }
    Ok(Physical {
        path: current,
        first_link,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        /// The workspace root, `<tmp>/proj`.
        root: PathBuf,
        /// `<tmp>/outside`, a sibling of the root.
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        let outside = dir.path().join("outside");
        fs::create_dir_all(root.join("src/a")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        fs::write(outside.join("secret.txt"), "s").unwrap();
        Fixture {
            _dir: dir,
            root,
            outside,
        }
    }

    fn ok(f: &Fixture, input: &str) -> String {
        match resolve(&f.root, input) {
            Ok(path) => path,
            Err(e) => panic!("{input:?}: {e}"),
        }
    }

    #[test]
    fn normalizes_lexically() {
        let f = fixture();
        for (input, want) in [
            ("src/main.rs", "src/main.rs"),
            ("./src/main.rs", "src/main.rs"),
            ("src//main.rs", "src/main.rs"),
            ("src/./a/../main.rs", "src/main.rs"),
            ("src/", "src"),
            ("src/a/", "src/a"),
            (".", ""),
            ("./", ""),
            ("src/..", ""),
            ("new/dir/file.txt", "new/dir/file.txt"),
            ("src/new/../new.rs", "src/new.rs"),
            ("a\\b.txt", "a\\b.txt"),
            ("~backup.txt", "~backup.txt"),
        ] {
            if input.starts_with('~') {
                fs::write(f.root.join(input), "").unwrap();
            }
            assert_eq!(ok(&f, input), want, "{input}");
        }
    }

    #[test]
    fn absolute_paths_inside_the_root() {
        let f = fixture();
        let root = f.root.display().to_string();
        assert_eq!(ok(&f, &format!("{root}/src/main.rs")), "src/main.rs");
        assert_eq!(ok(&f, &root), "");
        assert_eq!(ok(&f, &format!("{root}/")), "");
        assert_eq!(ok(&f, &format!("{root}/src/../x")), "x");
        let canonical = f.root.canonicalize().unwrap().display().to_string();
        assert_eq!(ok(&f, &format!("{canonical}/src")), "src");
    }

    #[test]
    fn leaving_the_root_is_refused() {
        let f = fixture();
        let root = f.root.display().to_string();
        for input in [
            "..",
            "../outside/secret.txt",
            "src/../../outside",
            "src/a/../../..",
            "/etc/passwd",
            "/",
        ] {
            let err = resolve(&f.root, input).unwrap_err();
            assert!(
                matches!(
                    err,
                    PathError::Outside {
                        through_symlink: None,
                        ..
                    }
                ),
                "{input}: {err:?}"
            );
        }
        let err = resolve(&f.root, &format!("{root}/../outside")).unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }));
        // A sibling whose name starts with the root's name is not inside.
        fs::create_dir_all(format!("{root}2")).unwrap();
        let err = resolve(&f.root, &format!("{root}2/x")).unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }));
    }

    #[test]
    fn messages_speak_to_the_model() {
        let root = Path::new("/home/u/proj");
        let err = PathError::Outside {
            input: "../etc/passwd".into(),
            root: root.display().to_string(),
            through_symlink: None,
        };
        assert_eq!(
            err.to_string(),
            "`../etc/passwd` is outside the workspace (/home/u/proj); use a path inside it"
        );
        let err = PathError::Outside {
            input: "data/x".into(),
            root: "/home/u/proj".into(),
            through_symlink: Some("data".into()),
        };
        assert_eq!(
            err.to_string(),
            "`data/x` is outside the workspace (/home/u/proj) through the symbolic link `data`; use a path inside it"
        );
        let f = fixture();
        let err = resolve(&f.root, "../etc/passwd").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "`../etc/passwd` is outside the workspace ({}); use a path inside it",
                f.root.display()
            )
        );
    }

    #[test]
    fn empty_nul_and_tilde_are_refused() {
        let f = fixture();
        assert_eq!(resolve(&f.root, ""), Err(PathError::Empty));
        assert_eq!(resolve(&f.root, "   "), Err(PathError::Empty));
        let err = resolve(&f.root, "src/a\0b").unwrap_err();
        assert!(matches!(err, PathError::Nul { .. }));
        assert!(err.to_string().contains("src/a\\0b"), "{err}");
        for input in ["~", "~/proj/src", "~root/.bashrc"] {
            let err = resolve(&f.root, input).unwrap_err();
            assert!(matches!(err, PathError::Tilde { .. }), "{input}: {err:?}");
            assert!(err.to_string().contains("`~` is not expanded"), "{err}");
        }
    }

    #[test]
    fn a_missing_root_is_reported() {
        let err = resolve(Path::new("/definitely/not/here"), "x").unwrap_err();
        assert!(matches!(err, PathError::Root { .. }), "{err:?}");
    }

    #[test]
    fn symlink_escaping_the_root_is_refused() {
        let f = fixture();
        symlink(&f.outside, f.root.join("out")).unwrap();
        symlink(f.outside.join("secret.txt"), f.root.join("src/secret")).unwrap();
        symlink("../../outside", f.root.join("src/rel")).unwrap();
        for (input, link) in [
            ("out", "out"),
            ("out/secret.txt", "out"),
            ("out/new-file.txt", "out"),
            ("src/secret", "src/secret"),
            ("src/rel/secret.txt", "src/rel"),
        ] {
            match resolve(&f.root, input) {
                Err(PathError::Outside {
                    through_symlink: Some(l),
                    ..
                }) => assert_eq!(l, link, "{input}"),
                other => panic!("{input}: {other:?}"),
            }
        }
    }

    #[test]
    fn dangling_symlink_pointing_outside_is_refused() {
        let f = fixture();
        // Creating `new` would write through the link to a file outside.
        symlink(f.outside.join("new"), f.root.join("dangling")).unwrap();
        let err = resolve(&f.root, "dangling").unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }), "{err:?}");
        symlink("/nonexistent/dir", f.root.join("dangling-dir")).unwrap();
        let err = resolve(&f.root, "dangling-dir/file").unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }), "{err:?}");
    }

    #[test]
    fn symlink_staying_inside_resolves_to_its_target() {
        let f = fixture();
        symlink("src/a", f.root.join("alias")).unwrap();
        symlink(f.root.join("src/main.rs"), f.root.join("main-link.rs")).unwrap();
        symlink("../main.rs", f.root.join("src/a/up")).unwrap();
        symlink("src/not-yet", f.root.join("future")).unwrap();
        assert_eq!(ok(&f, "alias"), "src/a");
        assert_eq!(ok(&f, "alias/new.rs"), "src/a/new.rs");
        assert_eq!(ok(&f, "main-link.rs"), "src/main.rs");
        assert_eq!(ok(&f, "src/a/up"), "src/main.rs");
        assert_eq!(ok(&f, "future"), "src/not-yet");
        assert_eq!(ok(&f, "future/x/y"), "src/not-yet/x/y");
        // `..` after a symlink is lexical (the model's view), as everywhere.
        assert_eq!(ok(&f, "alias/../main.rs"), "main.rs");
    }

    #[test]
    fn symlink_to_dot_git_is_reported_as_dot_git() {
        let f = fixture();
        fs::create_dir_all(f.root.join(".git")).unwrap();
        symlink(".git", f.root.join("g")).unwrap();
        assert_eq!(ok(&f, "g/config"), ".git/config");
    }

    #[test]
    fn symlink_loops_are_reported() {
        let f = fixture();
        symlink("b", f.root.join("a")).unwrap();
        symlink("a", f.root.join("b")).unwrap();
        let err = resolve(&f.root, "a/x").unwrap_err();
        assert!(matches!(err, PathError::SymlinkLoop { .. }), "{err:?}");
    }

    #[test]
    fn root_given_through_a_symlink() {
        let f = fixture();
        let link = f.outside.join("proj-link");
        symlink(&f.root, &link).unwrap();
        assert_eq!(resolve(&link, "src/main.rs").unwrap(), "src/main.rs");
        let abs = format!("{}/src", link.display());
        assert_eq!(resolve(&link, &abs).unwrap(), "src");
        let abs = format!("{}/src", f.root.display());
        assert_eq!(resolve(&link, &abs).unwrap(), "src");
    }

    #[test]
    fn a_file_used_as_a_directory_is_left_to_the_reader() {
        let f = fixture();
        assert_eq!(ok(&f, "src/main.rs/x"), "src/main.rs/x");
    }
}
