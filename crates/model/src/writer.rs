//! Writing a safetensors file one tensor at a time: the header (every tensor's name, dtype, shape
//! and byte range) is fixed when the file is created, and each tensor's bytes are then written
//! at their offset in any order, so a file of any size needs one tensor in memory.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{ModelError, Result};
use crate::tensor::DType;

/// One tensor of a file to be written.
#[derive(Debug, Clone)]
pub struct TensorEntry {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl TensorEntry {
    pub fn byte_len(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.size()
    }
}

pub struct SafetensorsWriter {
    file: File,
    path: PathBuf,
    /// name -> (absolute file offset, byte length, written yet)
    slots: HashMap<String, (u64, usize, bool)>,
}

impl SafetensorsWriter {
    /// Creates `path` with the header for `entries`. The data is laid out widest dtype first
    /// (then by name), so every tensor starts aligned to its element size, as Python's
    /// safetensors writer does.
    pub fn create(path: &Path, entries: &[TensorEntry]) -> Result<SafetensorsWriter> {
        let io = |source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut order: Vec<&TensorEntry> = entries.iter().collect();
        order.sort_by(|a, b| {
            b.dtype
                .size()
                .cmp(&a.dtype.size())
                .then(a.name.cmp(&b.name))
        });
        let mut header = serde_json::Map::new();
        header.insert("__metadata__".into(), serde_json::json!({ "format": "pt" }));
        let mut offsets = Vec::with_capacity(order.len());
        let mut end = 0usize;
        for e in &order {
            let start = end;
            end += e.byte_len();
            header.insert(
                e.name.clone(),
                serde_json::json!({
                    "dtype": e.dtype.to_string(),
                    "shape": e.shape,
                    "data_offsets": [start, end],
                }),
            );
            offsets.push(start);
        }
        let mut header = serde_json::Value::Object(header).to_string().into_bytes();
        while header.len() % 8 != 0 {
            header.push(b' ');
        }
        let data_start = 8 + header.len() as u64;
        let mut file = File::create(path).map_err(io)?;
        file.write_all(&(header.len() as u64).to_le_bytes())
            .and_then(|_| file.write_all(&header))
            .and_then(|_| file.set_len(data_start + end as u64))
            .map_err(io)?;
        let slots = order
            .iter()
            .zip(offsets)
            .map(|(e, start)| {
                (
                    e.name.clone(),
                    (data_start + start as u64, e.byte_len(), false),
                )
            })
            .collect();
        Ok(SafetensorsWriter {
            file,
            path: path.to_path_buf(),
            slots,
        })
    }

    /// Writes tensor `name`'s bytes. Panics if `name` is not in the header, was written already,
    /// or `bytes` has the wrong length: the caller planned the header.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let slot = self
            .slots
            .get_mut(name)
            .unwrap_or_else(|| panic!("{name} is not in the header"));
        assert!(!slot.2, "{name} written twice");
        assert_eq!(bytes.len(), slot.1, "{name}: byte length");
        slot.2 = true;
        let offset = slot.0;
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.write_all(bytes))
            .map_err(|source| ModelError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// Flushes the file to disk. Panics if a tensor of the header was never written.
    pub fn finish(self) -> Result<()> {
        if let Some((name, _)) = self.slots.iter().find(|(_, s)| !s.2) {
            panic!("{name} was never written");
        }
        self.file.sync_all().map_err(|source| ModelError::Io {
            path: self.path,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::Checkpoint;

    #[test]
    fn written_files_read_back_aligned_in_any_write_order() {
        let dir = std::env::temp_dir().join(format!("lily-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.safetensors");
        let entries = [
            TensorEntry {
                name: "q".into(),
                dtype: DType::F8E4M3,
                shape: vec![3, 5],
            },
            TensorEntry {
                name: "s".into(),
                dtype: DType::F32,
                shape: vec![2],
            },
            TensorEntry {
                name: "b".into(),
                dtype: DType::BF16,
                shape: vec![3],
            },
        ];
        let mut w = SafetensorsWriter::create(&path, &entries).unwrap();
        w.write("q", &[7; 15]).unwrap();
        w.write("b", &[0x80, 0x3f, 0, 0x40, 0, 0xc0]).unwrap();
        w.write("s", &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]).unwrap();
        w.finish().unwrap();
        let ck = Checkpoint::open_file(&path).unwrap();
        assert_eq!(ck.get("s").unwrap().to_f32_vec(), vec![1.0, 2.0]);
        assert_eq!(ck.get("b").unwrap().to_f32_vec(), vec![1.0, 2.0, -2.0]);
        assert_eq!(ck.get("q").unwrap().bytes(), &[7; 15]);
        let bytes = std::fs::read(&path).unwrap();
        let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let s_offset = bytes.len() - header_len - 8 - 15 - 6 - 8;
        assert_eq!((header_len % 8, s_offset % 4), (0, 0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
