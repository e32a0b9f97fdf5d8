//! What folder a session may work in. A session's folder is where every
//! command Rein runs may write: a client that opens a session in `/` (or
//! the home folder) would hand the model the user's whole file system —
//! `~/.bashrc`, `~/.ssh`, every other project. So a session's `cwd` must be
//! a project folder: the file system's root, a folder right under it
//! (`/home`, `/tmp`, `/usr`…), anything under the system's own folders
//! (`/usr`, `/etc`, `/proc`…), the home folder itself and the folders
//! above it are refused, with what to do instead. There is no setting to
//! allow them: a project inside any of the allowed places is always an
//! option.

use std::path::{Path, PathBuf};

/// Folders no project lives in (nor anything under them).
const SYSTEM: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
    "/sbin", "/sys", "/usr",
];

/// `cwd` as a session's folder: absolute, existing, canonical, a project's.
/// `home`: the user's home folder, if known.
pub fn project_folder(cwd: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    if !cwd.is_absolute() {
        return Err(format!(
            "cwd must be an absolute path, got {}",
            cwd.display()
        ));
    }
    let root = cwd
        .canonicalize()
        .map_err(|e| format!("the folder {}: {e}", cwd.display()))?;
    if !root.is_dir() {
        return Err(format!("{} is not a folder", root.display()));
    }
    let home = home.and_then(|h| h.canonicalize().ok());
    if let Some(why) = too_broad(&root, home.as_deref()) {
        return Err(format!(
            "Rein works in one project's folder, and {} is {why}: every command Rein runs could write anywhere in it. Open a project folder instead (the folder of one repository), and start the session there.",
            root.display()
        ));
    }
    Ok(root)
}

/// Why `root` (canonical) is no project folder, if it is not.
fn too_broad(root: &Path, home: Option<&Path>) -> Option<&'static str> {
    if root.parent().is_none() {
        return Some("the whole file system");
    }
    if let Some(home) = home {
        if root == home {
            return Some("your home folder");
        }
        if home.starts_with(root) {
            return Some("a folder that holds your home folder");
        }
    }
    if SYSTEM.iter().any(|system| root.starts_with(system)) {
        return Some("a system folder");
    }
    if root.parent() == Some(Path::new("/")) {
        return Some(
            "a folder at the top of the file system, shared by everything on this machine",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broad_folders_are_refused_and_projects_are_not() {
        let home = Path::new("/home/me");
        let refused = |root: &str| too_broad(Path::new(root), Some(home));
        assert_eq!(refused("/"), Some("the whole file system"));
        assert_eq!(refused("/home/me"), Some("your home folder"));
        assert_eq!(
            refused("/home"),
            Some("a folder that holds your home folder")
        );
        assert_eq!(refused("/etc"), Some("a system folder"));
        assert_eq!(refused("/usr/local/bin"), Some("a system folder"));
        for top in ["/tmp", "/opt", "/srv", "/var", "/root", "/mnt"] {
            assert!(refused(top).is_some(), "{top}");
        }
        for project in [
            "/home/me/shop",
            "/tmp/tmp.x1/project",
            "/srv/www",
            "/opt/app",
            "/home/other",
        ] {
            assert_eq!(refused(project), None, "{project}");
        }
        // A home at /root (a container's) is its own case: its projects
        // are fine.
        assert_eq!(
            too_broad(Path::new("/root/app"), Some(Path::new("/root"))),
            None
        );
    }

    #[test]
    fn the_error_says_what_to_do() {
        let error = project_folder(Path::new("/"), None).unwrap_err();
        assert_eq!(
            error,
            "Rein works in one project's folder, and / is the whole file system: every command Rein runs could write anywhere in it. Open a project folder instead (the folder of one repository), and start the session there."
        );
        assert!(
            project_folder(Path::new("relative"), None)
                .unwrap_err()
                .starts_with("cwd must be an absolute path")
        );
    }
}
