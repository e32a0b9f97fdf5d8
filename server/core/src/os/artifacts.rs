//! Task artifacts on disk, under `<workspace>/.rein/artifacts/<task>/`,
//! redacted: whatever a caller hands in (a request, a spilled output, an
//! archived history), no secret reaches the file.

use std::path::PathBuf;

use async_trait::async_trait;
use rein_models::Redactor;

use crate::ports::Artifacts;

pub struct DiskArtifacts {
    root: PathBuf,
    redactor: Redactor,
}

impl DiskArtifacts {
    /// `root` is the workspace root; paths given to `write` are relative to it.
    pub fn new(root: impl Into<PathBuf>, redactor: Redactor) -> Self {
        Self {
            root: root.into(),
            redactor,
        }
    }
}

#[async_trait]
impl Artifacts for DiskArtifacts {
    async fn write(&self, rel_path: &str, content: &str) -> Result<(), String> {
        // JSON callers redact before serializing (`Redactor::json`); this
        // pass then finds nothing, and catches what they missed.
        let content = self.redactor.redact(content).into_owned();
        self.write_under_state(rel_path, content.into_bytes()).await
    }

    async fn write_bytes(&self, rel_path: &str, bytes: &[u8]) -> Result<(), String> {
        self.write_under_state(rel_path, bytes.to_vec()).await
    }
}

impl DiskArtifacts {
    async fn write_under_state(&self, rel_path: &str, bytes: Vec<u8>) -> Result<(), String> {
        // Artifacts live under .rein/ only: a bug elsewhere must not make
        // this a way to write into the user's files.
        if !rel_path.starts_with(".rein/") || rel_path.split('/').any(|c| c == "..") {
            return Err(format!(
                "refusing to write an artifact outside .rein/: {rel_path}"
            ));
        }
        let path = self.root.join(rel_path);
        let root = self.root.clone();
        let under_state = rel_path.trim_start_matches(".rein/").to_owned();
        tokio::task::spawn_blocking(move || {
            // Opened beneath `.rein/` in one step, never through a link.
            rein_store::state_dir(&root)
                .and_then(|state| state.replace(&under_state, &bytes, None))
                .map_err(|e| format!("{}: {e}", path.display()))
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_under_rein_only() {
        let dir = tempfile::tempdir().unwrap();
        let key = "artifact-secret-0123".to_owned();
        let artifacts = DiskArtifacts::new(dir.path(), Redactor::new([], [key]));
        artifacts
            .write(".rein/artifacts/t-1/out.txt", "hello")
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".rein/artifacts/t-1/out.txt")).unwrap(),
            "hello"
        );
        artifacts
            .write(
                ".rein/artifacts/t-1/secret.txt",
                "key artifact-secret-0123\n",
            )
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".rein/artifacts/t-1/secret.txt")).unwrap(),
            "key <redacted>\n"
        );
        assert!(artifacts.write("src/main.rs", "x").await.is_err());
        assert!(artifacts.write(".rein/../src/main.rs", "x").await.is_err());
    }
}
