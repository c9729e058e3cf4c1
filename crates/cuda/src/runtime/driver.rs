//! The CUDA driver API, loaded at run time (`libcuda.so.1`), so that this crate builds and its
//! host code is tested on machines without a GPU. Only the calls Lily uses are bound.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

use libloading::Library;

use crate::error::{CudaError, Result};

type CuResult = i32;
type Handle = *mut c_void;
pub type DevicePtr = u64;

/// Device attributes Lily reads (values from `cuda.h`, stable across CUDA versions).
const ATTR_MULTIPROCESSOR_COUNT: i32 = 16;
const ATTR_COMPUTE_CAPABILITY_MAJOR: i32 = 75;
const ATTR_COMPUTE_CAPABILITY_MINOR: i32 = 76;
const FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
const STREAM_NON_BLOCKING: u32 = 1;
const STREAM_CAPTURE_MODE_THREAD_LOCAL: i32 = 1;

macro_rules! driver_api {
    ($( $field:ident : $sym:literal => fn($($arg:ty),*); )*) => {
        struct Api {
            $( $field: unsafe extern "C" fn($($arg),*) -> CuResult, )*
            _lib: Library,
        }
        impl Api {
            fn load(lib: Library) -> Result<Api> {
                unsafe {
                    Ok(Api {
                        $( $field: *lib
                            .get::<unsafe extern "C" fn($($arg),*) -> CuResult>(concat!($sym, "\0").as_bytes())
                            .map_err(|e| CudaError::MissingSymbol {
                                library: "libcuda",
                                symbol: $sym,
                                reason: e.to_string(),
                            })?, )*
                        _lib: lib,
                    })
                }
            }
        }
    };
}

driver_api! {
    init: "cuInit" => fn(u32);
    driver_version: "cuDriverGetVersion" => fn(*mut i32);
    device_get: "cuDeviceGet" => fn(*mut i32, i32);
    device_attribute: "cuDeviceGetAttribute" => fn(*mut i32, i32, i32);
    device_name: "cuDeviceGetName" => fn(*mut c_char, i32, i32);
    primary_ctx_retain: "cuDevicePrimaryCtxRetain" => fn(*mut Handle, i32);
    ctx_set_current: "cuCtxSetCurrent" => fn(Handle);
    mem_alloc: "cuMemAlloc_v2" => fn(*mut DevicePtr, usize);
    mem_free: "cuMemFree_v2" => fn(DevicePtr);
    mem_info: "cuMemGetInfo_v2" => fn(*mut usize, *mut usize);
    mem_host_alloc: "cuMemHostAlloc" => fn(*mut *mut c_void, usize, u32);
    mem_host_device_ptr: "cuMemHostGetDevicePointer_v2" => fn(*mut DevicePtr, *mut c_void, u32);
    mem_free_host: "cuMemFreeHost" => fn(*mut c_void);
    memcpy_htod: "cuMemcpyHtoDAsync_v2" => fn(DevicePtr, *const c_void, usize, Handle);
    memcpy_dtoh: "cuMemcpyDtoHAsync_v2" => fn(*mut c_void, DevicePtr, usize, Handle);
    memcpy_dtod: "cuMemcpyDtoDAsync_v2" => fn(DevicePtr, DevicePtr, usize, Handle);
    memset_d32: "cuMemsetD32Async" => fn(DevicePtr, u32, usize, Handle);
    module_load: "cuModuleLoadData" => fn(*mut Handle, *const c_void);
    module_function: "cuModuleGetFunction" => fn(*mut Handle, Handle, *const c_char);
    func_set_attribute: "cuFuncSetAttribute" => fn(Handle, i32, i32);
    launch: "cuLaunchKernel" => fn(Handle, u32, u32, u32, u32, u32, u32, u32, Handle, *mut *mut c_void, *mut *mut c_void);
    launch_ex: "cuLaunchKernelEx" => fn(*const LaunchConfig, Handle, *mut *mut c_void, *mut *mut c_void);
    stream_create: "cuStreamCreate" => fn(*mut Handle, u32);
    stream_sync: "cuStreamSynchronize" => fn(Handle);
    begin_capture: "cuStreamBeginCapture_v2" => fn(Handle, i32);
    end_capture: "cuStreamEndCapture" => fn(Handle, *mut Handle);
    graph_instantiate: "cuGraphInstantiateWithFlags" => fn(*mut Handle, Handle, u64);
    graph_launch: "cuGraphLaunch" => fn(Handle, Handle);
    graph_exec_destroy: "cuGraphExecDestroy" => fn(Handle);
    graph_destroy: "cuGraphDestroy" => fn(Handle);
    event_create: "cuEventCreate" => fn(*mut Handle, u32);
    event_record: "cuEventRecord" => fn(Handle, Handle);
    profiler_start: "cuProfilerStart" => fn();
    profiler_stop: "cuProfilerStop" => fn();
    event_sync: "cuEventSynchronize" => fn(Handle);
    event_destroy: "cuEventDestroy_v2" => fn(Handle);
    error_name: "cuGetErrorName" => fn(i32, *mut *const c_char);
    tensor_map_encode_tiled: "cuTensorMapEncodeTiled" => fn(*mut TensorMap, u32, u32, *mut c_void, *const u64, *const u64, *const u32, *const u32, u32, u32, u32, u32);
}

/// `CUtensorMap`: a descriptor the tensor memory accelerator (TMA) copies boxes of a tensor
/// by; a kernel takes it by value (`const __grid_constant__`, 128 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct TensorMap([u64; 16]);

/// The geometry of a bf16 TMA descriptor: a 5-D view of a tensor (`dims` innermost first, in
/// elements; dimension i + 1 `strides[i]` bytes apart) read in boxes of `boxes` elements into
/// shared memory in the 128-byte swizzle (the innermost box spans 128 bytes, 64 elements);
/// what a box reaches outside the tensor reads as zeros. Kept apart from the encoding so that
/// host tests can check which elements a kernel's box coordinates land ([`Self::box_elements`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorMapShape {
    pub dims: [u64; 5],
    pub strides: [u64; 4],
    pub boxes: [u32; 5],
}

impl TensorMapShape {
    /// What the TMA copies for the box at `at`, in shared-memory order (innermost first): each
    /// element's offset in the tensor in elements, or None outside it (read as zero).
    #[cfg(test)]
    pub fn box_elements(&self, at: [i64; 5]) -> Vec<Option<u64>> {
        let stride = |d: usize| if d == 0 { 1 } else { self.strides[d - 1] / 2 };
        let b = self.boxes.map(|v| v as i64);
        let mut out = Vec::new();
        for i4 in 0..b[4] {
            for i3 in 0..b[3] {
                for i2 in 0..b[2] {
                    for i1 in 0..b[1] {
                        for i0 in 0..b[0] {
                            let c = [at[0] + i0, at[1] + i1, at[2] + i2, at[3] + i3, at[4] + i4];
                            let inside = (0..5).all(|d| c[d] >= 0 && (c[d] as u64) < self.dims[d]);
                            out.push(inside.then(|| (0..5).map(|d| c[d] as u64 * stride(d)).sum()));
                        }
                    }
                }
            }
        }
        out
    }
}

/// cuTensorMapEncodeTiled's enums (values from `cuda.h`).
const TENSOR_MAP_BFLOAT16: u32 = 9;
const TENSOR_MAP_INTERLEAVE_NONE: u32 = 0;
const TENSOR_MAP_SWIZZLE_128B: u32 = 3;
const TENSOR_MAP_L2_PROMOTION_128B: u32 = 2;
const TENSOR_MAP_OOB_FILL_ZERO: u32 = 0;

/// `CUlaunchAttribute`: an id, padding to 8 bytes, and a 64-byte value union.
#[repr(C)]
struct LaunchAttribute {
    id: u32,
    pad: [u8; 4],
    value: [u8; 64],
}

/// `CUlaunchConfig`.
#[repr(C)]
struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: Handle,
    attrs: *mut LaunchAttribute,
    num_attrs: u32,
}

/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: the launch may begin before the
/// previous kernel in the stream ends; the kernel's `griddepcontrol.wait` orders its reads.
const ATTR_PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;

/// `cuEventElapsedTime` was renamed `_v2` in CUDA 12.8 and the old name may disappear; bind
/// whichever the driver has.
type ElapsedFn = unsafe extern "C" fn(*mut f32, Handle, Handle) -> CuResult;

/// One GPU, its primary context and the one stream all of Lily's work goes through.
pub struct Gpu {
    api: Api,
    elapsed: ElapsedFn,
    ctx: Handle,
    stream: Handle,
    pub name: String,
    pub multiprocessors: u32,
    pub compute_capability: (i32, i32),
    pub driver_version: i32,
    /// Launch with programmatic dependent launch (PDL): each kernel's blocks become resident
    /// while its predecessor finishes and prefetch weights before `griddepcontrol.wait`, which
    /// hides most of the ~400 kernel boundaries of a decode step. LILY_PDL=0 turns it off.
    pub pdl: bool,
    /// Set while a `PdlPause` lives: launches go without PDL.
    pdl_paused: std::sync::atomic::AtomicBool,
    /// While profiling: each launch's name, grid and (start, end) events.
    profile: Mutex<Option<Vec<(String, Handle, Handle)>>>,
    /// Kernel names or launch labels whose launches are skipped (`leave_out`).
    left_out: Mutex<Vec<String>>,
}

// The context and stream handles are usable from any thread once the context is current there;
// every entry point that uses them makes it current first.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

const DRIVER_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

impl Gpu {
    /// Loads the driver and opens device 0. Fails with `LibraryNotFound` where there is no driver,
    /// which tests treat as "no GPU here".
    pub fn open() -> Result<Arc<Gpu>> {
        let lib = load_first("libcuda", DRIVER_NAMES, None)?;
        let elapsed = unsafe {
            let sym = lib
                .get::<ElapsedFn>(b"cuEventElapsedTime_v2\0")
                .or_else(|_| lib.get::<ElapsedFn>(b"cuEventElapsedTime\0"))
                .map_err(|e| CudaError::MissingSymbol {
                    library: "libcuda",
                    symbol: "cuEventElapsedTime",
                    reason: e.to_string(),
                })?;
            *sym
        };
        let api = Api::load(lib)?;
        let mut gpu = Gpu {
            api,
            elapsed,
            ctx: std::ptr::null_mut(),
            stream: std::ptr::null_mut(),
            name: String::new(),
            multiprocessors: 0,
            compute_capability: (0, 0),
            driver_version: 0,
            profile: Mutex::new(None),
            left_out: Mutex::new(Vec::new()),
            pdl: std::env::var("LILY_PDL").map(|v| v != "0").unwrap_or(true),
            pdl_paused: std::sync::atomic::AtomicBool::new(false),
        };
        unsafe {
            gpu.check("cuInit", (gpu.api.init)(0))?;
            let mut dev = 0;
            gpu.check("cuDeviceGet", (gpu.api.device_get)(&mut dev, 0))?;
            let mut version = 0;
            gpu.check("cuDriverGetVersion", (gpu.api.driver_version)(&mut version))?;
            gpu.driver_version = version;
            let mut name = [0 as c_char; 256];
            gpu.check(
                "cuDeviceGetName",
                (gpu.api.device_name)(name.as_mut_ptr(), 256, dev),
            )?;
            gpu.name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let attr = |a| {
                let mut v = 0;
                gpu.check(
                    "cuDeviceGetAttribute",
                    (gpu.api.device_attribute)(&mut v, a, dev),
                )
                .map(|_| v)
            };
            let sms = attr(ATTR_MULTIPROCESSOR_COUNT)? as u32;
            let cc = (
                attr(ATTR_COMPUTE_CAPABILITY_MAJOR)?,
                attr(ATTR_COMPUTE_CAPABILITY_MINOR)?,
            );
            gpu.multiprocessors = sms;
            gpu.compute_capability = cc;
            let mut ctx = std::ptr::null_mut();
            gpu.check(
                "cuDevicePrimaryCtxRetain",
                (gpu.api.primary_ctx_retain)(&mut ctx, dev),
            )?;
            gpu.ctx = ctx;
            gpu.check("cuCtxSetCurrent", (gpu.api.ctx_set_current)(ctx))?;
            let mut stream = std::ptr::null_mut();
            gpu.check(
                "cuStreamCreate",
                (gpu.api.stream_create)(&mut stream, STREAM_NON_BLOCKING),
            )?;
            gpu.stream = stream;
        }
        Ok(Arc::new(gpu))
    }

    fn check(&self, call: &'static str, code: CuResult) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        let mut p: *const c_char = std::ptr::null();
        let name = unsafe {
            if (self.api.error_name)(code, &mut p) == 0 && !p.is_null() {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            } else {
                "unknown".to_string()
            }
        };
        Err(CudaError::Driver { call, code, name })
    }

    /// Makes the context current on the calling thread (the server may call from several).
    pub fn bind(&self) -> Result<()> {
        unsafe { self.check("cuCtxSetCurrent", (self.api.ctx_set_current)(self.ctx)) }
    }

    pub fn free_memory(&self) -> Result<(usize, usize)> {
        let (mut free, mut total) = (0, 0);
        unsafe { self.check("cuMemGetInfo", (self.api.mem_info)(&mut free, &mut total))? };
        Ok((free, total))
    }

    pub fn synchronize(&self) -> Result<()> {
        unsafe { self.check("cuStreamSynchronize", (self.api.stream_sync)(self.stream)) }
    }

    /// Runs `f` with the profiler's capture on and waits for what it queued: a profiler started
    /// with its capture off (`ncu --profile-from-start off`, scripts/profile/ncu_step.sh) then sees
    /// that work and nothing else.
    pub fn profiler_range<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.synchronize()?;
        unsafe { self.check("cuProfilerStart", (self.api.profiler_start)())? };
        let out = f().and_then(|v| self.synchronize().map(|()| v));
        unsafe { self.check("cuProfilerStop", (self.api.profiler_stop)())? };
        out
    }

    pub fn load_module(self: &Arc<Self>, cubin: &[u8]) -> Result<Module> {
        let mut m = std::ptr::null_mut();
        unsafe {
            self.check(
                "cuModuleLoadData",
                (self.api.module_load)(&mut m, cubin.as_ptr() as *const c_void),
            )?
        };
        Ok(Module {
            gpu: self.clone(),
            handle: m,
        })
    }

    /// The TMA descriptor of the bf16 tensor at `ptr` that `shape` describes.
    pub fn tensor_map_bf16(&self, ptr: DevicePtr, shape: &TensorMapShape) -> Result<TensorMap> {
        let mut map = TensorMap([0; 16]);
        unsafe {
            self.check(
                "cuTensorMapEncodeTiled",
                (self.api.tensor_map_encode_tiled)(
                    &mut map,
                    TENSOR_MAP_BFLOAT16,
                    5,
                    ptr as *mut c_void,
                    shape.dims.as_ptr(),
                    shape.strides.as_ptr(),
                    shape.boxes.as_ptr(),
                    [1u32; 5].as_ptr(),
                    TENSOR_MAP_INTERLEAVE_NONE,
                    TENSOR_MAP_SWIZZLE_128B,
                    TENSOR_MAP_L2_PROMOTION_128B,
                    TENSOR_MAP_OOB_FILL_ZERO,
                ),
            )?
        };
        Ok(map)
    }

    /// Allocates `bytes` of device memory (uninitialised).
    pub fn alloc(self: &Arc<Self>, bytes: usize) -> Result<DeviceBuffer> {
        let mut ptr = 0;
        if bytes > 0 {
            unsafe { self.check("cuMemAlloc", (self.api.mem_alloc)(&mut ptr, bytes))? };
        }
        Ok(DeviceBuffer {
            gpu: self.clone(),
            ptr,
            bytes,
        })
    }

    pub fn memset_u32(&self, dst: DevicePtr, value: u32, count: usize) -> Result<()> {
        unsafe {
            self.check(
                "cuMemsetD32Async",
                (self.api.memset_d32)(dst, value, count, self.stream),
            )
        }
    }

    pub fn copy_dtod(&self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<()> {
        unsafe {
            self.check(
                "cuMemcpyDtoDAsync",
                (self.api.memcpy_dtod)(dst, src, bytes, self.stream),
            )
        }
    }

    /// Copies host bytes to the device and waits, so `src` may be dropped right after.
    pub fn upload(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        unsafe {
            self.check(
                "cuMemcpyHtoDAsync",
                (self.api.memcpy_htod)(dst, src.as_ptr() as *const c_void, src.len(), self.stream),
            )?;
        }
        self.synchronize()
    }

    /// Page-locked host memory of `bytes` (zeroed) that kernels write directly (mapped into the
    /// device's address space): a kernel's result reaches the host without a copy in the
    /// stream between it and the next launch.
    pub fn pinned(self: &Arc<Self>, bytes: usize) -> Result<PinnedBuffer> {
        const DEVICEMAP: u32 = 0x02;
        let mut ptr = std::ptr::null_mut();
        unsafe { self.check("cuMemHostAlloc", (self.api.mem_host_alloc)(&mut ptr, bytes, DEVICEMAP))? };
        // Owned from here: freed on the error path below too.
        let mut buffer = PinnedBuffer {
            gpu: self.clone(),
            ptr,
            device: 0,
            bytes,
        };
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, bytes) };
        unsafe {
            self.check(
                "cuMemHostGetDevicePointer",
                (self.api.mem_host_device_ptr)(&mut buffer.device, ptr, 0),
            )?
        };
        Ok(buffer)
    }

    /// Waits for all queued work, then copies device bytes to the host.
    pub fn download(&self, dst: &mut [u8], src: DevicePtr) -> Result<()> {
        unsafe {
            self.check(
                "cuMemcpyDtoHAsync",
                (self.api.memcpy_dtoh)(
                    dst.as_mut_ptr() as *mut c_void,
                    src,
                    dst.len(),
                    self.stream,
                ),
            )?;
        }
        self.synchronize()
    }

    pub fn launch(
        &self,
        f: &Function,
        grid: (u32, u32, u32),
        block: u32,
        shared: u32,
        args: &mut KernelArgs,
    ) -> Result<()> {
        {
            let left_out = self.left_out.lock().unwrap_or_else(|p| p.into_inner());
            if !left_out.is_empty() {
                let label = format!("{} grid {}x{}x{}", f.name, grid.0, grid.1, grid.2);
                if left_out.iter().any(|l| *l == f.name || *l == label) {
                    return Ok(());
                }
            }
        }
        let mut profile = self.profile.lock().unwrap_or_else(|p| p.into_inner());
        let events = match profile.as_mut() {
            Some(list) => {
                let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
                unsafe {
                    self.check("cuEventCreate", (self.api.event_create)(&mut a, 0))?;
                    self.check("cuEventCreate", (self.api.event_create)(&mut b, 0))?;
                    self.check("cuEventRecord", (self.api.event_record)(a, self.stream))?;
                }
                list.push((
                    format!("{} grid {}x{}x{}", f.name, grid.0, grid.1, grid.2),
                    a,
                    b,
                ));
                Some(b)
            }
            None => None,
        };
        let mut ptrs = args.pointers();
        let launched = unsafe {
            if self.pdl && !self.pdl_paused.load(std::sync::atomic::Ordering::Relaxed) {
                let mut attr = LaunchAttribute {
                    id: ATTR_PROGRAMMATIC_STREAM_SERIALIZATION,
                    pad: [0; 4],
                    value: [0; 64],
                };
                attr.value[..4].copy_from_slice(&1i32.to_le_bytes());
                let config = LaunchConfig {
                    grid: [grid.0, grid.1, grid.2],
                    block: [block, 1, 1],
                    shared,
                    stream: self.stream,
                    attrs: &mut attr,
                    num_attrs: 1,
                };
                self.check(
                    f.name,
                    (self.api.launch_ex)(
                        &config,
                        f.handle,
                        ptrs.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                )
            } else {
                self.check(
                    f.name,
                    (self.api.launch)(
                        f.handle,
                        grid.0,
                        grid.1,
                        grid.2,
                        block,
                        1,
                        1,
                        shared,
                        self.stream,
                        ptrs.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                )
            }
        };
        if let Some(end) = events {
            unsafe { self.check("cuEventRecord", (self.api.event_record)(end, self.stream))? };
        }
        launched
    }

    /// Launches without PDL until the guard is dropped. For the prefill's large grids an early
    /// launched successor is harmful: its blocks sit resident in `griddepcontrol.wait` holding
    /// shared memory and registers the running kernel's later waves need (measured: 318 ms for an
    /// 8K prefill whose kernels take 238 ms back to back).
    pub fn pause_pdl(&self) -> PdlPause<'_> {
        self.pdl_paused
            .store(true, std::sync::atomic::Ordering::Relaxed);
        PdlPause(self)
    }

    /// From now on, skips every launch of a kernel named in `labels`, by name or by the label
    /// the profile prints (`name grid XxYxZ`, which tells apart the products one kernel serves).
    /// A timing tool: what a step costs without those kernels (`lily bench --leave-out`); the
    /// results of such a run are meaningless.
    pub fn leave_out(&self, labels: Vec<String>) {
        *self.left_out.lock().unwrap_or_else(|p| p.into_inner()) = labels;
    }

    /// Starts timing every launch with a pair of events (eager launches only, not graphs).
    pub fn profile_start(&self) {
        *self.profile.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
    }

    /// Stops timing; waits for the work and returns each launch's label and milliseconds.
    pub fn profile_finish(&self) -> Result<Vec<(String, f32)>> {
        let list = self
            .profile
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        self.synchronize()?;
        let mut out = Vec::with_capacity(list.len());
        for (label, a, b) in list {
            let mut ms = 0.0;
            let r = unsafe { self.check("cuEventElapsedTime", (self.elapsed)(&mut ms, a, b)) };
            unsafe {
                (self.api.event_destroy)(a);
                (self.api.event_destroy)(b);
            }
            r?;
            out.push((label, ms));
        }
        Ok(out)
    }

    /// Records everything `body` launches on the stream into a graph instead of running it.
    pub fn capture(self: &Arc<Self>, body: impl FnOnce() -> Result<()>) -> Result<Graph> {
        unsafe {
            self.check(
                "cuStreamBeginCapture",
                (self.api.begin_capture)(self.stream, STREAM_CAPTURE_MODE_THREAD_LOCAL),
            )?;
        }
        let recorded = body();
        let mut graph = std::ptr::null_mut();
        let ended = unsafe {
            self.check(
                "cuStreamEndCapture",
                (self.api.end_capture)(self.stream, &mut graph),
            )
        };
        recorded?;
        ended?;
        let mut exec = std::ptr::null_mut();
        let inst = unsafe {
            self.check(
                "cuGraphInstantiate",
                (self.api.graph_instantiate)(&mut exec, graph, 0),
            )
        };
        unsafe { (self.api.graph_destroy)(graph) };
        inst?;
        Ok(Graph {
            gpu: self.clone(),
            exec,
        })
    }

    pub fn event(self: &Arc<Self>) -> Result<Event> {
        let mut e = std::ptr::null_mut();
        unsafe { self.check("cuEventCreate", (self.api.event_create)(&mut e, 0))? };
        Ok(Event {
            gpu: self.clone(),
            handle: e,
        })
    }

    /// Multiprocessor count and the sm_XY name of the device.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Loads the first library of `names` that opens; `env` names a variable holding an explicit path.
pub(crate) fn load_first(
    library: &'static str,
    names: &[&str],
    env: Option<&str>,
) -> Result<Library> {
    let mut tried = Vec::new();
    let mut last = String::from("no candidate");
    let explicit = env.and_then(|v| std::env::var(v).ok());
    for name in explicit
        .iter()
        .map(|s| s.as_str())
        .chain(names.iter().copied())
    {
        tried.push(name.to_string());
        match unsafe { Library::new(name) } {
            Ok(lib) => return Ok(lib),
            Err(e) => last = e.to_string(),
        }
    }
    Err(CudaError::LibraryNotFound {
        library,
        tried: tried.join(", "),
        reason: last,
    })
}

/// Device memory, freed on drop.
/// While alive, launches on its GPU go without PDL (see `Gpu::pause_pdl`).
pub struct PdlPause<'a>(&'a Gpu);

impl Drop for PdlPause<'_> {
    fn drop(&mut self) {
        self.0
            .pdl_paused
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

pub struct DeviceBuffer {
    gpu: Arc<Gpu>,
    ptr: DevicePtr,
    bytes: usize,
}

impl DeviceBuffer {
    pub fn ptr(&self) -> DevicePtr {
        self.ptr
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            unsafe { (self.gpu.api.mem_free)(self.ptr) };
        }
    }
}

pub struct Module {
    gpu: Arc<Gpu>,
    handle: Handle,
}

unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    pub fn function(&self, name: &'static str) -> Result<Function> {
        let cname = CString::new(name).expect("kernel names have no NUL");
        let mut f = std::ptr::null_mut();
        unsafe {
            self.gpu.check(
                "cuModuleGetFunction",
                (self.gpu.api.module_function)(&mut f, self.handle, cname.as_ptr()),
            )?
        };
        Ok(Function { handle: f, name })
    }

    /// Lets `f` use more than the default 48 KB of dynamic shared memory.
    pub fn allow_shared(&self, f: &Function, bytes: u32) -> Result<()> {
        unsafe {
            self.gpu.check(
                "cuFuncSetAttribute",
                (self.gpu.api.func_set_attribute)(
                    f.handle,
                    FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes as i32,
                ),
            )
        }
    }
}

#[derive(Clone, Copy)]
pub struct Function {
    handle: Handle,
    pub name: &'static str,
}

unsafe impl Send for Function {}
unsafe impl Sync for Function {}

/// Kernel arguments, each stored in an 8-byte slot (scalars occupy its low bytes, which is where
/// a little-endian `cuLaunchKernel` reads a 4-byte parameter from).
#[derive(Default)]
pub struct KernelArgs {
    slots: Vec<Slot>,
}

/// A kernel argument's bytes: a scalar or pointer in 8, a tensor map in 128 (boxed, so the
/// pointer to it stays put while the list grows).
enum Slot {
    Word(u64),
    Map(Box<TensorMap>),
}

impl KernelArgs {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn ptr(mut self, p: DevicePtr) -> Self {
        self.slots.push(Slot::Word(p));
        self
    }
    pub fn i32(mut self, v: i32) -> Self {
        self.slots.push(Slot::Word(v as u32 as u64));
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.slots.push(Slot::Word(v));
        self
    }
    pub fn f32(mut self, v: f32) -> Self {
        self.slots.push(Slot::Word(v.to_bits() as u64));
        self
    }
    pub fn tensor_map(mut self, m: &TensorMap) -> Self {
        self.slots.push(Slot::Map(Box::new(*m)));
        self
    }
    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|s| match s {
                Slot::Word(w) => w as *mut u64 as *mut c_void,
                Slot::Map(m) => &mut **m as *mut TensorMap as *mut c_void,
            })
            .collect()
    }
}

/// An instantiated CUDA graph: a recorded sequence of launches replayed with one call.
pub struct Graph {
    gpu: Arc<Gpu>,
    exec: Handle,
}

unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

impl Graph {
    pub fn launch(&self) -> Result<()> {
        unsafe {
            self.gpu.check(
                "cuGraphLaunch",
                (self.gpu.api.graph_launch)(self.exec, self.gpu.stream),
            )
        }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        unsafe { (self.gpu.api.graph_exec_destroy)(self.exec) };
    }
}

pub struct Event {
    gpu: Arc<Gpu>,
    handle: Handle,
}

impl Event {
    pub fn record(&self) -> Result<()> {
        unsafe {
            self.gpu.check(
                "cuEventRecord",
                (self.gpu.api.event_record)(self.handle, self.gpu.stream),
            )
        }
    }
    /// Milliseconds from `start` to this event (waits for this one).
    pub fn since(&self, start: &Event) -> Result<f32> {
        let mut ms = 0.0;
        unsafe {
            self.gpu
                .check("cuEventSynchronize", (self.gpu.api.event_sync)(self.handle))?;
            self.gpu.check(
                "cuEventElapsedTime",
                (self.gpu.elapsed)(&mut ms, start.handle, self.handle),
            )?;
        }
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe { (self.gpu.api.event_destroy)(self.handle) };
    }
}

/// Page-locked host memory mapped for the device (`Gpu::pinned`).
pub struct PinnedBuffer {
    gpu: Arc<Gpu>,
    ptr: *mut c_void,
    /// Its address in kernels.
    pub device: DevicePtr,
    bytes: usize,
}

// The buffer is plain host memory owned by this value; the GPU writes it only from kernels the
// owner queues and waits for.
unsafe impl Send for PinnedBuffer {}
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The u64 at byte `at` (a multiple of 8), as the GPU last wrote it: one load, so an
    /// 8-byte store of a kernel is seen whole or not at all.
    pub fn read_u64(&self, at: usize) -> u64 {
        assert!(at % 8 == 0 && at + 8 <= self.bytes, "u64 at {at} of a pinned buffer of {}", self.bytes);
        // Volatile: the GPU writes it behind the compiler's back (and a poll must load again).
        unsafe { std::ptr::read_volatile(self.ptr.add(at) as *const u64) }
    }

    /// Writes the u64 at byte `at` (a multiple of 8); only while no queued kernel writes it.
    pub fn write_u64(&self, at: usize, value: u64) {
        assert!(at % 8 == 0 && at + 8 <= self.bytes, "u64 at {at} of a pinned buffer of {}", self.bytes);
        unsafe { std::ptr::write_volatile(self.ptr.add(at) as *mut u64, value) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        unsafe { (self.gpu.api.mem_free_host)(self.ptr) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cuLaunchKernel copies each argument from the address it is given: a scalar's 8 bytes, a
    /// tensor map's 128, each where its slot put it, whatever came before or after it.
    #[test]
    fn kernel_args_point_at_each_argument_in_order() {
        let mut map = TensorMap([0; 16]);
        for (i, w) in map.0.iter_mut().enumerate() {
            *w = 0x1000 + i as u64;
        }
        let mut args = KernelArgs::new()
            .ptr(0xdead_beef)
            .tensor_map(&map)
            .i32(-2)
            .tensor_map(&TensorMap([7; 16]))
            .f32(1.5);
        let p = args.pointers();
        assert_eq!(p.len(), 5);
        unsafe {
            assert_eq!(*(p[0] as *const u64), 0xdead_beef);
            let got = &*(p[1] as *const TensorMap);
            assert_eq!(got.0, map.0);
            assert_eq!(p[1] as usize % 64, 0, "a tensor map is 64-byte aligned");
            assert_eq!(*(p[2] as *const i32), -2);
            assert_eq!((*(p[3] as *const TensorMap)).0, [7; 16]);
            assert_eq!(*(p[4] as *const f32), 1.5);
        }
    }
}
