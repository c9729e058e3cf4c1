//! The audit log: one JSON line per routed chat request, saying what the gate decided and
//! where the request went. It holds categories, counts, statuses and timings, never a value
//! from the request or the reply.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use lily_gate::Category;
use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditRecord {
    /// Unix time in seconds, millisecond precision.
    pub time: f64,
    pub request_id: String,
    /// The gate's decision; absent when the request was sent to the local model by name or
    /// header (the gate is not asked then: nothing leaves).
    pub decision: Option<&'static str>,
    pub forced_local: bool,
    pub categories: Vec<Category>,
    /// Parts the gate could not read (images, audio, files).
    pub unreadable: usize,
    /// Where it was served: `cloud`, `cloud-masked`, `local`, or `none` (refused, or held
    /// for consent).
    pub destination: &'static str,
    /// Findings the policy masks, and the distinct placeholders sent for them.
    pub masked_spans: usize,
    pub placeholders: usize,
    /// `asked`, `granted`, or why a presented consent was rejected.
    pub consent: Option<&'static str>,
    pub upstream_status: Option<u16>,
    /// From sending the request upstream to its response headers.
    pub upstream_latency_ms: Option<f64>,
    /// Why the local model answered instead of, or after, the upstream.
    pub fallback: Option<&'static str>,
}

pub struct AuditLog {
    file: Mutex<File>,
}

impl AuditLog {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self { file: Mutex::new(file) })
    }

    /// Appends one line; a failure to write is logged, not fatal to the request.
    pub fn write(&self, record: &AuditRecord) {
        let mut line = match serde_json::to_vec(record) {
            Ok(l) => l,
            Err(e) => return tracing::error!(error = %e, "audit record not serialisable"),
        };
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(&line) {
            tracing::error!(error = %e, "cannot write the audit log");
        }
    }
}
