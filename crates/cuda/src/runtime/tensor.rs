//! Device tensors: an owned allocation with a dtype, a shape and a name, and borrowed views of
//! it that launchers check before every dispatch ("layer 3 k_cache must be BF16 [2, 4096, 256]").

use std::fmt;
use std::sync::Arc;

use crate::runtime::driver::{DeviceBuffer, DevicePtr, Gpu};
use crate::error::{CudaError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    BF16,
    /// FP8 e4m3 weights (with their block scales beside them: `Matrix`).
    F8E4M3,
    F32,
    I32,
    U64,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F8E4M3 => 1,
            DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::U64 => 8,
        }
    }
}

pub struct Tensor {
    buf: DeviceBuffer,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub name: String,
}

impl Tensor {
    pub fn new(
        gpu: &Arc<Gpu>,
        name: impl Into<String>,
        dtype: DType,
        shape: &[usize],
    ) -> Result<Tensor> {
        let n: usize = shape.iter().product();
        Ok(Tensor {
            buf: gpu.alloc(n * dtype.size())?,
            dtype,
            shape: shape.to_vec(),
            name: name.into(),
        })
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn bytes(&self) -> usize {
        self.buf.bytes()
    }

    pub fn ptr(&self) -> DevicePtr {
        self.buf.ptr()
    }

    pub fn view(&self) -> View<'_> {
        View {
            ptr: self.buf.ptr(),
            dtype: self.dtype,
            shape: self.shape.clone(),
            name: &self.name,
            index: None,
        }
    }

    /// Element `i` of the leading dimension (one layer's slice of a stacked tensor).
    pub fn at(&self, i: usize) -> View<'_> {
        assert!(
            i < self.shape[0],
            "{}: index {i} out of {}",
            self.name,
            self.shape[0]
        );
        let inner: usize = self.shape[1..].iter().product();
        View {
            ptr: self.buf.ptr() + (i * inner * self.dtype.size()) as u64,
            dtype: self.dtype,
            shape: self.shape[1..].to_vec(),
            name: &self.name,
            index: Some(i),
        }
    }
}

/// A borrowed, typed window into a tensor.
#[derive(Clone)]
pub struct View<'a> {
    pub ptr: DevicePtr,
    pub dtype: DType,
    pub shape: Vec<usize>,
    name: &'a str,
    index: Option<usize>,
}

impl fmt::Display for View<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.name),
            None => write!(f, "{}", self.name),
        }
    }
}

impl<'a> View<'a> {
    /// The bytes the view spans.
    pub fn bytes(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.size()
    }

    /// The first `n` entries of the leading dimension: a prefill chunk shorter than the scratch
    /// it runs in.
    pub fn rows(&self, n: usize) -> View<'a> {
        assert!(n <= self.shape[0], "{self}: {n} rows of {}", self.shape[0]);
        let mut v = self.clone();
        v.shape[0] = n;
        v
    }

    /// The same memory seen with `shape`, which may not hold more elements than the view.
    pub fn shaped(&self, shape: &[usize]) -> View<'a> {
        let (have, want) = (
            self.shape.iter().product::<usize>(),
            shape.iter().product::<usize>(),
        );
        assert!(
            want <= have,
            "{self}: {shape:?} is larger than {:?}",
            self.shape
        );
        let mut v = self.clone();
        v.shape = shape.to_vec();
        v
    }

    /// Element `i` of the leading dimension (one of a stacked pair, say).
    pub fn at(&self, i: usize) -> View<'a> {
        assert!(
            !self.shape.is_empty() && i < self.shape[0],
            "{self}: index {i} of {:?}",
            self.shape
        );
        let inner: usize = self.shape[1..].iter().product();
        let mut v = self.clone();
        v.ptr += (i * inner * self.dtype.size()) as u64;
        v.shape.remove(0);
        v
    }

    /// Elements `[from, from + n)` of a 1-D view.
    pub fn range(&self, from: usize, n: usize) -> View<'a> {
        assert!(
            self.shape.len() == 1 && from + n <= self.shape[0],
            "{self}: range {from}+{n} of {:?}",
            self.shape
        );
        let mut v = self.clone();
        v.ptr += (from * self.dtype.size()) as u64;
        v.shape[0] = n;
        v
    }

    /// Fails unless the view is a `dtype` matrix of `cols` columns, naming the tensor; its
    /// address and row count.
    pub fn expect_rows(&self, dtype: DType, cols: usize) -> Result<(DevicePtr, usize)> {
        match self.shape[..] {
            [rows, c] if c == cols && self.dtype == dtype => Ok((self.ptr, rows)),
            _ => Err(CudaError::Shape {
                tensor: self.to_string(),
                expected: format!("{dtype:?} [rows, {cols}]"),
                actual: format!("{:?} {:?}", self.dtype, self.shape),
            }),
        }
    }

    /// Fails unless the view is `dtype` with exactly `shape`, naming the tensor.
    pub fn expect(&self, dtype: DType, shape: &[usize]) -> Result<DevicePtr> {
        if self.dtype != dtype || self.shape != shape {
            return Err(CudaError::Shape {
                tensor: self.to_string(),
                expected: format!("{dtype:?} {shape:?}"),
                actual: format!("{:?} {:?}", self.dtype, self.shape),
            });
        }
        Ok(self.ptr)
    }
}

/// A weight matrix of the products: bf16, or e4m3 with its f32 block scales
/// ([.., ceil(rows / block rows), ceil(cols / block cols)], dims.rs: WeightFormat).
pub struct Matrix {
    pub w: Tensor,
    pub scale: Option<Tensor>,
}

impl Matrix {
    pub fn view(&self) -> MatrixView<'_> {
        MatrixView {
            w: self.w.view(),
            scale: self.scale.as_ref().map(|s| s.view()),
        }
    }
}

/// A matrix as a launcher takes it.
#[derive(Clone)]
pub struct MatrixView<'a> {
    pub w: View<'a>,
    pub scale: Option<View<'a>>,
}

impl MatrixView<'_> {
    /// The scales' address for a kernel: 0 for a bf16 matrix, which has none. A matrix whose
    /// dtype and scales disagree is refused by name.
    pub fn scale_ptr(&self) -> Result<DevicePtr> {
        match (&self.scale, self.w.dtype) {
            (None, DType::BF16) => Ok(0),
            (Some(s), DType::F8E4M3) if s.dtype == DType::F32 => Ok(s.ptr),
            _ => Err(CudaError::Shape {
                tensor: self.w.to_string(),
                expected: "BF16 without scales, or F8E4M3 with F32 block scales".into(),
                actual: format!(
                    "{:?} with scales {:?}",
                    self.w.dtype,
                    self.scale.as_ref().map(|s| s.dtype)
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(dtype: DType, shape: &[usize]) -> View<'static> {
        View {
            ptr: 0x1000,
            dtype,
            shape: shape.to_vec(),
            name: "layer 3 in_proj",
            index: None,
        }
    }

    #[test]
    fn expect_rows_takes_any_row_count_and_names_a_wrong_matrix() {
        assert_eq!(
            view(DType::BF16, &[12352, 2048])
                .expect_rows(DType::BF16, 2048)
                .unwrap(),
            (0x1000, 12352)
        );
        for (dtype, shape) in [
            (DType::BF16, vec![12352, 4096]),
            (DType::F32, vec![12352, 2048]),
            (DType::BF16, vec![2048]),
        ] {
            let e = view(dtype, &shape)
                .expect_rows(DType::BF16, 2048)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("layer 3 in_proj") && e.contains("BF16 [rows, 2048]"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_stacked_pair_splits_into_halves_of_half_the_bytes() {
        // The GDN state of one layer: a pair of f32 [heads, key, value] halves.
        let pair = view(DType::F32, &[2, 32, 128, 128]);
        assert_eq!(pair.bytes(), 2 * 32 * 128 * 128 * 4);
        let (a, b) = (pair.at(0), pair.at(1));
        assert_eq!(a.bytes(), pair.bytes() / 2);
        assert_eq!(b.ptr - a.ptr, a.bytes() as u64);
    }
}
