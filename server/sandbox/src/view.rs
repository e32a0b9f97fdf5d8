//! The file system a command sees: a root of its own in which only what
//! its policy lists exists.
//!
//! Landlock decides what a command may read and write, but not which Unix
//! sockets it may connect to: a socket file anywhere on the machine — a
//! tmux server's under `/tmp`, an ssh-agent's, an editor's IPC socket, a
//! daemon's under `/run` or `/var` — would be reachable. So the command
//! gets a root of its own (a `tmpfs`, then `pivot_root`) holding the
//! policy's folders and files at their own paths, bound from the machine,
//! and nothing else:
//! - `/tmp` and `/var/tmp` are private and empty (the command's own
//!   `TMPDIR`, a folder of the machine's `/tmp`, is bound into it);
//! - `/dev` holds the usual devices, a pseudo-terminal instance of its own
//!   and a private `/dev/shm`;
//! - the folders of [`FileAccess::private_write`] are overlays whose upper
//!   layer lives in a `tmpfs` nobody else can reach, gone with the
//!   command's mount namespace;
//! - symbolic links on the way to a listed path (`/bin` → `usr/bin`,
//!   `/lib64` → `usr/lib64`) are made again, so programs find what they
//!   find on the machine.
//!
//! [`plan`] reads the machine (before anything is mounted) and says what
//! to make; [`build`] makes it, in a new mount namespace. What is not
//! listed does not exist in there, so no socket outside the listed paths
//! can be named, whatever Landlock allows.

use std::path::{Component, Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};

use crate::SandboxError;
use crate::policy::FileAccess;

/// What one step of making the root does. Paths are the machine's
/// (absolute); [`build`] maps them into the new root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// An empty private `tmpfs`, sticky and writable to all (`/tmp`).
    Scratch(PathBuf),
    /// The machine's folder or file, seen at the same place, read-only
    /// unless `writable` (Landlock then decides what is written).
    Bind { path: PathBuf, writable: bool },
    /// The machine's folder under a private writable layer, with the
    /// files of `seed` (a folder laid out like it) already in the layer.
    Layer {
        path: PathBuf,
        seed: Option<PathBuf>,
    },
    /// A minimal `/dev`: device files, a pseudo-terminal instance of its
    /// own, a private `/dev/shm`.
    Devices,
    /// A symbolic link, as on the machine.
    Link { at: PathBuf, target: PathBuf },
    /// Read-only from here down.
    ReadOnly(PathBuf),
    /// Out of reach: an empty folder or file mounted over it.
    Hide(PathBuf),
}

/// How a listed path is reached. Ordered: a stronger kind wins when a path
/// is listed twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    File,
    Read,
    Private,
    Write,
}

/// Always private and empty, unless the policy grants the machine's own;
/// writable to the command (what is bound below them is read-only unless
/// granted, so granting these grants nothing of the machine's).
pub const SCRATCH: &[&str] = &["/tmp", "/var/tmp"];
/// The device files a command gets in its `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];
/// At most this many symbolic links on the way to one path.
const MAX_LINKS: usize = 40;

/// The steps that make `access`'s root, from the machine as it is now:
/// paths that do not exist are left out, links are followed and made again.
pub fn plan(access: &FileAccess) -> Vec<Step> {
    let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut listed: Vec<(PathBuf, Kind)> = Vec::new();
    for (paths, kind) in [
        (&access.files, Kind::File),
        (&access.read, Kind::Read),
        (&access.read_only, Kind::Read),
        (&access.private_write, Kind::Private),
        (&access.write, Kind::Write),
    ] {
        for path in paths {
            if let Some(resolved) = resolve(path, &mut links) {
                listed.push((resolved, kind));
            }
        }
    }
    // One kind per path, the strongest.
    listed.sort();
    let mut by_path: Vec<(PathBuf, Kind)> = Vec::new();
    for (path, kind) in listed {
        match by_path.last_mut() {
            Some((last, last_kind)) if *last == path => *last_kind = (*last_kind).max(kind),
            _ => by_path.push((path, kind)),
        }
    }

    // The private scratch folders: never a copy of the machine's, so
    // nothing listed below them is covered by them.
    let mut steps: Vec<(PathBuf, Step)> = Vec::new();
    for scratch in SCRATCH.iter().map(PathBuf::from) {
        let granted = by_path
            .iter()
            .any(|(p, k)| *p == scratch && *k == Kind::Write);
        if !granted {
            by_path.retain(|(p, _)| *p != scratch);
            steps.push((scratch.clone(), Step::Scratch(scratch)));
        }
    }
    let mut mounted: Vec<(PathBuf, Kind)> = Vec::new();
    for (path, kind) in &by_path {
        // `/dev` is made, not bound: the machine's holds the syslog socket
        // and the user's terminals.
        if path.starts_with("/dev") {
            if !steps.iter().any(|(_, s)| *s == Step::Devices) {
                steps.push((PathBuf::from("/dev"), Step::Devices));
            }
            continue;
        }
        let covered = mounted
            .iter()
            .filter(|(above, _)| path.starts_with(above))
            .any(|(_, above)| covers(*above, *kind));
        if covered {
            continue;
        }
        let step = match kind {
            Kind::Private => Step::Layer {
                path: path.clone(),
                seed: access
                    .seeds
                    .iter()
                    .find(|s| resolve(&s.target, &mut Vec::new()).as_ref() == Some(path))
                    .and_then(|s| resolve(&s.from, &mut Vec::new())),
            },
            // The machine's /proc is only there until the init mounts the
            // namespace's own over it (which needs it as it is).
            Kind::Read if path != Path::new("/proc") => Step::Bind {
                path: path.clone(),
                writable: false,
            },
            _ => Step::Bind {
                path: path.clone(),
                writable: true,
            },
        };
        steps.push((path.clone(), step));
        mounted.push((path.clone(), *kind));
    }
    // Parents before children: a mount over a folder inside another mount.
    steps.sort_by(|(a, _), (b, _)| a.cmp(b));
    let mut steps: Vec<Step> = steps.into_iter().map(|(_, step)| step).collect();

    links.sort();
    links.dedup();
    steps.extend(
        links
            .into_iter()
            .map(|(at, target)| Step::Link { at, target }),
    );

    let inside = |path: &Path| mounted.iter().any(|(root, _)| path.starts_with(root));
    for path in &access.read_only {
        if let Some(resolved) = resolve(path, &mut Vec::new())
            && inside(&resolved)
        {
            steps.push(Step::ReadOnly(resolved));
        }
    }
    for path in &access.deny {
        if let Some(resolved) = resolve(path, &mut Vec::new())
            && inside(&resolved)
        {
            steps.push(Step::Hide(resolved));
        }
    }
    steps
}

/// Whether a mount of kind `above` already shows a path of kind `below`
/// inside it as that kind needs.
fn covers(above: Kind, below: Kind) -> bool {
    match below {
        // A file the command may write is bound itself: the folder above
        // it may be a read-only mount.
        Kind::File => above == Kind::Write,
        Kind::Read => true,
        Kind::Private => matches!(above, Kind::Private | Kind::Write),
        Kind::Write => above == Kind::Write,
    }
}

/// `path` with every symbolic link on the way followed (each recorded in
/// `links` as it is on the machine); `None` if it does not exist, is not
/// absolute, or loops.
fn resolve(path: &Path, links: &mut Vec<(PathBuf, PathBuf)>) -> Option<PathBuf> {
    let mut found = Vec::new();
    let resolved = resolve_recording(path, &mut found)?;
    links.extend(found);
    Some(resolved)
}

fn resolve_recording(path: &Path, links: &mut Vec<(PathBuf, PathBuf)>) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut pending: Vec<PathBuf> = components(path);
    pending.reverse();
    let mut done = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        if part == Path::new("..") {
            done.pop();
            continue;
        }
        let next = done.join(&part);
        let meta = std::fs::symlink_metadata(&next).ok()?;
        if !meta.file_type().is_symlink() {
            done = next;
            continue;
        }
        hops += 1;
        if hops > MAX_LINKS {
            return None;
        }
        let target = std::fs::read_link(&next).ok()?;
        links.push((next, target.clone()));
        if target.is_absolute() {
            done = PathBuf::from("/");
        }
        let mut more = components(&target);
        more.reverse();
        pending.extend(more);
    }
    Some(done)
}

/// The normal parts of `path`, and `..` where it goes up.
fn components(path: &Path) -> Vec<PathBuf> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(PathBuf::from(part)),
            Component::ParentDir => Some(PathBuf::from("..")),
            _ => None,
        })
        .collect()
}

/// Makes the root `plan` describes and moves this process into it. Must
/// run in a mount namespace of its own, whose mounts are private. The
/// working directory is kept (it must be inside what is listed).
pub fn build(steps: &[Step]) -> Result<(), SandboxError> {
    let cwd = std::env::current_dir().map_err(|e| fail("the working directory", e))?;
    // The new root is a tmpfs mounted over /tmp (in this namespace only);
    // after `pivot_root` the machine's root is below it at /.old, and the
    // machine's /tmp, no longer covered, at /.old/tmp.
    let base = Path::new("/tmp");
    mount(
        Some("tmpfs"),
        base,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755,size=16m"),
    )
    .map_err(|e| fail("the new root", e))?;
    std::fs::create_dir(base.join(".old")).map_err(|e| fail("the new root", e))?;
    nix::unistd::pivot_root(base, &base.join(".old")).map_err(|e| fail("pivot_root", e))?;
    std::env::set_current_dir("/").map_err(|e| fail("the new root", e))?;

    let old = Path::new("/.old");
    let new = Path::new("/");
    // The private layers' upper folders: a tmpfs unmounted (detached)
    // once the overlays hold it, so nothing can name it afterwards.
    let layers = Path::new("/.layers");
    let has_layers = steps.iter().any(|s| matches!(s, Step::Layer { .. }));
    if has_layers {
        std::fs::create_dir(layers).map_err(|e| fail("private layers", e))?;
        mount(
            Some("tmpfs"),
            layers,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=0700"),
        )
        .map_err(|e| fail("private layers", e))?;
    }
    for (n, step) in steps.iter().enumerate() {
        make(step, old, new, &layers.join(n.to_string()))?;
    }
    if has_layers {
        umount2(layers, MntFlags::MNT_DETACH).map_err(|e| fail("private layers", e))?;
        let _ = std::fs::remove_dir(layers);
    }
    umount2(old, MntFlags::MNT_DETACH).map_err(|e| fail("leaving the old root", e))?;
    std::fs::remove_dir(old).map_err(|e| fail("leaving the old root", e))?;
    // Nothing is made in the root itself.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        None::<&str>,
    )
    .map_err(|e| fail("the new root", e))?;
    std::env::set_current_dir(&cwd).map_err(|e| SandboxError::Apply {
        step: "the working directory",
        reason: format!(
            "{} is not among the folders the command may reach: {e}",
            cwd.display()
        ),
    })
}

fn fail(step: &'static str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Apply {
        step,
        reason: e.to_string(),
    }
}

/// `path` (absolute, the machine's) below `root`.
fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

fn make(step: &Step, old: &Path, new: &Path, layer: &Path) -> Result<(), SandboxError> {
    fn at(step: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SandboxError {
        let path = path.display().to_string();
        move |e| SandboxError::Apply {
            step,
            reason: format!("{path}: {e}"),
        }
    }
    fn nix_at(step: &'static str, path: &Path) -> impl FnOnce(nix::Error) -> SandboxError {
        let path = path.display().to_string();
        move |e| SandboxError::Apply {
            step,
            reason: format!("{path}: {e}"),
        }
    }
    match step {
        Step::Scratch(path) => {
            let dst = under(new, path);
            std::fs::create_dir_all(&dst).map_err(at("a private folder", path))?;
            scratch(&dst, "mode=1777").map_err(nix_at("a private folder", path))
        }
        Step::Bind { path, writable } => {
            let (src, dst) = (under(old, path), under(new, path));
            mount_point(&src, &dst).map_err(at("binding a path", path))?;
            bind(&src, &dst).map_err(nix_at("binding a path", path))?;
            if *writable {
                Ok(())
            } else {
                remount_read_only(&dst).map_err(nix_at("binding a path", path))
            }
        }
        Step::Layer { path, seed } => {
            let (src, dst) = (under(old, path), under(new, path));
            mount_point(&src, &dst).map_err(at("a private layer", path))?;
            let (upper, work) = (layer.join("upper"), layer.join("work"));
            for dir in [&upper, &work] {
                std::fs::create_dir_all(dir).map_err(at("a private layer", path))?;
            }
            if let Some(seed) = seed {
                lay(&under(old, seed), &upper, 0).map_err(at("a private layer's files", seed))?;
            }
            overlay(&src, &upper, &work, &dst).map_err(nix_at("a private layer", path))
        }
        Step::Devices => devices(old, new),
        Step::Link { at: link, target } => {
            let dst = under(new, link);
            if std::fs::symlink_metadata(&dst).is_ok() {
                return Ok(());
            }
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(at("a symbolic link", link))?;
            }
            std::os::unix::fs::symlink(target, &dst).map_err(at("a symbolic link", link))
        }
        Step::ReadOnly(path) => {
            let dst = under(new, path);
            read_only(&dst).map_err(nix_at("read-only paths", path))
        }
        Step::Hide(path) => {
            let dst = under(new, path);
            let hidden = if dst.is_dir() {
                mount(
                    Some("tmpfs"),
                    &dst,
                    Some("tmpfs"),
                    MsFlags::MS_RDONLY
                        | MsFlags::MS_NOSUID
                        | MsFlags::MS_NODEV
                        | MsFlags::MS_NOEXEC,
                    Some("mode=0000,size=4k"),
                )
            } else {
                bind(&under(old, Path::new("/dev/null")), &dst).and_then(|()| read_only(&dst))
            };
            hidden.map_err(nix_at("hidden paths", path))
        }
    }
}

/// How deep a seed's folders may go.
const MAX_SEED_DEPTH: usize = 32;

/// Copies the folder `from` into `to` (made as needed): folders and
/// regular files only, never following a link (a seed is Rein's own
/// scratch folder; anything else in it is refused).
fn lay(from: &Path, to: &Path, depth: usize) -> std::io::Result<()> {
    if depth > MAX_SEED_DEPTH {
        return Err(std::io::Error::other("folders nested too deep"));
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            lay(&entry.path(), &target, depth + 1)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else {
            return Err(std::io::Error::other(format!(
                "{} is neither a folder nor a file",
                entry.path().display()
            )));
        }
    }
    Ok(())
}

/// Makes `dst` like `src`: a folder, or an empty file to bind a file over.
fn mount_point(src: &Path, dst: &Path) -> std::io::Result<()> {
    if src.is_dir() {
        return std::fs::create_dir_all(dst);
    }
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if std::fs::symlink_metadata(dst).is_err() {
        std::fs::File::create(dst)?;
    }
    Ok(())
}

fn scratch(dst: &Path, options: &str) -> nix::Result<()> {
    mount(
        Some("tmpfs"),
        dst,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options),
    )
}

fn bind(src: &Path, dst: &Path) -> nix::Result<()> {
    mount(
        Some(src),
        dst,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
}

/// Binds `dst` over itself and makes that read-only, keeping the flags the
/// mount it is on has (a user namespace may not clear them).
pub(crate) fn read_only(dst: &Path) -> nix::Result<()> {
    bind(dst, dst)?;
    remount_read_only(dst)
}

/// Makes the mount at `dst` read-only.
fn remount_read_only(dst: &Path) -> nix::Result<()> {
    let kept = kept_flags(dst);
    mount(
        None::<&str>,
        dst,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
        None::<&str>,
    )
}

/// The flags of the mount `path` is on that a remount must keep.
fn kept_flags(path: &Path) -> MsFlags {
    use nix::sys::statvfs::{FsFlags, statvfs};
    let Ok(stat) = statvfs(path) else {
        return MsFlags::empty();
    };
    let flags = stat.flags();
    let mut kept = MsFlags::empty();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if flags.contains(fs) {
            kept |= ms;
        }
    }
    kept
}

/// An overlay of `lower` at `dst`, written to `upper`. A path overlayfs
/// cannot take as an option (a comma or colon in it) is refused.
fn overlay(lower: &Path, upper: &Path, work: &Path, dst: &Path) -> nix::Result<()> {
    let text = |p: &Path| {
        let s = p.to_str().unwrap_or(",");
        if s.contains([',', ':', '\\']) {
            None
        } else {
            Some(s.to_owned())
        }
    };
    let (Some(lower), Some(upper), Some(work)) = (text(lower), text(upper), text(work)) else {
        return Err(nix::Error::EINVAL);
    };
    mount(
        Some("overlay"),
        dst,
        Some("overlay"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(format!("lowerdir={lower},upperdir={upper},workdir={work},userxattr").as_str()),
    )
}

/// The command's `/dev`: a tmpfs with the usual device files bound from
/// the machine's, a pseudo-terminal instance of its own (the machine's
/// would reach the user's terminals), a private `/dev/shm`, and the
/// `/proc/self/fd` links.
fn devices(old: &Path, new: &Path) -> Result<(), SandboxError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| SandboxError::Apply {
        step: "the device folder",
        reason: format!("{what}: {e}"),
    };
    let dev = new.join("dev");
    std::fs::create_dir_all(&dev).map_err(|e| fail("/dev", &e))?;
    mount(
        Some("tmpfs"),
        &dev,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("mode=0755,size=1m"),
    )
    .map_err(|e| fail("/dev", &e))?;
    for name in DEVICES {
        let src = old.join("dev").join(name);
        if !src.exists() {
            continue;
        }
        let dst = dev.join(name);
        std::fs::File::create(&dst).map_err(|e| fail(name, &e))?;
        bind(&src, &dst).map_err(|e| fail(name, &e))?;
    }
    let pts = dev.join("pts");
    std::fs::create_dir(&pts).map_err(|e| fail("/dev/pts", &e))?;
    let own_pts = mount(
        Some("devpts"),
        &pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    );
    if own_pts.is_ok() {
        std::os::unix::fs::symlink("pts/ptmx", dev.join("ptmx")).map_err(|e| fail("ptmx", &e))?;
    }
    let shm = dev.join("shm");
    std::fs::create_dir(&shm).map_err(|e| fail("/dev/shm", &e))?;
    scratch(&shm, "mode=1777").map_err(|e| fail("/dev/shm", &e))?;
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(name)).map_err(|e| fail(name, &e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine in a temporary folder: the plan is made from what is
    /// there, with absolute paths below it.
    struct Machine(tempfile::TempDir);

    impl Machine {
        fn new() -> Self {
            Self(tempfile::tempdir().unwrap())
        }
        fn path(&self, rel: &str) -> PathBuf {
            self.0.path().canonicalize().unwrap().join(rel)
        }
        fn dir(&self, rel: &str) -> PathBuf {
            std::fs::create_dir_all(self.path(rel)).unwrap();
            self.path(rel)
        }
        fn shown(&self, steps: &[Step]) -> Vec<String> {
            let root = self.path("");
            let rel = |p: &Path| {
                p.strip_prefix(&root)
                    .map(|r| format!("~/{}", r.display()))
                    .unwrap_or_else(|_| p.display().to_string())
            };
            steps
                .iter()
                .map(|s| match s {
                    Step::Scratch(p) => format!("scratch {}", rel(p)),
                    Step::Bind {
                        path,
                        writable: true,
                    } => format!("bind {}", rel(path)),
                    Step::Bind {
                        path,
                        writable: false,
                    } => format!("bind {} (read-only)", rel(path)),
                    Step::Layer { path, seed: None } => format!("layer {}", rel(path)),
                    Step::Layer {
                        path,
                        seed: Some(seed),
                    } => format!("layer {} with {}", rel(path), rel(seed)),
                    Step::Devices => "devices".to_owned(),
                    Step::Link { at, target } => {
                        format!("link {} -> {}", rel(at), target.display())
                    }
                    Step::ReadOnly(p) => format!("read-only {}", rel(p)),
                    Step::Hide(p) => format!("hide {}", rel(p)),
                })
                .collect()
        }
    }

    #[test]
    fn the_root_holds_what_is_listed_with_the_links_on_the_way() {
        let m = Machine::new();
        let usr_bin = m.dir("usr/bin");
        std::os::unix::fs::symlink("usr/bin", m.path("bin")).unwrap();
        let home = m.dir("home");
        m.dir("home/.cargo/registry");
        std::fs::write(home.join(".cargo/.package-cache"), "").unwrap();
        m.dir("home/.ssh");
        m.dir("work/.git");
        m.dir("data/cache");
        std::os::unix::fs::symlink(m.path("data/cache"), m.path("home/.cache")).unwrap();
        let access = FileAccess {
            read: vec![
                m.path("bin"),
                usr_bin.join("sub-not-there"),
                home.join(".cargo"),
                m.path("work"),
            ],
            write: vec![m.path("work"), "/dev/shm".into()],
            files: vec!["/dev/null".into(), home.join(".cargo/.package-cache")],
            deny: vec![home.join(".ssh"), home.join(".cargo/credentials")],
            read_only: vec![m.path("work/.git"), m.path("work/.rein")],
            private_write: vec![home.join(".cargo/registry"), home.join(".cache")],
            seeds: Vec::new(),
        };
        let steps = plan(&access);
        assert_eq!(
            m.shown(&steps),
            [
                "devices",
                "scratch /tmp",
                // The machine's temporary folder holds this test's: the
                // listed folders are bound into the private /tmp.
                "layer ~/data/cache",
                "bind ~/home/.cargo (read-only)",
                "bind ~/home/.cargo/.package-cache",
                "layer ~/home/.cargo/registry",
                "bind ~/usr/bin (read-only)",
                "bind ~/work",
                "scratch /var/tmp",
                "link ~/bin -> usr/bin",
                format!("link ~/home/.cache -> {}", m.path("data/cache").display()).as_str(),
                "read-only ~/work/.git",
            ]
        );
    }

    #[test]
    fn a_path_listed_twice_takes_its_strongest_kind_and_inner_duplicates_go() {
        let m = Machine::new();
        let work = m.dir("work");
        m.dir("work/src");
        let cache = m.dir("cache");
        let access = FileAccess {
            read: vec![work.clone(), work.join("src"), cache.clone()],
            write: vec![work.clone(), cache.clone()],
            private_write: vec![cache.clone()],
            ..FileAccess::default()
        };
        let shown = m.shown(&plan(&access));
        assert!(shown.contains(&"bind ~/work".to_owned()), "{shown:?}");
        assert!(shown.contains(&"bind ~/cache".to_owned()), "{shown:?}");
        assert!(!shown.iter().any(|s| s.contains("work/src")), "{shown:?}");
        assert!(!shown.iter().any(|s| s.starts_with("layer")), "{shown:?}");
    }

    #[test]
    fn links_that_loop_or_paths_that_are_missing_are_left_out() {
        let m = Machine::new();
        std::os::unix::fs::symlink(m.path("b"), m.path("a")).unwrap();
        std::os::unix::fs::symlink(m.path("a"), m.path("b")).unwrap();
        let access = FileAccess {
            read: vec![m.path("a"), m.path("missing"), PathBuf::from("relative")],
            ..FileAccess::default()
        };
        let shown = m.shown(&plan(&access));
        assert_eq!(shown, ["scratch /tmp", "scratch /var/tmp"]);
    }

    #[test]
    fn a_seeded_layer_names_its_seed_and_keeps_its_read_only_paths() {
        let m = Machine::new();
        let work = m.dir("work");
        m.dir("work/.git");
        let seed = m.dir("seed");
        let access = FileAccess {
            read: vec![work.clone()],
            private_write: vec![work.clone()],
            read_only: vec![work.join(".git")],
            seeds: vec![crate::policy::Seed {
                target: work.clone(),
                from: seed,
            }],
            ..FileAccess::default()
        };
        let shown = m.shown(&plan(&access));
        assert!(
            shown.contains(&"layer ~/work with ~/seed".to_owned()),
            "{shown:?}"
        );
        assert!(
            shown.contains(&"read-only ~/work/.git".to_owned()),
            "{shown:?}"
        );
        // The seed folder itself is not in the command's root.
        assert!(
            !shown.iter().any(|s| s.starts_with("bind ~/seed")),
            "{shown:?}"
        );
    }

    #[test]
    fn the_machines_tmp_is_bound_only_when_granted() {
        let access = FileAccess {
            write: vec!["/tmp".into()],
            ..FileAccess::default()
        };
        let steps = plan(&access);
        assert!(
            steps.contains(&Step::Bind {
                path: "/tmp".into(),
                writable: true
            }),
            "{steps:?}"
        );
        assert!(!steps.contains(&Step::Scratch("/tmp".into())), "{steps:?}");
    }
}
