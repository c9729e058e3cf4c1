//! A tensor as it sits in a checkpoint: bytes in a memory-mapped safetensors shard (or, for
//! tests, in memory), a dtype and a shape. Nothing is converted at load time; readers convert
//! elements to f32 as they stream them, so a 35B bf16 checkpoint costs no extra memory.
//!
//! An FP8 (e4m3) weight carries its block scales (`BlockScale`): element (r, c) of each matrix
//! is `e4m3_to_f32(q) * scale_inv[r / bn][c / bk]`, in f32. `read_f32` applies the scale, so every
//! reader sees the dequantised values; `bytes` stays the raw e4m3 bytes for a device to upload
//! beside `block_scale().scale_inv`.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use memmap2::Mmap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    BF16,
    F16,
    /// FP8 e4m3 ("fn": no infinities, NaN 0x7f/0xff, max 448); only with block scales.
    F8E4M3,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::BF16 | DType::F16 => 2,
            DType::F8E4M3 => 1,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F32 => "F32",
            DType::BF16 => "BF16",
            DType::F16 => "F16",
            DType::F8E4M3 => "F8_E4M3",
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

/// The block scales of an FP8 weight [.., rows, cols]: `scale_inv` is F32 or BF16 of shape
/// [.., ceil(rows / bn), ceil(cols / bk)] (the same leading dims as the weight) and `block` is
/// [bn, bk]; the last block of a row or column may be partial. Dequantised element (r, c) is
/// `e4m3_to_f32(q) * scale_inv[r / bn][c / bk]`.
#[derive(Debug, Clone)]
pub struct BlockScale {
    pub scale_inv: Tensor,
    pub block: [usize; 2],
}

/// A view of a tensor: cheap to clone (shares the storage), row-major.
#[derive(Clone)]
pub struct Tensor {
    name: Arc<str>,
    storage: Arc<Storage>,
    start: usize,
    dtype: DType,
    shape: Vec<usize>,
    /// Present exactly when `dtype` is `F8E4M3` (attached by the checkpoint loader).
    scale: Option<Arc<BlockScale>>,
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
            scale: None,
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

    /// An in-memory FP8 tensor from raw e4m3 bytes and its block scales (tests, `lily quantize`'s
    /// checks). Panics if `bits` does not match `shape` or the scales do not fit: see
    /// `with_block_scale`.
    pub fn from_e4m3_bits(name: &str, shape: Vec<usize>, bits: &[u8], scale: BlockScale) -> Tensor {
        assert_eq!(
            shape.iter().product::<usize>(),
            bits.len(),
            "{name}: data does not match shape {shape:?}"
        );
        let t = Tensor::new(
            name,
            Arc::new(Storage::Owned(bits.to_vec())),
            0,
            DType::F8E4M3,
            shape,
        );
        t.with_block_scale(scale)
            .unwrap_or_else(|reason| panic!("{name}: {reason}"))
    }

    /// This FP8 tensor with its block scales attached, or why they do not fit it (the scale's
    /// dtype, rank or shape, a block of zero size, or a tensor that is not FP8 or not a matrix).
    pub fn with_block_scale(mut self, scale: BlockScale) -> Result<Tensor, String> {
        if self.dtype != DType::F8E4M3 {
            return Err(format!(
                "block scales on a {} tensor (only F8_E4M3 has them)",
                self.dtype
            ));
        }
        if self.shape.len() < 2 {
            return Err(format!(
                "FP8 tensor of shape {:?}: block scales need a matrix (2-D, or 3-D [experts, rows, cols])",
                self.shape
            ));
        }
        let [bn, bk] = scale.block;
        if bn == 0 || bk == 0 {
            return Err(format!("block size {:?} has a zero side", scale.block));
        }
        if !matches!(scale.scale_inv.dtype, DType::F32 | DType::BF16) {
            return Err(format!(
                "block scales `{}` are {}, expected F32 or BF16",
                scale.scale_inv.name, scale.scale_inv.dtype
            ));
        }
        let expected = scale_shape(&self.shape, scale.block);
        if scale.scale_inv.shape != expected {
            return Err(format!(
                "block scales `{}` have shape {:?}, expected {expected:?} (blocks of {bn} x {bk} over {:?})",
                scale.scale_inv.name, scale.scale_inv.shape, self.shape
            ));
        }
        self.scale = Some(Arc::new(scale));
        Ok(self)
    }

    /// The block scales of an FP8 tensor (`None` for every other dtype).
    pub fn block_scale(&self) -> Option<&BlockScale> {
        self.scale.as_deref()
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
    /// An FP8 tensor's scales are sliced with it: the same items of a 3-D tensor's scales, or the
    /// block rows of a matrix's, which needs `range.start` on a block boundary (the loader checks
    /// the slices it makes). Panics if `range` is out of bounds or cuts a block: callers slice
    /// shapes they validated at load time.
    pub fn slice_rows(&self, range: Range<usize>) -> Tensor {
        assert!(
            range.start <= range.end && range.end <= self.rows(),
            "{}: rows {range:?} of {:?}",
            self.name,
            self.shape
        );
        let scale = self.scale.as_ref().map(|s| {
            let scale_rows = if self.shape.len() > 2 {
                range.clone()
            } else {
                let bn = s.block[0];
                assert!(
                    range.start % bn == 0,
                    "{}: rows {range:?} start inside a block of {bn} rows",
                    self.name
                );
                range.start / bn..range.end.div_ceil(bn)
            };
            Arc::new(BlockScale {
                scale_inv: s.scale_inv.slice_rows(scale_rows),
                block: s.block,
            })
        });
        let row_bytes = self.cols() * self.dtype.size();
        let mut shape = self.shape.clone();
        shape[0] = range.len();
        Tensor {
            name: self.name.clone(),
            storage: self.storage.clone(),
            start: self.start + range.start * row_bytes,
            dtype: self.dtype,
            shape,
            scale,
        }
    }

    /// Item `index` along the first dim, with that dim removed (one expert of a fused tensor,
    /// with its plane of block scales).
    pub fn index(&self, index: usize) -> Tensor {
        let mut t = self.slice_rows(index..index + 1);
        t.shape.remove(0);
        if let Some(s) = t.scale.take() {
            let mut scale_inv = s.scale_inv.clone();
            scale_inv.shape.remove(0);
            t.scale = Some(Arc::new(BlockScale {
                scale_inv,
                block: s.block,
            }));
        }
        t
    }

    /// Converts `out.len()` elements starting at element `offset` to f32 (FP8: dequantised with
    /// the block scales). Panics if the range is outside the tensor, or on an FP8 tensor whose
    /// scales were never attached (the checkpoint loader attaches them).
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
            DType::F8E4M3 => self.dequantise(offset, bytes, out),
        }
    }

    /// `out[k] = e4m3(bytes[k]) * scale` for element `offset + k`, one run of elements that share
    /// a scale (a row's stretch inside one block) at a time.
    fn dequantise(&self, offset: usize, bytes: &[u8], out: &mut [f32]) {
        let scale = self
            .scale
            .as_ref()
            .unwrap_or_else(|| panic!("{}: FP8 tensor read without its block scales", self.name));
        let n = self.shape.len();
        let (rows, cols) = (self.shape[n - 2], self.shape[n - 1]);
        let [bn, bk] = scale.block;
        let (scale_rows, scale_cols) = (rows.div_ceil(bn), cols.div_ceil(bk));
        let mut done = 0;
        while done < out.len() {
            let element = offset + done;
            let (matrix, within) = (element / (rows * cols), element % (rows * cols));
            let (r, c) = (within / cols, within % cols);
            let run = (bk - c % bk).min(cols - c).min(out.len() - done);
            let mut s = [0.0f32];
            scale
                .scale_inv
                .read_f32((matrix * scale_rows + r / bn) * scale_cols + c / bk, &mut s);
            for (o, &q) in out[done..done + run]
                .iter_mut()
                .zip(&bytes[done..done + run])
            {
                *o = e4m3_to_f32(q) * s[0];
            }
            done += run;
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

/// The shape of the block scales of a weight of `shape` [.., rows, cols] in blocks of `block`.
pub fn scale_shape(shape: &[usize], block: [usize; 2]) -> Vec<usize> {
    let n = shape.len();
    let mut out = shape.to_vec();
    out[n - 2] = shape[n - 2].div_ceil(block[0]);
    out[n - 1] = shape[n - 1].div_ceil(block[1]);
    out
}

/// Largest finite e4m3 value.
pub const E4M3_MAX: f32 = 448.0;

/// Every e4m3 bit pattern widened to f32 (exact): sign, 4 exponent bits (bias 7), 3 mantissa
/// bits; exponent 0 is subnormal (m * 2^-9); 0x7f and 0xff are NaN and there are no infinities.
static E4M3_TO_F32: [f32; 256] = e4m3_table();

const fn e4m3_table() -> [f32; 256] {
    let mut table = [0.0f32; 256];
    let mut i = 0;
    while i < 256 {
        let (exp, mant) = ((i >> 3) & 0xf, (i & 7) as u32);
        let magnitude = if exp == 0xf && mant == 7 {
            f32::NAN
        } else if exp == 0 {
            mant as f32 / 512.0
        } else {
            f32::from_bits(((exp as u32 + 127 - 7) << 23) | (mant << 20))
        };
        table[i] = if i & 0x80 != 0 { -magnitude } else { magnitude };
        i += 1;
    }
    table
}

/// e4m3 ("fn" variant, as `torch.float8_e4m3fn`) to f32, exact.
#[inline]
pub fn e4m3_to_f32(bits: u8) -> f32 {
    E4M3_TO_F32[bits as usize]
}

/// f32 to e4m3 with round-to-nearest-even, saturating: magnitudes above 448 (infinities
/// included) give +-448, NaN gives 0x7f (with the sign). Below 448 it rounds exactly as
/// `torch`'s and `ml_dtypes`' casts to float8_e4m3fn do.
pub fn f32_to_e4m3(x: f32) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    let abs = bits & 0x7fff_ffff;
    if abs > 0x7f80_0000 {
        return sign | 0x7f;
    }
    let a = f32::from_bits(abs);
    let magnitude = if a < f32::powi(2.0, -6) {
        // Subnormal range: steps of 2^-9; the rounded count 8 is the smallest normal (0x08).
        (a * 512.0).round_ties_even() as u8
    } else {
        // Keep 3 of the 23 mantissa bits, rounding to nearest even; a carry moves the exponent.
        let rounded = (abs + 0x7_ffff + ((abs >> 20) & 1)) >> 20;
        let code = rounded.saturating_sub((127 - 7) << 3);
        code.min(0x7e) as u8
    };
    sign | magnitude
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

    #[test]
    fn e4m3_decodes_every_class() {
        assert_eq!(e4m3_to_f32(0x38), 1.0);
        assert_eq!(e4m3_to_f32(0xc0), -2.0);
        assert_eq!(e4m3_to_f32(0x7e), 448.0);
        assert_eq!(e4m3_to_f32(0xfe), -448.0);
        assert_eq!(e4m3_to_f32(0x08), f32::powi(2.0, -6));
        assert_eq!(e4m3_to_f32(0x01), f32::powi(2.0, -9));
        assert_eq!(e4m3_to_f32(0x07), 7.0 * f32::powi(2.0, -9));
        assert_eq!(e4m3_to_f32(0x80).to_bits(), 0x8000_0000);
        assert!(e4m3_to_f32(0x7f).is_nan() && e4m3_to_f32(0xff).is_nan());
        assert!((0..=255u8).all(|b| e4m3_to_f32(b).is_finite() || b & 0x7f == 0x7f));
    }

    /// Every code round-trips, and every point halfway between two neighbours rounds to the one
    /// with the even mantissa; above 448 saturates.
    #[test]
    fn f32_to_e4m3_rounds_to_nearest_even_and_saturates() {
        for b in (0..=255u8).filter(|b| b & 0x7f != 0x7f) {
            assert_eq!(f32_to_e4m3(e4m3_to_f32(b)), b, "code {b:#04x}");
        }
        for b in 0..0x7eu8 {
            let (lo, hi) = (e4m3_to_f32(b), e4m3_to_f32(b + 1));
            let mid = (lo + hi) / 2.0;
            let even = if b % 2 == 0 { b } else { b + 1 };
            assert_eq!(f32_to_e4m3(mid), even, "halfway {lo} .. {hi}");
            assert_eq!(f32_to_e4m3(-mid), 0x80 | even);
            assert_eq!(f32_to_e4m3(f32::from_bits(mid.to_bits() - 1)), b);
            assert_eq!(f32_to_e4m3(f32::from_bits(mid.to_bits() + 1)), b + 1);
        }
        for big in [449.0, 464.0, 1e6, f32::INFINITY] {
            assert_eq!(f32_to_e4m3(big), 0x7e);
            assert_eq!(f32_to_e4m3(-big), 0xfe);
        }
        assert_eq!(f32_to_e4m3(f32::NAN) & 0x7f, 0x7f);
        assert_eq!(f32_to_e4m3(f32::powi(2.0, -11)), 0x00);
        assert_eq!(f32_to_e4m3(1e-30), 0x00);
    }

    /// A 3-D FP8 tensor with ragged blocks (5 x 7 matrices in 2 x 3 blocks) reads back each
    /// element times its block's scale, through `index` and a block-aligned `slice_rows`.
    #[test]
    fn fp8_reads_dequantise_with_the_right_block_scale() {
        let (e, rows, cols, block) = (2, 5, 7, [2, 3]);
        let q: Vec<u8> = (0..e * rows * cols).map(|i| (i % 0x70) as u8).collect();
        let sshape = scale_shape(&[e, rows, cols], block);
        assert_eq!(sshape, vec![2, 3, 3]);
        let scales: Vec<f32> = (0..18).map(|i| 1.0 + i as f32 / 4.0).collect();
        let scale = BlockScale {
            scale_inv: Tensor::from_f32("t.weight_scale_inv", sshape, &scales),
            block,
        };
        let t = Tensor::from_e4m3_bits("t", vec![e, rows, cols], &q, scale);
        let want = |x: usize, r: usize, c: usize| {
            e4m3_to_f32(q[(x * rows + r) * cols + c]) * scales[(x * 3 + r / 2) * 3 + c / 3]
        };
        let all = t.to_f32_vec();
        for x in 0..e {
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(all[(x * rows + r) * cols + c], want(x, r, c));
                }
            }
        }
        // Reads that start and end mid-row and mid-block.
        let mut part = vec![0.0; 17];
        t.read_f32(40, &mut part);
        assert_eq!(part, all[40..57]);
        let one = t.index(1);
        assert_eq!(one.block_scale().unwrap().scale_inv.shape(), &[3, 3]);
        let tail = one.slice_rows(2..5);
        assert_eq!(tail.block_scale().unwrap().scale_inv.shape(), &[2, 3]);
        let got = tail.to_f32_vec();
        for r in 0..3 {
            for c in 0..cols {
                assert_eq!(got[r * cols + c], want(1, r + 2, c));
            }
        }
        assert_eq!(tail.bytes(), &q[(rows + 2) * cols..2 * rows * cols]);
    }

    #[test]
    fn block_scales_that_do_not_fit_are_refused() {
        let q = vec![0u8; 12];
        let fp8 = |shape: Vec<usize>| {
            Tensor::new(
                "w",
                Arc::new(Storage::Owned(q.clone())),
                0,
                DType::F8E4M3,
                shape,
            )
        };
        let scale = |shape: Vec<usize>, block| BlockScale {
            scale_inv: Tensor::from_f32("s", shape.clone(), &vec![1.0; shape.iter().product()]),
            block,
        };
        assert!(fp8(vec![3, 4])
            .with_block_scale(scale(vec![2, 1], [2, 4]))
            .is_ok());
        let err = fp8(vec![3, 4])
            .with_block_scale(scale(vec![1, 1], [2, 4]))
            .unwrap_err();
        assert!(err.contains("expected [2, 1]"), "{err}");
        assert!(fp8(vec![12])
            .with_block_scale(scale(vec![1], [2, 4]))
            .is_err());
        assert!(fp8(vec![3, 4])
            .with_block_scale(scale(vec![1, 1], [0, 4]))
            .is_err());
        let f16_scale = BlockScale {
            scale_inv: Tensor::new(
                "s",
                Arc::new(Storage::Owned(vec![0; 4])),
                0,
                DType::F16,
                vec![2, 1],
            ),
            block: [2, 4],
        };
        assert!(fp8(vec![3, 4])
            .with_block_scale(f16_scale)
            .unwrap_err()
            .contains("F16"));
        let bf16 = Tensor::from_bf16_bits("b", vec![3, 4], &[0; 12]);
        assert!(bf16.with_block_scale(scale(vec![2, 1], [2, 4])).is_err());
    }
}
