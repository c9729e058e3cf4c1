//! Compiled kernels kept on disk between runs. NVRTC takes ~20 s for the full model's kernels
//! (15 s of it the chunked GDN prefill), every time a process starts the CUDA backend; the
//! result depends only on the compiler's inputs, so it is cached under a hash of exactly those
//! (source with the shared header, every option including the model's `-D` dimensions, the
//! NVRTC version: `Nvrtc::cache_key`).
//!
//! Where: `LILY_KERNEL_CACHE` (a directory; `off` disables the cache), else
//! `$XDG_CACHE_HOME/lily/kernels`, else `$HOME/.cache/lily/kernels`. The cache is best effort:
//! a directory that cannot be created or written only costs the compile.

use std::path::{Path, PathBuf};

use crate::error::Result;

pub struct CubinCache {
    dir: Option<PathBuf>,
}

/// 64-bit FNV-1a: stable across Rust versions (std's hasher is not promised to be), which a
/// name on disk needs.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl CubinCache {
    pub fn from_env() -> CubinCache {
        let dir = match std::env::var_os("LILY_KERNEL_CACHE") {
            Some(v) if v == "off" => None,
            Some(v) => Some(PathBuf::from(v)),
            None => std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
                .map(|c| c.join("lily").join("kernels")),
        };
        CubinCache { dir }
    }

    pub fn at(dir: impl Into<PathBuf>) -> CubinCache {
        CubinCache {
            dir: Some(dir.into()),
        }
    }

    fn path(&self, key: &[u8]) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{:016x}.cubin", fnv1a64(key))))
    }

    /// The cubin for `key`: from disk when present (second value `true`), else from `compile`,
    /// then stored.
    pub fn get_or_compile(
        &self,
        key: &[u8],
        compile: impl FnOnce() -> Result<Vec<u8>>,
    ) -> Result<(Vec<u8>, bool)> {
        if let Some(bytes) = self.path(key).and_then(|p| std::fs::read(p).ok()) {
            if !bytes.is_empty() {
                return Ok((bytes, true));
            }
        }
        let bytes = compile()?;
        self.put(key, &bytes);
        Ok((bytes, false))
    }

    /// Stores `bytes` for `key` (also over a cached entry the driver refused). Written to a
    /// temporary file and renamed, so a reader never sees half a cubin.
    pub fn put(&self, key: &[u8], bytes: &[u8]) {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key)) else {
            return;
        };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&tmp, bytes))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!(dir = %dir.display(), "kernel cache not written: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CudaError;

    fn temp_dir(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lily-cubin-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_second_lookup_of_the_same_key_does_not_compile() {
        let dir = temp_dir("hit");
        let cache = CubinCache::at(&dir);
        let (first, cached) = cache.get_or_compile(b"key", || Ok(vec![1, 2, 3])).unwrap();
        assert_eq!((first, cached), (vec![1, 2, 3], false));
        let (again, cached) = cache
            .get_or_compile(b"key", || panic!("compiled twice"))
            .unwrap();
        assert_eq!((again, cached), (vec![1, 2, 3], true));
        // Any other input (another dimension, source or option) is another entry.
        let (other, cached) = cache.get_or_compile(b"key2", || Ok(vec![9])).unwrap();
        assert_eq!((other, cached), (vec![9], false));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_unusable_or_disabled_cache_still_compiles_and_errors_pass_through() {
        let file = temp_dir("blocked");
        std::fs::write(&file, b"not a directory").unwrap();
        // The cache directory would be below a file: nothing can be written.
        let blocked = CubinCache::at(file.join("kernels"));
        for cache in [blocked, CubinCache { dir: None }] {
            for _ in 0..2 {
                let (bytes, cached) = cache.get_or_compile(b"k", || Ok(vec![7])).unwrap();
                assert_eq!((bytes, cached), (vec![7], false));
            }
            let err = cache
                .get_or_compile(b"k", || Err(CudaError::Invalid("broken source".into())))
                .unwrap_err();
            assert!(err.to_string().contains("broken source"), "{err}");
        }
        std::fs::remove_file(file).unwrap();
    }

    #[test]
    fn a_refused_entry_is_replaced() {
        let dir = temp_dir("replace");
        let cache = CubinCache::at(&dir);
        cache.put(b"k", b"garbage");
        cache.put(b"k", &[4, 5]);
        let (bytes, cached) = cache.get_or_compile(b"k", || panic!("cached")).unwrap();
        assert_eq!((bytes, cached), (vec![4, 5], true));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
