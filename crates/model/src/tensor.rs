//! A tensor as it sits in a checkpoint: bytes in a memory-mapped safetensors shard (or, for
//! tests, in memory), a dtype and a shape. Nothing is converted at load time; readers convert
//! elements to f32 as they stream them, so a 35B bf16 checkpoint costs no extra memory.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use memmap2::Mmap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    BF16,
    F16,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::BF16 | DType::F16 => 2,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F32 => "F32",
            DType::BF16 => "BF16",
            DType::F16 => "F16",
        })
    }
}

/// The bytes behind one or more tensors.
pub(crate) enum Storage {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// A view of a tensor: cheap to clone (shares the storage), row-major.
#[derive(Clone)]
pub struct Tensor {
    name: Arc<str>,
    storage: Arc<Storage>,
    start: usize,
    dtype: DType,
    shape: Vec<usize>,
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor({} {} {:?})", self.name, self.dtype, self.shape)
    }
}

impl Tensor {
    pub(crate) fn new(
        name: &str,
        storage: Arc<Storage>,
        start: usize,
        dtype: DType,
        shape: Vec<usize>,
    ) -> Tensor {
        let tensor = Tensor {
            name: name.into(),
            storage,
            start,
            dtype,
            shape,
        };
        debug_assert!(tensor.start + tensor.byte_len() <= tensor.storage.bytes().len());
        tensor
    }

    /// An in-memory f32 tensor (tests, synthetic weights). Panics if `data` does not match `shape`.
    pub fn from_f32(name: &str, shape: Vec<usize>, data: &[f32]) -> Tensor {
        assert_eq!(
            shape.iter().product::<usize>(),
            data.len(),
            "{name}: data does not match shape {shape:?}"
        );
        let bytes = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        Tensor::new(name, Arc::new(Storage::Owned(bytes)), 0, DType::F32, shape)
    }

    /// An in-memory bf16 tensor from raw bf16 bit patterns. Panics if `bits` does not match `shape`.
    pub fn from_bf16_bits(name: &str, shape: Vec<usize>, bits: &[u16]) -> Tensor {
        assert_eq!(
            shape.iter().product::<usize>(),
            bits.len(),
            "{name}: data does not match shape {shape:?}"
        );
        let bytes = bits.iter().flat_map(|x| x.to_le_bytes()).collect();
        Tensor::new(name, Arc::new(Storage::Owned(bytes)), 0, DType::BF16, shape)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn byte_len(&self) -> usize {
        self.numel() * self.dtype.size()
    }
    /// The raw little-endian bytes (for uploading to a device as they are).
    pub fn bytes(&self) -> &[u8] {
        &self.storage.bytes()[self.start..self.start + self.byte_len()]
    }

    /// Rows and columns of a matrix view: the first dim, and the product of the rest.
    pub fn rows(&self) -> usize {
        self.shape.first().copied().unwrap_or(1)
    }
    pub fn cols(&self) -> usize {
        self.shape.iter().skip(1).product()
    }

    /// The sub-tensors `range` along the first dim (e.g. the gate rows of a fused gate|up).
    /// Panics if `range` is out of bounds: callers slice shapes they validated at load time.
    pub fn slice_rows(&self, range: Range<usize>) -> Tensor {
        assert!(
            range.start <= range.end && range.end <= self.rows(),
            "{}: rows {range:?} of {:?}",
            self.name,
            self.shape
        );
        let row_bytes = self.cols() * self.dtype.size();
        let mut shape = self.shape.clone();
        shape[0] = range.len();
        Tensor {
            name: self.name.clone(),
            storage: self.storage.clone(),
            start: self.start + range.start * row_bytes,
            dtype: self.dtype,
            shape,
        }
    }

    /// Item `index` along the first dim, with that dim removed (one expert of a fused tensor).
    pub fn index(&self, index: usize) -> Tensor {
        let mut t = self.slice_rows(index..index + 1);
        t.shape.remove(0);
        t
    }

    /// Converts `out.len()` elements starting at element `offset` to f32.
    /// Panics if the range is outside the tensor.
    pub fn read_f32(&self, offset: usize, out: &mut [f32]) {
        assert!(
            offset + out.len() <= self.numel(),
            "{}: read past the end",
            self.name
        );
        let size = self.dtype.size();
        let bytes = &self.bytes()[offset * size..(offset + out.len()) * size];
        match self.dtype {
            DType::F32 => {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                    *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
            DType::BF16 => {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    *o = bf16_to_f32(u16::from_le_bytes([b[0], b[1]]));
                }
            }
            DType::F16 => {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    *o = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
                }
            }
        }
    }

    /// The whole tensor as f32 (a copy; meant for small tensors such as norm weights).
    pub fn to_f32_vec(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.numel()];
        self.read_f32(0, &mut out);
        out
    }
}

/// bf16 is the top half of an f32, so widening is exact.
#[inline]
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// IEEE half to f32, exact for every input (subnormals, infinities and NaN included).
#[inline]
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = ((bits as u32) & 0x8000) << 16;
    let exp = ((bits >> 10) & 0x1f) as u32;
    let mant = (bits & 0x3ff) as u32;
    let magnitude = match (exp, mant) {
        (0, 0) => 0,
        // Subnormal half: mant * 2^-24, exactly representable in f32.
        (0, m) => (m as f32 * f32::powi(2.0, -24)).to_bits(),
        (0x1f, m) => 0x7f80_0000 | (m << 13),
        (e, m) => ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversion_covers_every_class() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), f32::powi(2.0, -24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
    }

    #[test]
    fn slicing_a_fused_tensor_reads_the_right_elements() {
        let data: Vec<f32> = (0..24).map(|x| x as f32).collect();
        let t = Tensor::from_f32("t", vec![2, 3, 4], &data);
        let e1 = t.index(1);
        assert_eq!(e1.shape(), &[3, 4]);
        assert_eq!(
            e1.slice_rows(1..3).to_f32_vec(),
            (16..24).map(|x| x as f32).collect::<Vec<_>>()
        );
        let b = Tensor::from_bf16_bits("b", vec![2], &[0x3f80, 0xc000]);
        assert_eq!(b.to_f32_vec(), vec![1.0, -2.0]);
    }
}
