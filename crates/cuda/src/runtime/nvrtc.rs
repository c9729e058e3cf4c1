//! Run-time kernel compilation with NVRTC, loaded at run time like the driver. Kernels are
//! compiled for the exact model dimensions (passed as `-D` macros), so loop bounds are
//! compile-time constants and register arrays stay in registers.
//!
//! Where NVRTC lives: `LILY_NVRTC` (a full path) first, then the loader's search path.
//! The PyPI wheel `nvidia-cuda-nvrtc` (13.x) puts it at `nvidia/cu13/lib/libnvrtc.so.13`.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use libloading::Library;

use crate::runtime::driver::load_first;
use crate::error::{CudaError, Result};

type Prog = *mut std::ffi::c_void;
type Status = i32;

const NVRTC_NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// The target Lily's kernels are written for: Hopper with its architecture-specific features.
pub const TARGET_ARCH: &str = "sm_90a";
/// The same target as a virtual architecture, for PTX.
pub const TARGET_PTX_ARCH: &str = "compute_90a";

pub struct Nvrtc {
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        i32,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(Prog, i32, *const *const c_char) -> Status,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> Status,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut Prog) -> Status,
    version: unsafe extern "C" fn(*mut i32, *mut i32) -> Status,
    _lib: Library,
}

#[derive(Clone, Copy)]
enum Output {
    Cubin,
    Ptx,
}

unsafe impl Send for Nvrtc {}
unsafe impl Sync for Nvrtc {}

macro_rules! sym {
    ($lib:expr, $name:literal) => {
        *$lib
            .get(concat!($name, "\0").as_bytes())
            .map_err(|e: libloading::Error| CudaError::MissingSymbol {
                library: "libnvrtc",
                symbol: $name,
                reason: e.to_string(),
            })?
    };
}

impl Nvrtc {
    /// The process-wide NVRTC, loaded on first use.
    pub fn get() -> Result<&'static Nvrtc> {
        static NVRTC: OnceLock<std::result::Result<Nvrtc, String>> = OnceLock::new();
        NVRTC
            .get_or_init(|| Nvrtc::load().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| CudaError::LibraryNotFound {
                library: "libnvrtc",
                tried: "see reason".into(),
                reason: e.clone(),
            })
    }

    fn load() -> Result<Nvrtc> {
        let lib = load_first("libnvrtc", NVRTC_NAMES, Some("LILY_NVRTC"))?;
        unsafe {
            Ok(Nvrtc {
                create: sym!(lib, "nvrtcCreateProgram"),
                compile: sym!(lib, "nvrtcCompileProgram"),
                log_size: sym!(lib, "nvrtcGetProgramLogSize"),
                log: sym!(lib, "nvrtcGetProgramLog"),
                cubin_size: sym!(lib, "nvrtcGetCUBINSize"),
                cubin: sym!(lib, "nvrtcGetCUBIN"),
                ptx_size: sym!(lib, "nvrtcGetPTXSize"),
                ptx: sym!(lib, "nvrtcGetPTX"),
                destroy: sym!(lib, "nvrtcDestroyProgram"),
                version: sym!(lib, "nvrtcVersion"),
                _lib: lib,
            })
        }
    }

    pub fn version(&self) -> (i32, i32) {
        let (mut a, mut b) = (0, 0);
        unsafe { (self.version)(&mut a, &mut b) };
        (a, b)
    }

    /// Everything the compiler sees: the full source text and the options.
    fn inputs(source: &str, arch: &str, defines: &[(&str, i64)]) -> (String, Vec<String>) {
        let full = source.to_string();
        let mut options = vec![
            format!("--gpu-architecture={arch}"),
            "--std=c++17".to_string(),
            "-default-device".to_string(),
            "--use_fast_math".to_string(),
        ];
        options.extend(defines.iter().map(|(k, v)| format!("-D{k}={v}")));
        (full, options)
    }

    /// The key the cubin of `compile(name, source, arch, defines)` is cached under: every input
    /// of the compile and the compiler's version, so nothing that changes the output can hit
    /// a stale entry.
    pub fn cache_key(
        &self,
        name: &str,
        source: &str,
        arch: &str,
        defines: &[(&str, i64)],
    ) -> Vec<u8> {
        let (full, options) = Self::inputs(source, arch, defines);
        let (major, minor) = self.version();
        let mut key = format!("nvrtc {major}.{minor}\0{name}\0").into_bytes();
        for part in std::iter::once(&full).chain(&options) {
            key.extend_from_slice(part.as_bytes());
            key.push(0);
        }
        key
    }

    /// Compiles `source` (complete: what it includes is in it) to a cubin for `arch`,
    /// with each `(name, value)` of `defines` as a `-D` macro.
    pub fn compile(
        &self,
        name: &str,
        source: &str,
        arch: &str,
        defines: &[(&str, i64)],
    ) -> Result<Vec<u8>> {
        self.build(name, source, arch, defines, Output::Cubin)
    }

    /// The PTX of the same compile for the virtual target (`TARGET_PTX_ARCH`): what a change
    /// that should leave the generated code alone can be compared by without a GPU.
    pub fn ptx(&self, name: &str, source: &str, defines: &[(&str, i64)]) -> Result<String> {
        let mut ptx = self.build(name, source, TARGET_PTX_ARCH, defines, Output::Ptx)?;
        // NVRTC counts the terminating NUL in the PTX size.
        while ptx.last() == Some(&0) {
            ptx.pop();
        }
        String::from_utf8(ptx).map_err(|_| CudaError::Invalid(format!("{name}: PTX is not UTF-8")))
    }

    fn build(
        &self,
        name: &str,
        source: &str,
        arch: &str,
        defines: &[(&str, i64)],
        output: Output,
    ) -> Result<Vec<u8>> {
        let (full, options) = Self::inputs(source, arch, defines);
        let nul = |_| CudaError::Invalid(format!("{name} contains NUL"));
        let csrc = CString::new(full).map_err(nul)?;
        let cname = CString::new(name).map_err(nul)?;
        let options: Vec<CString> = options
            .into_iter()
            .map(CString::new)
            .collect::<std::result::Result<_, _>>()
            .map_err(nul)?;
        let opt_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let err = |call, code| CudaError::Nvrtc {
            call,
            code,
            source_name: name.to_string(),
        };
        unsafe {
            let mut prog: Prog = std::ptr::null_mut();
            let code = (self.create)(
                &mut prog,
                csrc.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if code != 0 {
                return Err(err("nvrtcCreateProgram", code));
            }
            let compiled = (self.compile)(prog, opt_ptrs.len() as i32, opt_ptrs.as_ptr());
            let mut size = 0usize;
            (self.log_size)(prog, &mut size);
            let mut log = vec![0u8; size.max(1)];
            (self.log)(prog, log.as_mut_ptr() as *mut c_char);
            let log = String::from_utf8_lossy(&log[..size.saturating_sub(1)]).into_owned();
            if compiled != 0 {
                (self.destroy)(&mut prog);
                return Err(CudaError::Compile {
                    source_name: name.to_string(),
                    arch: arch.to_string(),
                    log,
                });
            }
            if !log.trim().is_empty() {
                tracing::warn!(kernel = name, "NVRTC: {log}");
            }
            let (size_fn, size_call, get_fn, get_call) = match output {
                Output::Cubin => (
                    self.cubin_size,
                    "nvrtcGetCUBINSize",
                    self.cubin,
                    "nvrtcGetCUBIN",
                ),
                Output::Ptx => (self.ptx_size, "nvrtcGetPTXSize", self.ptx, "nvrtcGetPTX"),
            };
            let mut n = 0usize;
            let code = size_fn(prog, &mut n);
            if code != 0 {
                (self.destroy)(&mut prog);
                return Err(err(size_call, code));
            }
            let mut out = vec![0u8; n];
            let code = get_fn(prog, out.as_mut_ptr() as *mut c_char);
            (self.destroy)(&mut prog);
            if code != 0 {
                return Err(err(get_call, code));
            }
            Ok(out)
        }
    }
}
