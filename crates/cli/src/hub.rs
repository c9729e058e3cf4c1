//! `--model` as a directory or as a Hugging Face repo id (`Qwen/Qwen3.6-35B-A3B`), found in
//! the local hub cache as `huggingface-cli download` leaves it: never downloaded. The cache is
//! `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
//! `~/.cache/huggingface/hub`; a repo is `models--{owner}--{name}`, whose `refs/{revision}`
//! holds the commit whose files are in `snapshots/{commit}`.

use std::path::{Path, PathBuf};

use anyhow::bail;

/// Where a model's files are, and the name it goes by.
pub struct ModelSource {
    pub dir: PathBuf,
    /// The repo id when `--model` was one.
    pub repo_id: Option<String>,
}

/// The hub cache directory and which setting chose it (for error messages).
fn hub_cache() -> (PathBuf, String) {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("HF_HUB_CACHE") {
        return (dir, "HF_HUB_CACHE".into());
    }
    if let Some(home) = var("HF_HOME") {
        return (home.join("hub"), "HF_HOME/hub".into());
    }
    if let Some(xdg) = var("XDG_CACHE_HOME") {
        return (xdg.join("huggingface/hub"), "XDG_CACHE_HOME/huggingface/hub".into());
    }
    let home = var("HOME").unwrap_or_else(|| PathBuf::from("~"));
    (home.join(".cache/huggingface/hub"), "the default, ~/.cache/huggingface/hub".into())
}

/// `owner/name` with the characters the Hub allows, and nothing that reads as a path.
fn is_repo_id(s: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '-'])
            && part.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    };
    matches!(s.split_once('/'), Some((owner, name)) if ok(owner) && ok(name))
}

/// `model` as a directory when one exists there, else as a repo id in the hub cache at
/// `revision` (a branch or tag under `refs/`, or a commit hash).
pub fn resolve(model: &str, revision: &str) -> anyhow::Result<ModelSource> {
    let path = Path::new(model);
    if path.is_dir() {
        return Ok(ModelSource { dir: path.to_path_buf(), repo_id: None });
    }
    if !is_repo_id(model) {
        bail!("--model {model}: no such directory (a Hugging Face repo id looks like Qwen/Qwen3.6-35B-A3B)");
    }
    let (cache, chosen_by) = hub_cache();
    let dir = snapshot(&cache, &chosen_by, model, revision)?;
    Ok(ModelSource { dir, repo_id: Some(model.to_string()) })
}

/// The snapshot directory of repo `model` at `revision` in the hub cache `cache`.
fn snapshot(cache: &Path, chosen_by: &str, model: &str, revision: &str) -> anyhow::Result<PathBuf> {
    let repo = cache.join(format!("models--{}", model.replace('/', "--")));
    let reference = repo.join("refs").join(revision);
    let commit = match std::fs::read_to_string(&reference) {
        Ok(commit) => commit.trim().to_string(),
        // A commit hash names its snapshot directly.
        Err(_) if repo.join("snapshots").join(revision).is_dir() => revision.to_string(),
        Err(_) => bail!(
            "--model {model}: not a directory, and not in the Hugging Face cache: looked for {} \
             and {} (the cache is {}, from {chosen_by}; HF_HUB_CACHE or HF_HOME choose another). \
             Lily never downloads: fetch it first (`huggingface-cli download {model}`) or give --model a directory",
            reference.display(),
            repo.join("snapshots").join(revision).display(),
            cache.display(),
        ),
    };
    let dir = repo.join("snapshots").join(&commit);
    if !dir.join("config.json").exists() {
        bail!(
            "--model {model}: revision {revision} is commit {commit}, but {} has no config.json (an unfinished download?)",
            dir.display()
        );
    }
    Ok(dir)
}

/// `--model` of the subcommands other than `serve`, as a clap value parser: the directory, or
/// the repo id's `main` snapshot in the hub cache.
pub fn model_dir(model: &str) -> anyhow::Result<PathBuf> {
    resolve(model, "main").map(|source| source.dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_are_owner_slash_name() {
        assert!(is_repo_id("Qwen/Qwen3.6-35B-A3B"));
        assert!(is_repo_id("some_org/model.v2"));
        for not in ["Qwen", "./Qwen/x", "/abs/path", "a/b/c", "Qwen/", "../x", "a b/c"] {
            assert!(!is_repo_id(not), "{not}");
        }
    }

    #[test]
    fn a_revision_is_a_ref_or_a_commit_and_an_unfinished_download_is_named() {
        let cache = std::env::temp_dir().join(format!("lily-hub-unit-{}", std::process::id()));
        let repo = cache.join("models--acme--m");
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots/aaa")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots/bbb")).unwrap();
        std::fs::write(repo.join("snapshots/aaa/config.json"), "{}").unwrap();
        std::fs::write(repo.join("refs/main"), "aaa\n").unwrap();
        std::fs::write(repo.join("refs/partial"), "bbb").unwrap();
        assert_eq!(snapshot(&cache, "test", "acme/m", "main").unwrap(), repo.join("snapshots/aaa"));
        assert_eq!(snapshot(&cache, "test", "acme/m", "aaa").unwrap(), repo.join("snapshots/aaa"), "a commit hash");
        let e = snapshot(&cache, "test", "acme/m", "partial").unwrap_err().to_string();
        assert!(e.contains("bbb") && e.contains("no config.json"), "{e}");
        let e = snapshot(&cache, "test", "acme/other", "main").unwrap_err().to_string();
        assert!(e.contains(&repo.with_file_name("models--acme--other").join("refs/main").display().to_string()), "{e}");
        std::fs::remove_dir_all(&cache).unwrap();
    }
}
