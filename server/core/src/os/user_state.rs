//! The user's own Rein state, outside every workspace
//! (`$XDG_STATE_HOME/rein/`, else `~/.local/state/rein/`): the trust
//! decisions about workspaces and this installation's id. Nothing a
//! repository carries can write here, which is the point: a decision kept
//! in the workspace could be committed by whoever wrote the workspace.
//!
//! - `trust.json`: per workspace (its canonical path), whether the user
//!   trusts its own settings and the fingerprint of the file that decision
//!   was about. A changed file is a new question (as Neovim's `:trust`).
//! - `installation-id`: a random id made once. Tasks record the id of the
//!   installation that created them; only that one resumes them unasked.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic;

const TRUST_FILE: &str = "trust.json";
const INSTALLATION_FILE: &str = "installation-id";
const FORMAT_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum UserStateError {
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
}

/// One decision about a workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub trusted: bool,
    /// The fingerprint of the settings file the user decided about.
    pub fingerprint: String,
    pub decided_ms: i64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    /// Canonical workspace path → the decision.
    workspaces: BTreeMap<String, Decision>,
}

/// The user's state directory.
#[derive(Clone, Debug)]
pub struct UserState {
    dir: PathBuf,
}

impl UserState {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The user's decision about `root`'s settings, if it was about the
    /// file with this `fingerprint`.
    pub fn decision(&self, root: &Path, fingerprint: &str) -> Option<Decision> {
        self.read_trust()
            .workspaces
            .remove(&key(root))
            .filter(|d| d.fingerprint == fingerprint)
    }

    /// Any decision about `root`, whatever file it was about.
    pub fn last_decision(&self, root: &Path) -> Option<Decision> {
        self.read_trust().workspaces.remove(&key(root))
    }

    /// Records the user's decision about `root`'s settings file.
    pub fn record(
        &self,
        root: &Path,
        fingerprint: &str,
        trusted: bool,
    ) -> Result<(), UserStateError> {
        let mut file = self.read_trust();
        file.version = FORMAT_VERSION;
        file.workspaces.insert(
            key(root),
            Decision {
                trusted,
                fingerprint: fingerprint.to_owned(),
                decided_ms: rein_store::now_ms(),
            },
        );
        let bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
        let path = self.dir.join(TRUST_FILE);
        self.make_dir()?;
        atomic::replace(&path, &bytes, Some(fs::Permissions::from_mode(0o600)))
            .map_err(|source| UserStateError::Write { path, source })
    }

    /// Forgets the decision about `root`: the next task asks again.
    pub fn forget(&self, root: &Path) -> Result<(), UserStateError> {
        let mut file = self.read_trust();
        if file.workspaces.remove(&key(root)).is_none() {
            return Ok(());
        }
        let bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
        let path = self.dir.join(TRUST_FILE);
        atomic::replace(&path, &bytes, Some(fs::Permissions::from_mode(0o600)))
            .map_err(|source| UserStateError::Write { path, source })
    }

    /// A damaged or unreadable file is no decision (so the user is asked
    /// again), never a trust. It is moved aside on the next write rather
    /// than silently lost.
    fn read_trust(&self) -> TrustFile {
        let path = self.dir.join(TRUST_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return TrustFile::default(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read the trust decisions");
                return TrustFile::default();
            }
        };
        match serde_json::from_slice::<TrustFile>(&bytes) {
            Ok(file) if file.version <= FORMAT_VERSION => file,
            Ok(file) => {
                tracing::warn!(path = %path.display(), version = file.version, "the trust decisions were written by a newer Rein; ignoring them");
                TrustFile::default()
            }
            Err(error) => {
                let aside = path.with_extension(format!("json.damaged-{}", rein_store::now_ms()));
                tracing::warn!(path = %path.display(), %error, aside = %aside.display(), "the trust decisions are damaged; moving them aside");
                let _ = fs::rename(&path, &aside);
                TrustFile::default()
            }
        }
    }

    /// This installation's id if it was made already (reading only).
    pub fn existing_installation_id(&self) -> Option<String> {
        read_id(&self.dir.join(INSTALLATION_FILE)).ok().flatten()
    }

    /// This installation's id, made (randomly, once) on first use.
    pub fn installation_id(&self) -> Result<String, UserStateError> {
        let path = self.dir.join(INSTALLATION_FILE);
        if let Some(id) = read_id(&path)? {
            return Ok(id);
        }
        self.make_dir()?;
        let id = random_id();
        // Never replacing one there: two processes making the id at once
        // agree on whichever came first.
        let made = atomic::create_new(
            &path,
            id.as_bytes(),
            Some(fs::Permissions::from_mode(0o600)),
        );
        match made {
            Ok(true) => Ok(id),
            Ok(false) => read_id(&path)?.ok_or(UserStateError::Read {
                path,
                source: io::Error::new(io::ErrorKind::InvalidData, "empty installation id"),
            }),
            Err(source) => Err(UserStateError::Write { path, source }),
        }
    }

    fn make_dir(&self) -> Result<(), UserStateError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|source| UserStateError::Write {
                path: self.dir.clone(),
                source,
            })
    }
}

fn read_id(path: &Path) -> Result<Option<String>, UserStateError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text.trim().to_owned()).filter(|id| !id.is_empty())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(UserStateError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The key of a workspace: its canonical path, so `./proj`, a symlink to it
/// and `/home/u/proj` are one workspace.
fn key(root: &Path) -> String {
    fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// 128 random bits from the kernel, in hex. Without `/dev/urandom` (not a
/// Unix we know), a hash of what differs between processes and moments:
/// unguessable enough that a repository cannot claim to be ours.
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    let read =
        fs::File::open("/dev/urandom").and_then(|mut f| io::Read::read_exact(&mut f, &mut bytes));
    if read.is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let seed = format!("{now:?}:{}:{:p}", std::process::id(), &bytes);
        let hash = rein_text::ContentHash::of_bytes(seed.as_bytes()).to_hex();
        return hash[..32].to_owned();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_holds_for_the_file_it_was_about_only() {
        let state_dir = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let state = UserState::new(state_dir.path().join("rein"));
        assert_eq!(state.decision(workspace.path(), "f1"), None);
        state.record(workspace.path(), "f1", true).unwrap();
        assert!(state.decision(workspace.path(), "f1").unwrap().trusted);
        // The file changed: a new question.
        assert_eq!(state.decision(workspace.path(), "f2"), None);
        state.record(workspace.path(), "f2", false).unwrap();
        assert!(!state.decision(workspace.path(), "f2").unwrap().trusted);
        state.forget(workspace.path()).unwrap();
        assert_eq!(state.last_decision(workspace.path()), None);
        let mode = fs::metadata(state_dir.path().join("rein/trust.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_damaged_trust_file_trusts_nothing_and_is_kept_aside() {
        let state_dir = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        fs::write(state_dir.path().join("trust.json"), "{not json").unwrap();
        let state = UserState::new(state_dir.path());
        assert_eq!(state.decision(workspace.path(), "f"), None);
        state.record(workspace.path(), "f", true).unwrap();
        let names: Vec<String> = fs::read_dir(state_dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("trust.json.damaged-")),
            "{names:?}"
        );
    }

    #[test]
    fn the_installation_id_is_made_once_and_random() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let first = UserState::new(a.path()).installation_id().unwrap();
        assert_eq!(UserState::new(a.path()).installation_id().unwrap(), first);
        assert_eq!(first.len(), 32);
        assert_ne!(UserState::new(b.path()).installation_id().unwrap(), first);
    }

    #[test]
    fn processes_racing_to_make_the_id_agree() {
        let dir = tempfile::tempdir().unwrap();
        let ids: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| UserState::new(dir.path()).installation_id().unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    }
}
